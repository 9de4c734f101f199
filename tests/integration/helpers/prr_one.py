"""Run one PRR-path transfer in its own process; print what happened as JSON.

    cd REPO && /usr/bin/python3 -m tests.integration.helpers.prr_one CONTROLLER PLAN OUT_DIR
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from controllers.drop_plan import DropPlan
from core.active_runs import ActiveRun
from core.paths import ProjectPaths
from tests.integration.helpers.prr_transfer import run_one
from runkinds.switched_path.network import SwitchedPath, SwitchedPathConfig
from topologies.guarded_network import new_prefix


def main() -> int:
    controller, plan, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    active = ActiveRun(ProjectPaths().state_dir / "active", new_prefix())
    try:
        cfg = SwitchedPathConfig(plan=DropPlan.parse(plan), controller=controller)
        with SwitchedPath(cfg, log_dir=out, active=active) as path:
            result = run_one(path, out)
            result["prefix"] = active.prefix
            result["port"] = path.controller.port if path.controller else None
    finally:
        active.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
