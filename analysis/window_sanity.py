"""Is the kernel's window in a run believable? A bound on snd_cwnd and ssthresh from tcp_probe.

A Linux sender grows cwnd only while it is cwnd-limited (tcp_is_cwnd_limited:
in slow start up to twice what was in flight), and every ssthresh it sets is
derived from such a cwnd (Reno: cwnd / 2, Cubic: 0.7 cwnd, undo: the earlier
value, HyStart: cwnd). So neither can exceed a small multiple of the largest
window the flow ever had in flight. A run whose trace shows a cwnd or an
ssthresh of `factor` (10) times that or more did not run the algorithm under
test: the kernel got a value no algorithm computed (one eBPF RFC 3517 run
entered recovery with ssthresh and cwnd 2183148773, the low half of a kernel
text address, and both flows of a two-way sprout-fig7 run on the eBPF Hybla got
that ssthresh at a timeout; see docs/prr-recoveries.md). Such a run is invalid
with that reason, never plotted as a result. BBR sets cwnd from its model
rather than by growth (about 2-2.9 x its bandwidth x min-RTT estimate, plus at
most 100 ms of its rate for ACK aggregation), and its bandwidth samples come
from what it had in flight, so it stays within a few times its flight too.

The reference window is the larger of the initial window the run set (IW10
here, Linux's TCP_INIT_CWND) and the most segments ever in flight, snd_nxt -
snd_una (sequence space, modulo 2^32) over the MSS; neither is taken from the
cwnd under test. TCP_INFINITE_SSTHRESH (0x7fffffff, the
threshold before the first loss) is not a window and is skipped.

One congestion control grows faster than its flight: Hybla's slow start adds
2^rho - 1 segments per ACK (rho = RTT / 25 ms, the shift capped at 16), so a
long-RTT Hybla flow can reach its cwnd clamp, 65535 (tcp_hybla.c and
native/bpf/hybla.bpf.c set it), within a few ACKs whatever it had in flight.
For such a control the bound is the larger of the factor's and the most it can
set (`CC_CEILINGS`); a stale kernel word like 2183148773 is far above either.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tcp_probe import ProbeTrace

ABSURD_FACTOR = 10
INFINITE_SSTHRESH = 0x7FFFFFFF
# Segments: Linux's TCP_INIT_CWND, which every PRR run sets on its route (initcwnd 10) and
# the trace path leaves in force (it sets no initcwnd).
INITIAL_WINDOW = 10
MIN_MSS = 536  # RFC 9293's default send MSS: the most segments a byte count can mean
# The most cwnd a congestion control can set whatever its flight (see above), by the name a
# run requests it by (the kernel's and our eBPF one alike).
HYBLA_CWND_CLAMP = 65535
CC_CEILINGS = {"hybla": HYBLA_CWND_CLAMP}


@dataclass(frozen=True)
class WindowVerdict:
    reference: int  # segments: max(initial window, largest flight)
    limit: int  # values at or above this are absurd
    max_cwnd: int
    max_ssthresh: int | None  # None: ssthresh was never set (always infinite)
    first_bad_time_s: float | None  # probe clock (CLOCK_MONOTONIC)
    first_bad: str  # "snd_cwnd 2183148773 (ssthresh 2183148773, state 3)"
    ceiling: int = 0  # the most the congestion control can set whatever its flight (0: none)

    @property
    def valid(self) -> bool:
        return self.first_bad_time_s is None

    def reason(self, flow: str = "") -> str:
        """Why the trace is no measurement ("" when it is one); `flow` names the flow."""
        if self.valid:
            return ""
        where = f" in the {flow}" if flow else ""
        ceiling = (f" and above {self.ceiling}, the most its congestion control can set"
                   if self.ceiling and self.limit > ABSURD_FACTOR * self.reference else "")
        return (f"absurd kernel window{where}: {self.first_bad} at probe time "
                f"{self.first_bad_time_s:.6f} s, >= {ABSURD_FACTOR} x the largest window "
                f"the flow had ({self.reference} segments){ceiling}; the kernel got a value "
                "no congestion control computed (docs/prr-recoveries.md)")


def check_windows(probe: ProbeTrace, mss: int | None, initial_window: int = INITIAL_WINDOW,
                  factor: int = ABSURD_FACTOR, ceiling: int = 0) -> WindowVerdict:
    """The verdict on one trace; `mss` in bytes (None: the smallest MSS, a looser bound);
    `ceiling`: the most the congestion control can set whatever its flight (CC_CEILINGS)."""
    if len(probe) == 0:
        return WindowVerdict(initial_window, max(factor * initial_window, ceiling + 1), 0,
                             None, None, "", ceiling)
    seg = mss if mss and mss > 0 else MIN_MSS
    flight_bytes = (probe.snd_nxt - probe.snd_una) % (1 << 32)
    flight = int(np.max(-(-flight_bytes // seg)))
    reference = max(initial_window, flight, 1)
    limit = max(factor * reference, ceiling + 1)
    ssthresh = np.where(probe.ssthresh == INFINITE_SSTHRESH, 0, probe.ssthresh)
    bad = np.flatnonzero((probe.snd_cwnd >= limit) | (ssthresh >= limit))
    finite = probe.ssthresh[probe.ssthresh != INFINITE_SSTHRESH]
    max_ss = int(np.max(finite)) if finite.size else None
    if bad.size == 0:
        return WindowVerdict(reference, limit, int(np.max(probe.snd_cwnd)), max_ss, None, "",
                             ceiling)
    i = int(bad[0])
    what = (f"snd_cwnd {int(probe.snd_cwnd[i])} (ssthresh {int(probe.ssthresh[i])}, "
            f"state {int(probe.ca_state[i])})")
    return WindowVerdict(reference, limit, int(np.max(probe.snd_cwnd)), max_ss,
                         float(probe.time_s[i]), what, ceiling)


def ceiling_of(cc: str | None) -> int:
    """The most `cc` (as a run requests it: "hybla", not "bpf_hybla") can set whatever its
    flight; 0 for a control whose window follows its flight."""
    return CC_CEILINGS.get(cc or "", 0)
