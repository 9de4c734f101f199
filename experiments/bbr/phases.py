"""BBR's phases over a run, from the kernel's own record of its gains (socket-samples.csv).

analysis/socket_samples.py reads each sample's mode from BBR's pacing and cwnd gains; here
the samples become phases: maximal runs of samples with the same mode and pacing gain, each
from its first sample to the first sample of the next phase (the kernel changed phase at
most one sampling interval before it was seen). ProbeBW's gain cycle shows as phases of
gain 5/4, 3/4 and 1; a cycle starts at each 5/4 phase.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.socket_samples import (BBR_UNIT, PROBE_BW, PROBE_RTT, STARTUP, Connection,
                                     bbr_mode)

UP, DOWN, CRUISE = 320, 192, 256  # ProbeBW's pacing gains, x256: 5/4, 3/4, 1


@dataclass(frozen=True)
class Phase:
    start_s: float
    end_s: float
    mode: str  # analysis/socket_samples.py's STARTUP, DRAIN, PROBE_BW, PROBE_RTT or ""
    pacing_gain: float  # as a ratio (1.25, 0.75, 1.0, 2.885, ...)

    @property
    def label(self) -> str:
        if self.mode == PROBE_BW:
            return f"ProbeBW {self.pacing_gain:g}"
        names = {"startup": "Startup", "drain": "Drain", PROBE_RTT: "ProbeRTT"}
        return names.get(self.mode, "unknown")


def phases(c: Connection, offset_s: float = 0.0) -> list[Phase]:
    """The connection's phases from its first Startup sample on, times less `offset_s` (the
    log's base, say); empty for a connection without BBR's record. Before Startup the gains
    are not yet BBR's (a connection still opening reports zeros, then 1 and 1 until its
    first ACK-driven update, which would read as ProbeRTT)."""
    pacing, cwnd = c["bbr_pacing_gain"], c["bbr_cwnd_gain"]
    keep = np.isfinite(pacing) & np.isfinite(cwnd)
    started = np.nonzero(keep & (bbr_mode(pacing, cwnd) == STARTUP))[0]
    if started.size == 0:
        return []
    keep[:started[0]] = False
    times = c.time_s[keep] - offset_s
    pacing, modes = pacing[keep], bbr_mode(pacing[keep], cwnd[keep])
    out: list[Phase] = []
    start = 0
    for i in range(1, len(times) + 1):
        if i == len(times) or modes[i] != modes[start] or pacing[i] != pacing[start]:
            end = times[i] if i < len(times) else times[-1]
            out.append(Phase(float(times[start]), float(end), str(modes[start]),
                             float(pacing[start]) / BBR_UNIT))
            start = i
    return out


def first_probe_bw_s(found: list[Phase]) -> float | None:
    """When BBR was first seen in ProbeBW (Startup and Drain over), None if never."""
    return next((p.start_s for p in found if p.mode == PROBE_BW), None)


def probe_rtt_episodes(found: list[Phase]) -> list[Phase]:
    return [p for p in found if p.mode == PROBE_RTT]


def cycle_starts(found: list[Phase]) -> list[float]:
    """The start of every 5/4 phase."""
    return [p.start_s for p in found if p.mode == PROBE_BW and round(p.pacing_gain * BBR_UNIT)
            == UP]


def gain_phases(found: list[Phase], gain: int) -> list[Phase]:
    """ProbeBW's phases of one pacing gain (x256: UP, DOWN, CRUISE)."""
    return [p for p in found if p.mode == PROBE_BW and round(p.pacing_gain * BBR_UNIT) == gain]


def cycle_periods(found: list[Phase], start_s: float, end_s: float) -> list[float]:
    """The time between consecutive 5/4 phases that both start in [start_s, end_s), when
    only ProbeBW lies between them (a ProbeRTT in between restarts the cycle)."""
    periods = []
    bw = [p for p in found if start_s <= p.start_s < end_s]
    ups = [i for i, p in enumerate(bw) if p.mode == PROBE_BW and
           round(p.pacing_gain * BBR_UNIT) == UP]
    for a, b in zip(ups, ups[1:]):
        if all(p.mode == PROBE_BW for p in bw[a:b]):
            periods.append(bw[b].start_s - bw[a].start_s)
    return periods


def inside(found: list[Phase], times_s: np.ndarray, margin_s: float = 0.0,
           mode: str = PROBE_RTT) -> np.ndarray:
    """Bool per time: within a phase of `mode`, or `margin_s` after its end."""
    out = np.zeros(np.shape(times_s), dtype=bool)
    for p in found:
        if p.mode == mode:
            out |= (times_s >= p.start_s) & (times_s < p.end_s + margin_s)
    return out
