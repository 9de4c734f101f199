"""Ctrl-C during a matrix, then a rerun: nothing lost, nothing done twice."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core.results import DONE

HELPER = Path(__file__).parent / "helpers" / "tiny_matrix.py"


def _start(trace: Path, results: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(HELPER), str(trace)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, NETREPRO_RESULTS=str(results)))


def _last_json(out: str) -> dict:
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_interrupt_then_resume(tmp_path, fixed_trace) -> None:
    results = tmp_path / "results"
    runs = results / "itest-tiny" / "runs"
    proc = _start(fixed_trace, results)
    deadline = time.monotonic() + 60
    while not list(runs.glob(f"*/{DONE}")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the first run never finished"
        time.sleep(0.2)
    # Interrupt the second run in the middle of its measurement: once its emulator is up
    # (a fixed sleep raced the child's start-up on a loaded machine).
    pool = results / "runs"
    while not list(pool.glob(".tmp-*/link-ready")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline + 60, "the second run never started measuring"
        time.sleep(0.1)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    out, err = proc.communicate(timeout=60)
    first = _last_json(out)
    assert first["interrupted"] and first["succeeded"] == 1, err
    done = list(runs.glob(f"*/{DONE}"))
    assert len(done) == 1
    first_done_mtime = done[0].stat().st_mtime
    failed = results / "itest-tiny" / "failed"
    # Once on a loaded machine the folder was missing; say what there was instead.
    assert failed.is_dir(), (sorted(str(p.relative_to(results)) for p in results.rglob("*")
                                    if p.name in (DONE, "FAILED.json", "link-ready")
                                    or p.name.startswith(".tmp-")), out, err)
    interrupted = list(failed.iterdir())
    assert interrupted, "the interrupted run's artifacts were not kept"
    reasons = [json.loads((p / "FAILED.json").read_text())["reason"] for p in interrupted]
    assert any("interrupted" in r for r in reasons)
    assert not list(runs.glob(".tmp-*")), "a temporary run folder was left behind"

    # A half-written run (no DONE) must be ignored and redone, not trusted.
    half = runs / "fixed-window-window8-half"
    half.mkdir()
    (half / "metrics.json").write_text("{")

    proc = _start(fixed_trace, results)
    out, err = proc.communicate(timeout=120)
    second = _last_json(out)
    assert second == {"succeeded": 2, "failed": 0, "skipped": 1, "interrupted": False}, err
    assert done[0].stat().st_mtime == first_done_mtime, "a finished run was redone"
    assert len(list(runs.glob(f"*/{DONE}"))) == 3
    assert not half.exists()
