"""Sprout endpoints that never start or die mid-run fail the run with the reason.

A failed Sprout run must never become a zero-throughput point: it leaves
FAILED.json (with its partial artifacts) and no metrics.json or DONE.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from app.executor import execute
from core.paths import REPO_ROOT
from core.processes import pid_alive
from core.runspec import RunSpec
from schemes.sprout import SproutScheme
from tests.integration.active_record import pid_of, wait_for_process

REPRO = str(REPO_ROOT / "repro")


def _spec(trace: Path, duration_s: float) -> RunSpec:
    return RunSpec(experiment="itest", scheme="sprout", data_trace=str(trace),
                   ack_trace=str(trace), delay_ms=20, queue="infinite", duration_s=duration_s)


def _assert_failed_without_result(run_dir: Path) -> None:
    assert (run_dir / "FAILED.json").exists()
    assert not (run_dir / "DONE").exists() and not (run_dir / "metrics.json").exists()


def test_receiver_that_never_answers_fails_the_run(paths, traces, store, fixed_trace,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A receiver that runs but never sends a forecast: the sender hears nothing.
    monkeypatch.setattr(SproutScheme, "receiver_args", lambda self, ends: ["sleep", "60"])
    outcome = execute(_spec(fixed_trace, 4), store, paths, traces)
    assert not outcome.ok
    assert "sprout-sender exited with status 3" in outcome.reason
    assert "no forecast ever arrived" in outcome.reason
    _assert_failed_without_result(outcome.path)


def test_receiver_dying_mid_run_fails_the_run_and_tears_down(tmp_path, fixed_trace) -> None:
    env = dict(os.environ, NETREPRO_RESULTS=str(tmp_path))
    args = [REPRO, "one", "--scheme", "sprout", "--data-trace", str(fixed_trace),
            "--ack-trace", str(fixed_trace), "--duration", "12", "--json"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    record = wait_for_process(proc.pid, "sprout-receiver")
    receiver = pid_of(record, "sprout-receiver")
    time.sleep(3)  # forecasts have been flowing: the sender is mid-run
    os.kill(receiver, signal.SIGKILL)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 1, err
    result = json.loads(out.strip().splitlines()[-1])
    assert not result["ok"]
    assert "sprout-receiver failed" in result["reason"]
    _assert_failed_without_result(Path(result["run_dir"]))
    for pid in record["processes"]:
        assert not pid_alive(int(pid)), f"process {pid} of the failed run is still alive"
