"""Is the kernel's window in a run believable? A bound on snd_cwnd and ssthresh from tcp_probe.

A Linux sender grows cwnd only while it is cwnd-limited (tcp_is_cwnd_limited:
in slow start up to twice what was in flight), and every ssthresh it sets is
derived from such a cwnd (Reno: cwnd / 2, Cubic: 0.7 cwnd, undo: the earlier
value, HyStart: cwnd). So neither can exceed a small multiple of the largest
window the flow ever had in flight. A run whose trace shows a cwnd or an
ssthresh of `factor` (10) times that or more did not run the recovery under
test: the kernel got a value no algorithm computed (one eBPF RFC 3517 run
entered recovery with ssthresh and cwnd 2183148773, the low half of a kernel
text address; see docs/prr-recoveries.md). Such a run is invalid with that
reason, never plotted as a result.

The reference window is the larger of the initial window the run set (IW10
here, Linux's TCP_INIT_CWND) and the most segments ever in flight, snd_nxt -
snd_una (sequence space, modulo 2^32) over the MSS; neither is taken from the
cwnd under test. TCP_INFINITE_SSTHRESH (0x7fffffff, the
threshold before the first loss) is not a window and is skipped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tcp_probe import ProbeTrace

ABSURD_FACTOR = 10
INFINITE_SSTHRESH = 0x7FFFFFFF
INITIAL_WINDOW = 10  # segments: route initcwnd of every PRR run (TCP_INIT_CWND)
MIN_MSS = 536  # RFC 9293's default send MSS: the most segments a byte count can mean


@dataclass(frozen=True)
class WindowVerdict:
    reference: int  # segments: max(initial window, largest flight)
    limit: int  # values at or above this are absurd
    max_cwnd: int
    max_ssthresh: int | None  # None: ssthresh was never set (always infinite)
    first_bad_time_s: float | None  # probe clock (CLOCK_MONOTONIC)
    first_bad: str  # "snd_cwnd 2183148773 (ssthresh 2183148773, state 3)"

    @property
    def valid(self) -> bool:
        return self.first_bad_time_s is None

    def reason(self) -> str:
        if self.valid:
            return ""
        return (f"absurd kernel window: {self.first_bad} at probe time "
                f"{self.first_bad_time_s:.6f} s, >= {ABSURD_FACTOR} x the largest window "
                f"the flow had ({self.reference} segments); the kernel got a value no "
                "recovery computed (docs/prr-recoveries.md)")


def check_windows(probe: ProbeTrace, mss: int | None, initial_window: int = INITIAL_WINDOW,
                  factor: int = ABSURD_FACTOR) -> WindowVerdict:
    """The verdict on one trace; `mss` in bytes (None: the smallest MSS, a looser bound)."""
    if len(probe) == 0:
        return WindowVerdict(initial_window, factor * initial_window, 0, None, None, "")
    seg = mss if mss and mss > 0 else MIN_MSS
    flight_bytes = (probe.snd_nxt - probe.snd_una) % (1 << 32)
    flight = int(np.max(-(-flight_bytes // seg)))
    reference = max(initial_window, flight, 1)
    limit = factor * reference
    ssthresh = np.where(probe.ssthresh == INFINITE_SSTHRESH, 0, probe.ssthresh)
    bad = np.flatnonzero((probe.snd_cwnd >= limit) | (ssthresh >= limit))
    finite = probe.ssthresh[probe.ssthresh != INFINITE_SSTHRESH]
    max_ss = int(np.max(finite)) if finite.size else None
    if bad.size == 0:
        return WindowVerdict(reference, limit, int(np.max(probe.snd_cwnd)), max_ss, None, "")
    i = int(bad[0])
    what = (f"snd_cwnd {int(probe.snd_cwnd[i])} (ssthresh {int(probe.ssthresh[i])}, "
            f"state {int(probe.ca_state[i])})")
    return WindowVerdict(reference, limit, int(np.max(probe.snd_cwnd)), max_ss,
                         float(probe.time_s[i]), what)
