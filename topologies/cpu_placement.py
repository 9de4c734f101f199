"""Where a fast link's emulator runs, and where its end hosts' received frames are processed.

The emulator writes each departing frame into a veth, and the kernel receives it on the other
end inside that write: without steering, the receiving host's IP and TCP stack, the bridge of
a shared bottleneck and the sender's reply to an ACK all run inside the emulator's send, on
its CPU, before its next departure. At 100 Mbit/s a departure is due every 120 us and must be
within 12 us. So a link fast enough for the emulator to spin before its sends (native/link:
above 24 Mbit/s) gets a CPU of its own for its timing loop (`netrepro-link --cpu`), and the
interfaces it sends into steer their received frames to the other CPUs (RPS,
kernel/receive_steering.py). Measured on a 2-core VM, five BBR flows at 100 Mbit/s, 8 s:
departure gaps within 10% of schedule 86.0-92.2% unplaced, 96.4-97.2% placed; p99 lateness
29-867 us against 17-60 us (docs/benchmarks.md).

CPUs are claimed machine-wide with a lock file each, held while the link lives (the kernel
drops it with the process), so links side by side never share an emulator CPU, and steering
goes only to CPUs no emulator holds. When no such CPU is left, the link is not placed, and
says why: the run records it either way.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TextIO

from topologies.link_side import LinkSide

# Where the emulator starts to spin before its sends (native/link/link_emulator.cc: 10% of a
# 1504-byte opportunity under 50 us): the rates whose departures a stalled send spoils.
PLACE_ABOVE_MBPS = 12032.0 / 500.0
CLAIMS_DIR = Path(tempfile.gettempdir()) / "netrepro-cpu-claims"


@dataclass
class Placement:
    """The emulator's CPU and the CPUs its hosts' received frames go to; or why not placed."""

    emulator_cpu: int | None = None
    host_rx_cpus: list[int] = field(default_factory=list)
    why_not: str | None = None
    _claim: TextIO | None = field(default=None, repr=False)

    @property
    def placed(self) -> bool:
        return self.emulator_cpu is not None

    def facts(self) -> dict[str, Any]:
        """What meta.json records."""
        if not self.placed:
            return {"placed": False, "why_not": self.why_not}
        return {"placed": True, "emulator_cpu": self.emulator_cpu,
                "host_rx_cpus": list(self.host_rx_cpus)}

    def release(self) -> None:
        if self._claim is not None:
            self._claim.close()  # closing the descriptor drops the lock
            self._claim = None


def refused_for(provider: dict[str, Any]) -> str | None:
    """Why a run whose congestion control `provider` describes (a scheme's `prepare()`) must
    not be placed, or None: an eBPF congestion control's ssthresh came back as a stale kernel
    word in every DCTCP run placed with its ACKs steered (6 of 6, docs/prr-recoveries.md)."""
    if provider.get("cc_provider") == "ebpf":
        return (f"{provider.get('cc_requested')} is an eBPF congestion control: its ssthresh "
                "is not safe with the hosts' frames steered (docs/prr-recoveries.md)")
    return None


def fastest_fixed_mbps(sides: Iterable[LinkSide]) -> float | None:
    """The highest fixed rate (steps included) of the sides; None when every side is a trace."""
    rates = [side.mean_rate_mbps() for side in sides if side.trace is None]
    return max(rates) if rates else None


def _try_claim(cpu: int, claims_dir: Path) -> TextIO | None:
    claims_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
    handle = open(claims_dir / f"cpu{cpu}.lock", "a")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def _claimed_by_others(cpu: int, claims_dir: Path) -> bool:
    probe = _try_claim(cpu, claims_dir)
    if probe is None:
        return True
    probe.close()
    return False


def place(sides: Iterable[LinkSide], realtime: bool, *, allowed: set[int] | None = None,
          claims_dir: Path = CLAIMS_DIR, steering: str | None = None) -> Placement:
    """Claim a CPU for a link's emulator when the link needs one. `steering` is None when the
    kernel can steer received frames, else why not (kernel/receive_steering.available)."""
    fastest = fastest_fixed_mbps(sides)
    if not realtime:
        return Placement(why_not="the emulator is not real-time (a rate above its real-time "
                                 "limit)")
    if fastest is None or fastest <= PLACE_ABOVE_MBPS:
        return Placement(why_not=f"no fixed rate above {PLACE_ABOVE_MBPS:.0f} Mbit/s: "
                                 "inline delivery is well within a departure's tolerance")
    if steering is not None:
        return Placement(why_not=steering)
    cpus = sorted(allowed if allowed is not None else os.sched_getaffinity(0))
    if len(cpus) < 2:
        return Placement(why_not=f"one CPU only ({cpus})")
    for cpu in reversed(cpus):  # the last first: CPU 0 takes most of the machine's interrupts
        claim = _try_claim(cpu, claims_dir)
        if claim is None:
            continue
        rest = [c for c in cpus if c != cpu and not _claimed_by_others(c, claims_dir)]
        if not rest:
            claim.close()
            break
        return Placement(emulator_cpu=cpu, host_rx_cpus=rest, _claim=claim)
    return Placement(why_not=f"every CPU of {cpus} but at most one is held by the emulator "
                             "of a link side by side: none is left for the end hosts")
