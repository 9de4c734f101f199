"""Runs on a local Dask cluster (`--cluster local:2`): a worker killed mid-run, Ctrl-C.

A worker killed with a run in flight: the scheduler gives the run to another
worker (allowed-failures), the matrix completes with every run committed once,
the killed attempt's partial folder is not a result. A run whose workers are
killed more often than allowed-failures: KilledWorker, the run is failed with
that reason, the others finish, nothing of it lands in results/. Ctrl-C at the client: the
runs in flight stop on their workers (no run process left), and a rerun redoes
none of the finished runs.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.results import DONE
from core.runspec import RunSpec

pytest.importorskip("distributed")

HELPER = Path(__file__).parent / "helpers" / "cluster_matrix.py"
EXPERIMENT = "itest-cluster"
RUNS = 4
SECONDS = 8


def _start(trace: Path, results: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(HELPER), str(trace), str(SECONDS), str(RUNS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            env=dict(os.environ, NETREPRO_RESULTS=str(results), **env))


def _last_json(out: str) -> dict:
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def _run_processes() -> dict[int, str]:
    """pid -> command line of this experiment's run processes (`repro _execute`)."""
    found = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "_execute" in cmd and f"--experiment {EXPERIMENT}" in cmd:
                found[int(proc.name)] = cmd
    return found


def _wait_for_run_process(proc: subprocess.Popen[str], timeout: float = 90) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    while True:
        running = _run_processes()
        if running:
            return next(iter(running.items()))
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no run started on a worker"
        time.sleep(0.2)


def _wait_for_attempt(proc: subprocess.Popen[str], window: int, not_pids: set[int],
                      timeout: float = 90) -> int:
    """The run process of a new attempt of the run with this window."""
    deadline = time.monotonic() + timeout
    while True:
        for pid, cmd in _run_processes().items():
            if pid not in not_pids and _window(cmd) == window:
                return pid
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"the run of window {window} did not start again"
        time.sleep(0.2)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _window(cmd: str) -> int:
    spec = json.loads(cmd.split("--spec-json ", 1)[1])
    return int(spec["params"]["window"])


def test_a_killed_worker_loses_nothing_and_duplicates_nothing(tmp_path, fixed_trace) -> None:
    results = tmp_path / "results"
    proc = _start(fixed_trace, results)
    child, cmd = _wait_for_run_process(proc)
    time.sleep(3.0)  # mid-measurement
    worker = _parent(child)
    assert worker != proc.pid, "the run process is not on a worker process"
    os.kill(worker, signal.SIGKILL)
    out, err = proc.communicate(timeout=240)
    summary = _last_json(out)
    assert summary["succeeded"] == RUNS and summary["failed"] == 0, (summary, err[-2000:])
    assert summary["rescheduled"] >= 1, summary
    assert summary["duplicates"] == 0 and summary["committed"] == RUNS, summary

    pool = [p for p in (results / "runs").iterdir() if p.is_dir()]
    assert len(pool) == RUNS and all((p / DONE).is_file() for p in pool)
    windows = {}
    for run in pool:
        meta = json.loads((run / "meta.json").read_text())
        windows[meta["spec"]["params"]["window"]] = meta["worker"]
    assert sorted(windows) == list(range(2, 2 + RUNS))
    # The run that was in flight on the killed worker came home from another process.
    assert windows[_window(cmd)]["pid"] != worker
    assert not (results / EXPERIMENT / "failed").exists(), "a killed attempt became a result"
    assert not list((results / "runs").glob(".tmp-*"))
    time.sleep(2.0)
    assert not _run_processes(), "a run process outlived its killed worker"


