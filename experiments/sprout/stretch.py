"""A quick run's stretch of a trace pair: the part of the drive most like the whole of it.

A quick run cannot play a whole 17-minute trace, and the first minute of a drive is not
representative (the paper's scorer skips it; on AT&T LTE and T-Mobile 3G it holds long
outages). So a quick run plays one stretch of each trace pair, the same for every scheme:
from an offset into the traces, a warm-up that is played but not scored, then the scored
part. The offset is chosen from the link alone, never from any scheme's result: among
offsets every `step` seconds (the stretch inside both traces, after their first minute), the
one whose scored part is most like the scored part of a full run (the whole trace after its
first minute), in both directions at once, by capacity and by the omniscient protocol's
delay: the smallest sum over both directions of |ln(capacity / full capacity)| +
|ln(omniscient delay / full omniscient delay)|. The delay compared is the 75th percentile of
the omniscient protocol's per-ms end-to-end delay, not its 95th: one long outage in a trace
(the AT&T LTE uplink's puts its 95th percentile at 31 s) would otherwise pick the stretch with
the worst outage, whatever its capacity (1.7 Mbit/s of the AT&T LTE downlink's 5.2), where
the 75th percentile still tells a stretch with outages from one without.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.metrics import MetricsError
from analysis.omniscient import MIN_QUEUE_DELAY_MS, OPPORTUNITY_BYTES

# Offsets start after the first minute: the paper never scores it, and a full run warms up in it.
FIRST_OFFSET_MS = 60_000
STEP_MS = 10_000
DELAY_QUANTILE = 0.75


@dataclass(frozen=True)
class LinkShape:
    """The omniscient protocol over a window of a trace: its capacity, and the 75th percentile
    of its per-ms end-to-end delay."""

    capacity_mbps: float
    e2e_ms: float


def _shape(times: np.ndarray, start_ms: int, end_ms: int, fixed_delay_ms: float) -> LinkShape:
    """The omniscient protocol on the opportunities in [start, end) of one pass of a trace: at
    each ms the wait for the next opportunity (the link spec's omniscient delay per ms)."""
    lo, hi = np.searchsorted(times, [start_ms, end_ms], side="left")
    inside = times[lo:hi]
    if inside.size == 0:
        raise MetricsError(f"no opportunity in [{start_ms}, {end_ms}) ms")
    capacity = 8.0 * OPPORTUNITY_BYTES * inside.size / ((end_ms - start_ms) / 1000.0) / 1e6
    axis = np.arange(start_ms, int(inside[-1]), dtype=np.int64)
    if axis.size == 0:
        return LinkShape(capacity, MIN_QUEUE_DELAY_MS + fixed_delay_ms)
    nxt = times[np.searchsorted(times, axis, side="right")]
    waits = nxt - axis
    k = int(DELAY_QUANTILE * waits.size)
    return LinkShape(capacity, float(np.partition(waits, k)[k]) + fixed_delay_ms)


def _distance(a: LinkShape, b: LinkShape) -> float:
    if a.capacity_mbps <= 0 or b.capacity_mbps <= 0:
        return math.inf
    return abs(math.log(a.capacity_mbps / b.capacity_mbps)) + \
        abs(math.log(a.e2e_ms / b.e2e_ms))


def representative_offset_ms(down: np.ndarray, up: np.ndarray, warmup_ms: int, scored_ms: int,
                             fixed_delay_ms: float = 20.0, step_ms: int = STEP_MS) -> int:
    """The offset (ms into both traces) of the stretch most like a full run (see above).

    Only stretches inside one pass of both traces are considered; when the traces are too
    short for any after their first minute, the offsets start at 0.
    """
    down, up = np.asarray(down, dtype=np.int64), np.asarray(up, dtype=np.int64)
    length = warmup_ms + scored_ms
    last = min(int(down[-1]), int(up[-1])) - length
    if last < 0:
        return 0
    first = FIRST_OFFSET_MS if last >= FIRST_OFFSET_MS else 0
    full = [_shape(t, FIRST_OFFSET_MS if int(t[-1]) > FIRST_OFFSET_MS + scored_ms else 0,
                   int(t[-1]), fixed_delay_ms) for t in (down, up)]
    best: tuple[float, int] | None = None
    for offset in range(first, last + 1, step_ms):
        start, end = offset + warmup_ms, offset + length
        try:
            d = sum(_distance(_shape(t, start, end, fixed_delay_ms), ref)
                    for t, ref in zip((down, up), full))
        except MetricsError:
            continue
        if best is None or d < best[0]:
            best = (d, offset)
    return 0 if best is None else best[1]
