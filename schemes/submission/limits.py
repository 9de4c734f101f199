"""The limits untrusted code (a submitted controller) is built and run under.

Each build and each trial's sender runs in a box of its own (schemes/submission/box.py):
a user of its own, its own PID, mount, IPC and UTS namespaces, and these
limits. The per-process ones are rlimits (`prlimit`): CPU seconds, address
space, the size of one file, the user's processes, no core dumps. The box's
own (its cgroup where the machine has one: schemes/submission/box_cgroup.py): every
process of the box together within `processes` and `memory_bytes` plus its
writable space, and at most `cpu_fraction` of one CPU. Its writable folders
(/work and /tmp) share `disk_bytes` of memory (a tmpfs): nothing it writes
reaches a disk. Wall-clock time-outs are the caller's.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    cpu_s: int
    memory_bytes: int
    file_bytes: int
    processes: int
    wall_s: float
    disk_bytes: int
    cpu_fraction: float = 1.0  # of one CPU, for the whole box

    def describe(self) -> dict[str, float]:
        return {"cpu_s": self.cpu_s, "memory_mib": self.memory_bytes >> 20,
                "file_mib": self.file_bytes >> 20, "processes": self.processes,
                "wall_s": self.wall_s, "disk_mib": self.disk_bytes >> 20,
                "cpu_fraction": self.cpu_fraction}


BUILD_LIMITS = Limits(cpu_s=120, memory_bytes=2 << 30, file_bytes=256 << 20, processes=64,
                      wall_s=180, disk_bytes=512 << 20)


def run_limits(duration_s: float) -> Limits:
    """For a sender that should run `duration_s` (the executor stops it after the span)."""
    return Limits(cpu_s=int(duration_s) + 60, memory_bytes=1 << 30, file_bytes=64 << 20,
                  processes=64, wall_s=duration_s + 60, disk_bytes=128 << 20)


def signal_name(returncode: int) -> str | None:
    """'SIGSEGV' for a process killed by signal 11 (returncode -11), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
