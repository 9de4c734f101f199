"""Whether the machine's CPUs were there for a run: netrepro-cpu-probe beside it.

The emulator records how late it was, the end hosts how late they were; neither can say why.
The probe (native/probe) keeps one thread pinned to each CPU under SCHED_FIFO, one priority
above the emulator's, waking on a fixed period: a CPU the hypervisor did not run, or one
stuck in the kernel, shows as a late wake-up on that CPU, at the same monotonic time as the
emulator's stall. A stall the probe did not see was our processes', not the CPUs'.
(analysis/cpu_probe.py lines the two up.)
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

from core.processes import stop_child

STATS = "cpu-probe.json"
READY = "cpu-probe-ready"
STDERR = "cpu-probe-stderr.txt"
READY_TIMEOUT_S = 5.0
STOP_GRACE_S = 5.0


class CpuProbeFailed(RuntimeError):
    """The probe did not come up, or did not write its stats."""


class CpuProbe:
    """Started with start(); stop() ends it and leaves cpu-probe.json in `run_dir`."""

    def __init__(self, binary: Path, run_dir: Path) -> None:
        self.binary = binary
        self.run_dir = run_dir
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> "CpuProbe":
        ready = self.run_dir / READY
        ready.unlink(missing_ok=True)
        with open(self.run_dir / STDERR, "wb") as err:
            self.process = subprocess.Popen(
                [str(self.binary), "--stats", str(self.run_dir / STATS), "--ready", str(ready)],
                stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.exists():
            code = self.process.poll()
            if code is not None:
                raise CpuProbeFailed(f"netrepro-cpu-probe exited with status {code} before it "
                                     f"was ready: {self._stderr_tail()}")
            if time.monotonic() > deadline:
                stop_child(self.process, grace_s=STOP_GRACE_S)
                self.process = None
                raise CpuProbeFailed(f"netrepro-cpu-probe not ready after "
                                     f"{READY_TIMEOUT_S:g} s: {self._stderr_tail()}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """SIGTERM, so it writes its stats; raises if it wrote none (said, not hidden)."""
        if self.process is None:
            return
        process, self.process = self.process, None
        code = stop_child(process, grace_s=STOP_GRACE_S)
        (self.run_dir / READY).unlink(missing_ok=True)
        # The probe creates the file empty at start (a bad path fails early): empty is none.
        stats = self.run_dir / STATS
        written = stats.is_file() and stats.stat().st_size > 0
        if code != 0 or not written:
            raise CpuProbeFailed(f"netrepro-cpu-probe ended with status {code} and "
                                 f"{'' if written else 'no '}{STATS}: {self._stderr_tail()}")

    def _stderr_tail(self, lines: int = 3) -> str:
        try:
            text = (self.run_dir / STDERR).read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no output)"
        return " | ".join(text[-lines:]) or "(no output)"
