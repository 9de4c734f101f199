"""The omniscient protocol on a trace: the ceiling of every leaderboard, and the
reference for Sprout's self-inflicted delay.

The omniscient sender knows the future: a full packet arrives at the bottleneck
exactly 1 ms before each delivery opportunity (a packet can only use an
opportunity strictly after it arrived, so 1 ms is the least queueing delay the
link allows), and every opportunity is used.

- Byte basis: the mahimahi one, like our logs: each opportunity carries one
  1504-byte packet (a 1500-byte IP packet + 4), so the omniscient throughput is
  the link's capacity as `analysis.metrics` computes it.
- Window: with `duration_ms=None` ("once") one pass of the trace, [0, last value]
  ms, so the duration is the last value; otherwise the trace loops (period = its
  last value, as mahimahi does) and the opportunities in [0, duration_ms) count.
- 95% end-to-end delay: `analysis.metrics.signal_delay_per_ms` on that synthetic
  departure stream (delay 1 ms each), element int(0.95 * M), plus the fixed
  one-way delay D. It exceeds D + 1 ms because of the trace's outages.
- On a run's own ms (`axis_ms`): the signal delay is defined only from a run's
  first to its last delivered packet's arrival, so a run that sends nothing
  before a final outage leaves that outage out. Its reference is then the
  omniscient signal delay on exactly those ms: at ms t, the wait for the next
  opportunity after t (`least_delay_per_ms`, which equals the per-ms values
  above on the omniscient's own ms). No packet arriving at t can do better, so
  a run's self-inflicted delay on its own ms is never negative.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.metrics import LinkMetrics, MetricsError, contest_score, p95, signal_delay_per_ms
from core.traces import load_trace

OPPORTUNITY_BYTES = 1504
MIN_QUEUE_DELAY_MS = 1


@dataclass(frozen=True)
class OmniscientResult:
    """Rates in Mbit/s, delays in ms; `score` as the contest computes it."""

    trace: str
    duration_ms: int
    looped: bool
    opportunities: int
    throughput_mbps: float
    p95_signal_delay_ms: float
    fixed_delay_ms: float
    p95_e2e_delay_ms: float
    score: float | None
    axis_ms: tuple[int, int] | None = None  # the run's ms the delay was taken on, if any

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def opportunity_times(trace: np.ndarray, duration_ms: int | None) -> np.ndarray:
    """Opportunity times (ms) in the window: one pass, or looped over [0, duration_ms)."""
    trace = np.asarray(trace, dtype=np.int64)
    if trace.size == 0 or trace[-1] <= 0:
        raise MetricsError("a trace needs at least one timestamp and a nonzero last value")
    if duration_ms is None:
        return trace
    if duration_ms <= 0:
        raise MetricsError(f"duration {duration_ms} ms must be positive (or None for once)")
    period = int(trace[-1])
    passes = -(-duration_ms // period) + 1  # enough wraps to pass the end
    times = (trace[None, :] + period * np.arange(passes, dtype=np.int64)[:, None]).ravel()
    return times[times < duration_ms]


def least_delay_per_ms(trace: np.ndarray, duration_ms: int | None, first_ms: int,
                       last_ms: int) -> np.ndarray:
    """For each ms t in [first_ms, last_ms]: the next opportunity after t, minus t.

    The opportunities are those the link plays (one pass, or looped); the next one
    may lie past the window's end, as it does for a run's packet near the end.
    """
    if last_ms < first_ms or first_ms < 0:
        raise MetricsError(f"signal-delay ms [{first_ms}, {last_ms}] is not a range from 0 up")
    trace = np.asarray(trace, dtype=np.int64)
    horizon = None if duration_ms is None else max(duration_ms, last_ms + 1) + int(trace[-1])
    times = opportunity_times(trace, horizon)
    axis = np.arange(first_ms, last_ms + 1, dtype=np.int64)
    following = np.searchsorted(times, axis, side="right")
    if following[-1] >= times.size:
        raise MetricsError(f"no opportunity after {last_ms} ms in one pass of the trace "
                           f"(last at {int(times[-1])} ms): the run's log and the trace "
                           "do not belong together")
    return times[following] - axis


def omniscient(trace: np.ndarray | Path | str, fixed_delay_ms: float,
               duration_ms: int | None = None,
               axis_ms: tuple[int, int] | None = None) -> OmniscientResult:
    """The omniscient protocol's throughput and 95% end-to-end delay on a trace;
    with `axis_ms`, the delay is taken on those ms only (a run's own, see above)."""
    name = "<array>"
    if isinstance(trace, (str, Path)):
        name = str(trace)
        trace = load_trace(trace)
    if fixed_delay_ms < 0:
        raise MetricsError(f"fixed delay {fixed_delay_ms} ms is negative")
    times = opportunity_times(trace, duration_ms)
    if times.size == 0:
        raise MetricsError(f"{name}: no delivery opportunity in the first {duration_ms} ms")
    window_ms = int(trace[-1]) if duration_ms is None else int(duration_ms)
    throughput = 8.0 * OPPORTUNITY_BYTES * times.size / (window_ms / 1000.0) / 1e6
    if axis_ms is None:
        delays = np.full(times.size, MIN_QUEUE_DELAY_MS, dtype=np.int64)
        signal = float(p95(signal_delay_per_ms(times - MIN_QUEUE_DELAY_MS, delays)[1]))
    else:
        signal = float(p95(least_delay_per_ms(trace, duration_ms, *axis_ms)))
    e2e = signal + float(fixed_delay_ms)
    return OmniscientResult(
        trace=name, duration_ms=window_ms, looped=duration_ms is not None,
        opportunities=int(times.size), throughput_mbps=throughput,
        p95_signal_delay_ms=signal, fixed_delay_ms=float(fixed_delay_ms),
        p95_e2e_delay_ms=e2e, score=contest_score(throughput, e2e),
        axis_ms=None if axis_ms is None else (int(axis_ms[0]), int(axis_ms[1])),
    )


def self_inflicted_delay_ms(scheme: LinkMetrics | float, reference: OmniscientResult) -> float:
    """Sprout's self-inflicted delay: the scheme's 95% end-to-end delay minus the
    omniscient protocol's on the same trace, window and fixed delay (ms)."""
    scheme_e2e = scheme.p95_e2e_delay_ms if isinstance(scheme, LinkMetrics) else float(scheme)
    if isinstance(scheme, LinkMetrics) and scheme.fixed_delay_ms != reference.fixed_delay_ms:
        raise MetricsError(f"the scheme's fixed delay ({scheme.fixed_delay_ms} ms) differs from "
                           f"the omniscient reference's ({reference.fixed_delay_ms} ms); "
                           "compute the reference with the run's fixed delay")
    return scheme_e2e - reference.p95_e2e_delay_ms
