"""The real netrepro-cpu-probe beside a run: it comes up pinned and real-time on every CPU,
and a run's metrics say what it saw."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from analysis.cpu_probe import cpu_probe_metrics
from core.cpu_probe import STATS, CpuProbe
from core.paths import ProjectPaths


def test_the_probe_sees_every_cpu_real_time_and_pinned(paths: ProjectPaths,
                                                       tmp_path: Path) -> None:
    probe = CpuProbe(paths.native_binary("probe", "netrepro-cpu-probe"), tmp_path).start()
    time.sleep(0.5)
    probe.stop()
    stats = json.loads((tmp_path / STATS).read_text())
    assert stats["scheduling"] == "SCHED_FIFO priority 11"
    assert sorted(int(c) for c in stats["cpus"]) == sorted(os.sched_getaffinity(0))
    for cpu in stats["cpus"].values():
        assert cpu["wakeups"] >= 10 and cpu["off_cpu_wakeups"] == 0
    metrics = cpu_probe_metrics(tmp_path, {})
    assert metrics["cpu_probe"] is True and metrics["cpu_stall_max_us"] is not None


def test_a_probe_whose_starter_dies_goes_with_it(paths: ProjectPaths, tmp_path: Path) -> None:
    """A run killed outright leaves no probe behind (PR_SET_PDEATHSIG)."""
    binary = paths.native_binary("probe", "netrepro-cpu-probe")
    pid_file = tmp_path / "pid"
    starter = os.fork()
    if starter == 0:  # the run: starts the probe, then is killed; never returns to pytest
        try:
            probe = CpuProbe(binary, tmp_path).start()
            if probe.process is not None:
                pid_file.write_text(str(probe.process.pid))
            time.sleep(60)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 10
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    probe_pid = int(pid_file.read_text())
    os.kill(starter, 9)
    os.waitpid(starter, 0)
    deadline = time.monotonic() + 5
    # The probe creates its stats file empty at start, and fills it when it stops.
    while not (tmp_path / STATS).read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert json.loads((tmp_path / STATS).read_text())["program"] == "netrepro-cpu-probe"
    state = Path(f"/proc/{probe_pid}/stat")
    assert not state.exists() or state.read_text().split(") ")[1][0] in "ZX"
