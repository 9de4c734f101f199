"""The limits untrusted code (a submitted controller) is built and run under.

Each build and each trial's sender runs in a box of its own (schemes/submission/box.py):
a user of its own, its own PID, mount, IPC and UTS namespaces, and these
limits. The per-process ones are rlimits (`prlimit`): CPU seconds, address
space, the size of one file, the user's processes, open files, no core dumps, no locked
memory, no POSIX message queue. The box's
own (its cgroup where the machine has one: schemes/submission/box_cgroup.py): every
process of the box together within `processes` and `memory_bytes` plus its
writable space, and at most `cpu_fraction` of one CPU. Its writable folders
(/work and /tmp) share `disk_bytes` of memory (a tmpfs): nothing it writes
reaches a disk. Wall-clock time-outs are the caller's.

Outside the box, the emulated link's queue bounds what a sender can make the emulator
hold: `QUEUE_BYTES` (UNTRUSTED_QUEUE, the contest's run option for every submission).
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
    open_files: int = 256  # per process: a compiler needs a few dozen, a sender a handful

    def describe(self) -> dict[str, float]:
        return {"cpu_s": self.cpu_s, "memory_mib": self.memory_bytes >> 20,
                "file_mib": self.file_bytes >> 20, "processes": self.processes,
                "wall_s": self.wall_s, "disk_mib": self.disk_bytes >> 20,
                "cpu_fraction": self.cpu_fraction, "open_files": self.open_files,
                "locked_memory_bytes": 0, "posix_message_queue_bytes": 0}


BUILD_LIMITS = Limits(cpu_s=120, memory_bytes=2 << 30, file_bytes=256 << 20, processes=64,
                      wall_s=180, disk_bytes=512 << 20)


def run_limits(duration_s: float) -> Limits:
    """For a sender that should run `duration_s` (the executor stops it after the span)."""
    return Limits(cpu_s=int(duration_s) + 60, memory_bytes=1 << 30, file_bytes=64 << 20,
                  processes=64, wall_s=duration_s + 60, disk_bytes=128 << 20)


# The contest's sender caps its window at 10,000 datagrams (student_adapter.cc), each 1504
# bytes on the emulator's basis: 15 MB in flight. A queue of 64 MiB, over four times that,
# holds whatever a controller that keeps its window queues (and its one-per-timeout sends
# beyond it through tens of seconds of outage), so its score is the infinite queue's. A
# sender that fills it is flooding: the emulator stops reading it until the queue has room
# (core/queue_spec.py, `untrusted`), so what it sends beyond is lost (its own score), the
# emulator's memory stays under the bound and its work at the link's rate. The emulator runs
# as root outside every box: without this, what a box sends is queued without end.
WINDOW_CAP_DATAGRAMS = 10_000
QUEUE_BYTES = 64 << 20
UNTRUSTED_QUEUE = f"untrusted:bytes={QUEUE_BYTES}"


def signal_name(returncode: int) -> str | None:
    """'SIGSEGV' for a process killed by signal 11 (returncode -11), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
