"""Faults around the shared eBPF registration, end to end through `./repro`.

A registration of bpf_vegas is global to the machine while runs are separate
processes: two runs starting together must share one, and a run killed
outright must leave nothing that `./repro clean` cannot remove. These use
the real records (/run/netrepro/cc, shared by every checkout), as a user's runs do.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from core.paths import REPO_ROOT, ProjectPaths
from core.processes import pid_alive
from kernel.tcp_probe_recorder import find_tracefs

REPRO = str(REPO_ROOT / "repro")
STATE = REPO_ROOT / "var"
CC_STATE = ProjectPaths().cc_state_dir
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def _vegas_args(seconds: int) -> list[str]:
    return [REPRO, "one", "--scheme", "vegas", "--cc-impl", "ebpf", "--data-trace", "rate:12",
            "--ack-trace", "rate:12", "--delay-ms", "5", "--duration", str(seconds), "--json"]


def _registered() -> bool:
    return "bpf_vegas" in AVAILABLE.read_text().split()


def _require_unregistered() -> None:
    subprocess.run([REPRO, "clean"], capture_output=True, timeout=60, check=True)
    assert not _registered(), "bpf_vegas is registered by a live run: run this test alone"


def test_two_runs_starting_at_once_share_one_registration(tmp_path: Path) -> None:
    _require_unregistered()
    procs = [subprocess.Popen(_vegas_args(4), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=dict(os.environ, NETREPRO_RESULTS=str(tmp_path / n)))
             for n in ("first", "second")]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["cc_used"] for r in results] == ["bpf_vegas", "bpf_vegas"]
    ids = set()
    for r in results:
        meta = json.loads((Path(r["run_dir"]) / "meta.json").read_text())
        found = re.search(r"\(id (\d+)\)", meta["provider"]["cc_detail"])
        assert found is not None, meta["provider"]["cc_detail"]
        ids.add(found.group(1))
    # Each started while the other held it, so both name the one struct_ops id.
    assert len(ids) == 1, ids
    assert not _registered(), "the last run to leave unregisters"
    assert not (CC_STATE / "bpf_vegas").exists()


def test_registration_of_a_killed_run_is_removed_by_clean(tmp_path: Path) -> None:
    _require_unregistered()
    proc = subprocess.Popen(_vegas_args(30), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env=dict(os.environ, NETREPRO_RESULTS=str(tmp_path)))
    try:
        probe_record = _wait_for_sender(proc.pid)
        assert _registered()
        run = json.loads(next(p for p in (STATE / "active").glob("*.json")
                              if json.loads(p.read_text())["owner"] == proc.pid).read_text())
        os.kill(proc.pid, signal.SIGKILL)  # no teardown at all: the worst case
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _registered(), "a killed run cannot unregister"
    assert (CC_STATE / "bpf_vegas" / "holders" / str(proc.pid)).exists()

    clean = subprocess.run([REPRO, "clean"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert re.search(r"congestion control: unregistered bpf_vegas \(id \d+\); its 1 "
                     r"holder\(s\) had exited", clean.stdout), clean.stdout
    assert not _registered()
    assert not (CC_STATE / "bpf_vegas").exists()
    tracefs = find_tracefs()
    assert tracefs is not None
    assert not (tracefs / "instances" / probe_record["instance"]).exists()
    for pid in run["processes"]:
        assert not pid_alive(int(pid)), f"process {pid} of the killed run is still alive"


def _wait_for_sender(owner: int, timeout_s: float = 30) -> dict:
    """The tcp_probe record of `owner`'s run: it exists once the TCP sender is starting."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in (STATE / "tcp-probe").glob("netrepro-*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if record["owner"] == owner:
                time.sleep(1)  # let iperf3 connect through the registered bpf_vegas
                return record
        time.sleep(0.1)
    raise AssertionError(f"run {owner} never started its TCP sender")
