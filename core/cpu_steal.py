"""How much CPU time the hypervisor took from this virtual machine over an interval, and
how much was left idle.

On a shared VM, stolen time is what stalls the emulator for milliseconds even
under real-time scheduling; runs and benchmarks record it beside the
emulator's lateness so a late run can be told apart from an overloaded one. The idle
share says how close a run came to the machine's limit (a run with almost no idle time
left measured the machine as much as the network).
"""
from __future__ import annotations

from pathlib import Path

PROC_STAT = Path("/proc/stat")


def cpu_idle(stat: Path = PROC_STAT) -> int | None:
    """Idle jiffies (idle + iowait) over all CPUs since boot; None where unreadable."""
    try:
        first = stat.read_text().splitlines()[0].split()
        return int(first[4]) + int(first[5]) if first[0] == "cpu" else None
    except (OSError, IndexError, ValueError):
        return None


def cpu_times(stat: Path = PROC_STAT) -> tuple[int, int] | None:
    """(steal, total) jiffies over all CPUs since boot; None where /proc/stat lacks them."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if first[0] != "cpu" or len(first) < 9:
        return None
    values = [int(v) for v in first[1:]]
    # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
    # already counted in user and nice.
    return values[7], sum(values[:8])


class StealMeter:
    """Started at construction; percent() is the share of CPU time stolen since."""

    def __init__(self, stat: Path = PROC_STAT) -> None:
        self.stat = stat
        self.start = cpu_times(stat)
        self.start_idle = cpu_idle(stat)

    def idle_percent(self) -> float | None:
        """The share of all CPU time left idle since the start."""
        end, idle = cpu_times(self.stat), cpu_idle(self.stat)
        if self.start is None or end is None or end[1] <= self.start[1] or \
                idle is None or self.start_idle is None:
            return None
        return 100.0 * (idle - self.start_idle) / (end[1] - self.start[1])

    def percent(self) -> float | None:
        end = cpu_times(self.stat)
        if self.start is None or end is None or end[1] <= self.start[1]:
            return None
        return 100.0 * (end[0] - self.start[0]) / (end[1] - self.start[1])
