"""`repro run prr-fig2 --cluster local:2`: a PRR cell goes to a worker that runs Open
vSwitch and the controller the run was planned with, and comes home recording both."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.paths import REPO_ROOT

pytest.importorskip("distributed")


def test_a_prr_cell_runs_on_a_worker_with_its_planned_controller(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "repro"), "run", "prr-fig2", "--quick",
         "--pattern", "base", "--recovery", "prr-kernel", "--cluster", "local:2"],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, NETREPRO_RESULTS=str(results)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 runs came home" in done.stdout
    options = json.loads((results / "prr-fig2" / "options.json").read_text())
    planned = options["options"]["controller"]
    assert planned in ("pox", "os-ken")
    (run,) = [p for p in (results / "prr-fig2" / "runs").iterdir() if (p / "DONE").exists()]
    meta = json.loads((run / "meta.json").read_text())
    assert meta["worker"]["host"]
    assert json.loads((run / "spec.json").read_text())["options"]["controller"] == planned
    assert meta["controller"]["name"] == planned  # the controller that really served