def test_a_run_whose_workers_die_beyond_allowed_failures_fails_alone(
        tmp_path, fixed_trace) -> None:
    """allowed-failures 1: the run's worker is killed, the run goes to another worker
    process, that one is killed too: KilledWorker. The run is failed with that reason,
    the other runs finish, and no folder of it is left in results/."""
    results = tmp_path / "results"
    proc = _start(fixed_trace, results, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1")
    child, cmd = _wait_for_run_process(proc)
    window = _window(cmd)
    doomed = RunSpec.from_dict(json.loads(cmd.split("--spec-json ", 1)[1]))
    killed: list[int] = []
    for attempt in (1, 2):
        if attempt == 2:
            child = _wait_for_attempt(proc, window, not_pids={child})
        time.sleep(2.0)  # mid-measurement
        worker = _parent(child)
        assert worker != proc.pid and worker not in killed, (worker, killed)
        os.kill(worker, signal.SIGKILL)
        killed.append(worker)
    out, err = proc.communicate(timeout=300)
    summary = _last_json(out)
    assert summary["failed"] == 1 and summary["succeeded"] == RUNS - 1, (summary, err[-2000:])
    reason = summary["reasons"][0]
    assert "KilledWorker" in reason and "allowed-failures (1)" in reason, reason
    assert summary["killed_worker"] == 1 and summary["committed"] == RUNS - 1, summary
    assert "up to 1 times (the scheduler's allowed-failures)" in out  # said before the runs

    pool = [p for p in (results / "runs").iterdir() if p.is_dir()]
    assert len(pool) == RUNS - 1 and all((p / DONE).is_file() for p in pool)
    windows = sorted(json.loads((p / "meta.json").read_text())["spec"]["params"]["window"]
                     for p in pool)
    assert window not in windows and len(windows) == RUNS - 1
    assert not [p for p in results.rglob("*") if doomed.run_id() in p.name], \
        "the run that kept killing its workers left a folder in results/"
    assert not (results / EXPERIMENT / "failed").exists()
    assert not list(results.rglob(".tmp-*"))
    time.sleep(2.0)
    assert not _run_processes(), "a run process outlived its killed worker"


def test_ctrl_c_stops_the_runs_on_their_workers_then_resume(tmp_path, fixed_trace) -> None:
    results = tmp_path / "results"
    pool = results / "runs"
    proc = _start(fixed_trace, results)
    deadline = time.monotonic() + 120
    while not list(pool.glob(f"*/{DONE}")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no run came home"
        time.sleep(0.2)
    _wait_for_run_process(proc)
    time.sleep(2.0)
    os.kill(proc.pid, signal.SIGINT)  # the client only: the workers hear it from the client
    out, err = proc.communicate(timeout=120)
    first = _last_json(out)
    assert first["interrupted"], (first, err[-2000:])
    assert not _run_processes(), "runs kept going on their workers after Ctrl-C"
    done = {p.name: (p / DONE).stat().st_mtime for p in pool.iterdir() if (p / DONE).is_file()}
    assert 1 <= len(done) < RUNS, first

    proc = _start(fixed_trace, results)
    out, err = proc.communicate(timeout=240)
    second = _last_json(out)
    assert second["skipped"] == len(done), (second, err[-2000:])
    assert second["succeeded"] == RUNS - len(done) and second["failed"] == 0, second
    for name, mtime in done.items():
        assert (pool / name / DONE).stat().st_mtime == mtime, f"{name} was redone"
    assert len([p for p in pool.iterdir() if (p / DONE).is_file()]) == RUNS


def test_local_cluster_listens_on_loopback_only(paths, traces) -> None:
    """local:N: the scheduler, the workers and their HTTP servers, all on 127.0.0.1."""
    from app.cluster.backend import open_cluster
    backend = open_cluster("local:2", paths, traces, jobs=2)
    try:
        ours = {str(os.getpid())} | set(subprocess.run(
            ["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split())
        listening = [line.split()[3] for line in subprocess.run(
            ["ss", "-ltnpH"], capture_output=True, text=True).stdout.splitlines()
            if any(f"pid={pid}," in line for pid in ours)]
    finally:
        backend.close()
    assert len(listening) >= 4, listening  # scheduler + 2 workers + their HTTP servers
    assert all(addr.startswith("127.0.0.1:") for addr in listening), listening
