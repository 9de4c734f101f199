"""tcpdump on one interface of a Mininet host, its pcap kept as a run artifact.

Headers only (a 128-byte snap length holds Ethernet, IP and TCP with every
option), written packet by packet (-U) so nothing is lost at teardown, as
root (-Z root: the run's folder belongs to root). The capture is started
before the traffic and is ready only once tcpdump says it is listening; it is
stopped with SIGINT, after which tcpdump reports how many packets it
captured and how many the kernel dropped: a capture that dropped packets
cannot vouch for what crossed the wire, and the analysis says so.
"""
from __future__ import annotations

import logging
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core.errors import Unavailable
from core.processes import stop_child
from core.endpoints import MininetHost

log = logging.getLogger(__name__)

SNAPLEN = 128
READY_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 5.0
_COUNT = re.compile(r"(\d+) packets? (captured|received by filter|dropped by kernel)")


@dataclass(frozen=True)
class CaptureStats:
    captured: int | None
    received_by_filter: int | None
    dropped_by_kernel: int | None

    @staticmethod
    def parse(stderr: str) -> "CaptureStats":
        counts = {kind: int(n) for n, kind in _COUNT.findall(stderr)}
        return CaptureStats(counts.get("captured"), counts.get("received by filter"),
                            counts.get("dropped by kernel"))


def tcpdump_path() -> str:
    found = shutil.which("tcpdump", path="/usr/bin:/usr/sbin:/bin:/sbin")
    if found is None:
        raise Unavailable("tcpdump is not installed: run ./setup/install.sh "
                          "(or apt-get install tcpdump)")
    return found


class PacketCapture:
    """One tcpdump process; `start()` returns once it listens, `stop()` returns its facts."""

    def __init__(self, host: MininetHost, interface: str, path: Path, bpf_filter: str = "tcp",
                 on_process: Callable[[int, str], None] = lambda pid, marker: None,
                 immediate: bool = True, buffer_kib: int | None = None) -> None:
        if path.suffix != ".pcap":
            # Distributions' AppArmor profile for tcpdump lets it write *.pcap files only.
            raise ValueError(f"capture files must end in .pcap: {path}")
        self.host = host
        self.interface = interface
        self.path = path
        self.bpf_filter = bpf_filter
        self.on_process = on_process
        # Packet by packet (the default) keeps all up to a crash; a timing measurement asks
        # for neither, so tcpdump does not wake for every frame on the CPUs it measures.
        self.immediate = immediate
        self.buffer_kib = buffer_kib
        self.stderr_path = path.with_suffix(".tcpdump.stderr")
        self.proc: subprocess.Popen[bytes] | None = None
        self.facts: dict[str, Any] | None = None

    def start(self) -> None:
        args = [tcpdump_path(), "-i", self.interface, "-w", str(self.path), "-s", str(SNAPLEN),
                "-n", "-Z", "root", *(["-U", "--immediate-mode"] if self.immediate else []),
                *(["-B", str(self.buffer_kib)] if self.buffer_kib else []),
                *self.bpf_filter.split()]
        with open(self.stderr_path, "wb") as err:
            self.proc = self.host.popen(args, stdout=subprocess.DEVNULL, stderr=err)
        self.on_process(self.proc.pid, "tcpdump")
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "listening on" not in self._stderr():
            if self.proc.poll() is not None:
                raise RuntimeError(f"tcpdump on {self.host.name}:{self.interface} exited: "
                                   f"{self._stderr().strip()[-300:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"tcpdump on {self.host.name}:{self.interface} not "
                                   f"listening after {READY_TIMEOUT_S:g} s")
            time.sleep(0.02)

    def stop(self) -> dict[str, Any]:
        """SIGINT, wait, read tcpdump's counts (idempotent)."""
        if self.facts is not None:
            return self.facts
        if self.proc is None:
            self.facts = {"status": "not started"}
            return self.facts
        stop_child(self.proc, STOP_TIMEOUT_S, first=signal.SIGINT)  # SIGINT: tcpdump's counts
        stats = CaptureStats.parse(self._stderr())
        self.facts = {"file": self.path.name, "host": self.host.name,
                      "interface": self.interface, "filter": self.bpf_filter,
                      "snaplen": SNAPLEN, "captured": stats.captured,
                      "received_by_filter": stats.received_by_filter,
                      "dropped_by_kernel": stats.dropped_by_kernel,
                      "exit_status": self.proc.returncode}
        return self.facts

    def _stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""


def clock_offset(samples: int = 5) -> dict[str, float]:
    """CLOCK_REALTIME - CLOCK_MONOTONIC now: moves tcp_probe times onto the captures' clock.

    The closest-bracketed of a few readings (realtime, monotonic, realtime).
    """
    best: tuple[float, float] | None = None
    for _ in range(samples):
        a = time.clock_gettime(time.CLOCK_REALTIME)
        m = time.clock_gettime(time.CLOCK_MONOTONIC)
        b = time.clock_gettime(time.CLOCK_REALTIME)
        if best is None or b - a < best[1]:
            best = ((a + b) / 2 - m, b - a)
    assert best is not None
    return {"realtime_minus_monotonic_s": best[0], "uncertainty_s": best[1]}
