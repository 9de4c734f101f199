"""How much CPU time the hypervisor took from this virtual machine over an interval.

On a shared VM, stolen time is what stalls the emulator for milliseconds even
under real-time scheduling; runs and benchmarks record it beside the
emulator's lateness so a late run can be told apart from an overloaded one.
"""
from __future__ import annotations

from pathlib import Path

PROC_STAT = Path("/proc/stat")


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

    def percent(self) -> float | None:
        end = cpu_times(self.stat)
        if self.start is None or end is None or end[1] <= self.start[1]:
            return None
        return 100.0 * (end[0] - self.start[0]) / (end[1] - self.start[1])
