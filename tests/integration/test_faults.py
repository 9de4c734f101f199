"""Bad input and faults: each must fail clearly, tear down, and leave the rest intact."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core.paths import REPO_ROOT
from core.processes import pid_alive
from tests.integration.active_record import pid_of, wait_for_process

REPRO = str(REPO_ROOT / "repro")


def _repro(*args: str, env_results: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NETREPRO_RESULTS=str(env_results))
    return subprocess.run([REPRO, *args], capture_output=True, text=True, env=env,
                          timeout=120, **kwargs)


def _one_args(trace: str, *extra: str) -> list[str]:
    return ["one", "--scheme", "fixed-window", "--window", "5", "--data-trace", trace,
            "--ack-trace", trace, "--duration", "2", "--json", *extra]


def test_unknown_scheme_exits_2_listing_the_known_ones(tmp_path, fixed_trace) -> None:
    r = _repro("one", "--scheme", "nosuch", "--data-trace", str(fixed_trace), "--ack-trace",
               str(fixed_trace), "--duration", "2", env_results=tmp_path)
    assert r.returncode == 2
    assert "unknown scheme 'nosuch'" in r.stderr and "fixed-window" in r.stderr


def test_malformed_trace_names_file_and_line(tmp_path) -> None:
    bad = tmp_path / "bad.trace"
    bad.write_text("1\n2\nthree\n4\n")
    r = _repro(*_one_args(str(bad)), env_results=tmp_path)
    assert r.returncode == 2
    assert f"{bad}:3" in r.stderr


def test_missing_trace_says_where_it_looked(tmp_path) -> None:
    r = _repro(*_one_args("No-Such-Trace.down"), env_results=tmp_path)
    assert r.returncode == 2
    assert "No-Such-Trace.down" in r.stderr


def test_bad_queue_is_a_usage_error(tmp_path, fixed_trace) -> None:
    r = _repro(*_one_args(str(fixed_trace), "--queue", "droptail:pkts=5"), env_results=tmp_path)
    assert r.returncode == 2 and "bad queue" in r.stderr


def test_not_root_exits_3(tmp_path, fixed_trace) -> None:
    fixed_trace.chmod(0o644)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        sys.executable, "-B", REPRO, *_one_args(str(fixed_trace))],
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, NETREPRO_RESULTS=str(tmp_path)))
    assert r.returncode == 3, r.stderr
    assert "root" in r.stderr


def test_emulator_dying_mid_run_fails_the_run_and_tears_down(tmp_path, fixed_trace) -> None:
    env = dict(os.environ, NETREPRO_RESULTS=str(tmp_path))
    args = [REPRO, "one", "--scheme", "fixed-window", "--window", "20", "--data-trace",
            str(fixed_trace), "--ack-trace", str(fixed_trace), "--duration", "15", "--json"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    record = wait_for_process(proc.pid, "netrepro-link")
    emulator = pid_of(record, "netrepro-link")
    time.sleep(2)
    os.kill(emulator, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    result = json.loads(out.strip().splitlines()[-1])
    assert not result["ok"]
    assert "link emulator exited" in result["reason"]
    failed = Path(result["run_dir"])
    assert (failed / "FAILED.json").exists() and (failed / "data.log").exists()
    for pid in record["processes"]:
        assert not pid_alive(int(pid)), f"process {pid} of the failed run is still alive"
