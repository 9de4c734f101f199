"""A network that cannot start fails its run at once, with Mininet's or mnexec's own words.

Before, a host shell that had exited (mnexec refusing its namespaces, as in a chroot) left
Mininet reading its pty for ever: a pass printed nothing and never ended.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from mininet.log import lg
from mininet.net import Mininet

from core.paths import REPO_ROOT
from topologies.network_start import (GuardedHost, NetworkStartError, ShellExited,
                                      entering_hint, start_deadline)

REPRO = str(REPO_ROOT / "repro")
REFUSAL = "mnexec: refused by this test (namespaces not allowed)"


@pytest.fixture
def refusing_path(tmp_path: Path) -> str:
    """A PATH whose first mnexec exits at once, as a refused namespace makes it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mnexec"
    fake.write_text(f"#!/bin/sh\necho '{REFUSAL}' >&2\nexit 1\n")
    fake.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def test_a_run_whose_mnexec_refuses_fails_fast_naming_it(tmp_path: Path, fixed_trace: Path,
                                                         refusing_path: str) -> None:
    env = dict(os.environ, PATH=refusing_path, NETREPRO_RESULTS=str(tmp_path / "results"))
    start = time.monotonic()
    r = subprocess.run([REPRO, "one", "--scheme", "fixed-window", "--window", "5",
                        "--data-trace", str(fixed_trace), "--ack-trace", str(fixed_trace),
                        "--duration", "2", "--json"],
                       capture_output=True, text=True, env=env, timeout=120)
    took = time.monotonic() - start
    assert r.returncode == 1, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert not result["ok"]
    assert "ShellExited" in result["reason"] and "exited with status 1" in result["reason"]
    assert REFUSAL in result["reason"]
    assert took < 30, f"took {took:.1f} s"


def test_a_pass_whose_mnexec_refuses_goes_on_and_ends(tmp_path: Path,
                                                      refusing_path: str) -> None:
    env = dict(os.environ, PATH=refusing_path, NETREPRO_RESULTS=str(tmp_path / "results"))
    start = time.monotonic()
    r = subprocess.run([REPRO, "run", "contest-warmup-a", "--quick", "--jobs", "3"],
                       capture_output=True, text=True, env=env, timeout=300)
    took = time.monotonic() - start
    out = r.stdout + r.stderr
    assert "contest-warmup-a: 0 ok, 6 failed" in out, out[-2000:]
    assert out.count(REFUSAL) >= 6
    failed = list((tmp_path / "results" / "contest-warmup-a" / "failed").glob("*/FAILED.json"))
    assert len(failed) == 6
    assert all(REFUSAL in json.loads(f.read_text())["reason"] for f in failed)
    assert took < 120, f"took {took:.1f} s"


@pytest.mark.parametrize("experiment, runs", [("dctcp", 2), ("buffer-sizing", 4)])
def test_every_kinds_network_fails_fast_when_mnexec_refuses(tmp_path: Path, refusing_path: str,
                                                            experiment: str, runs: int) -> None:
    """The shared bottleneck built plain Mininet nodes with no deadline: a refused namespace
    hung `./repro run dctcp --quick` until it was killed. Every kind's network is now a
    GuardedNetwork (topologies/guarded_network.py)."""
    env = dict(os.environ, PATH=refusing_path, NETREPRO_RESULTS=str(tmp_path / "results"))
    start = time.monotonic()
    r = subprocess.run([REPRO, "run", experiment, "--quick"], capture_output=True, text=True,
                       env=env, timeout=300)
    took = time.monotonic() - start
    out = r.stdout + r.stderr
    assert f"{experiment}: 0 ok, {runs} failed" in out, out[-2000:]
    failed = list((tmp_path / "results" / experiment / "failed").glob("*/FAILED.json"))
    assert len(failed) == runs
    assert all(REFUSAL in json.loads(f.read_text())["reason"] for f in failed)
    assert took < 30 * runs, f"took {took:.1f} s"


def test_doctor_names_the_refusal_and_the_fix(refusing_path: str) -> None:
    r = subprocess.run([REPRO, "doctor"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PATH=refusing_path))
    assert r.returncode == 1
    line = next(x for x in r.stdout.splitlines() if "Mininet hosts (mnexec -n)" in x)
    assert line.startswith("[FAIL]") and REFUSAL in line
    assert "--privileged" in r.stdout


def test_a_host_whose_shell_dies_later_fails_its_next_command_at_once() -> None:
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
    host = net.addHost(f"nrt{os.getpid() % 10000}", cls=GuardedHost)
    try:
        assert host.cmd("echo alive").strip() == "alive"
        host.shell.kill()
        host.shell.wait()
        start = time.monotonic()
        with pytest.raises(ShellExited, match="exited with status -9"):
            host.cmd("echo never")
        assert time.monotonic() - start < 5
    finally:
        host.terminate()


def test_mininet_giving_up_is_an_error_with_its_words() -> None:
    with pytest.raises(NetworkStartError, match="Mininet gave up: .*moveIntf: x-eth0 not"):
        with start_deadline(10, "the test network"):
            lg.error("*** Error: moveIntf: x-eth0 not successfully moved to x\n")
            raise SystemExit(1)


def test_a_set_up_past_its_deadline_fails_naming_it() -> None:
    start = time.monotonic()
    with pytest.raises(NetworkStartError, match="the test network did not come up within 0.5 s"):
        with start_deadline(0.5, "the test network"):
            time.sleep(10)
    assert time.monotonic() - start < 3


def test_a_path_missing_in_a_host_but_present_here_is_explained(tmp_path: Path) -> None:
    said = f"{tmp_path}: No such file or directory"
    assert "not for a program started in a Mininet host" in entering_hint(said)
    assert "chroot" in entering_hint(said)
    assert entering_hint(f"{tmp_path}/absent: No such file or directory") == ""
    assert entering_hint("Operation not permitted") == ""
