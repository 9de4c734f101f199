"""Run one PRR-path transfer in its own process; print what happened as JSON.

    /usr/bin/python3 tests/integration/helpers/prr_one.py CONTROLLER PLAN OUT_DIR
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from controllers.drop_plan import DropPlan  # noqa: E402
from core.active_runs import ActiveRun  # noqa: E402
from core.paths import ProjectPaths  # noqa: E402
from prr_transfer import run_one  # noqa: E402
from topologies.prr_path import PrrPath, PrrPathConfig  # noqa: E402
from topologies.trace_path import new_prefix  # noqa: E402


def main() -> int:
    controller, plan, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    active = ActiveRun(ProjectPaths().state_dir / "active", new_prefix())
    try:
        cfg = PrrPathConfig(plan=DropPlan.parse(plan), controller=controller)
        with PrrPath(cfg, log_dir=out, active=active) as path:
            result = run_one(path, out)
            result["prefix"] = active.prefix
            result["port"] = path.controller.port if path.controller else None
    finally:
        active.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
