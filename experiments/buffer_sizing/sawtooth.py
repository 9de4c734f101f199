"""One long flow's sawtooth, read from a run's per-packet queue log: its loss events, its
periods, the queue's low point in each, and the shape of each rise.

A loss event is a burst of drops at the bottleneck: drops less than two round trips apart (the
longest round trip, with the buffer full) belong to one event (a window that overflows the
buffer loses packets until its sender hears of the first loss, and its reduction takes another
round trip to reach the queue). The run's first event ends slow start; the period between it and
the next is slow start's aftermath, not the sawtooth, and is left out (the paper's Appendix B
describes the steady state). Each later pair of events is one period: its length, the smallest
queue in it (sampled every millisecond), and whether the queue's rise from that low point to the
next loss bends down, as the fluid model says (Q(t) = sqrt(2Ct + (2 Tp C)^2) - 2 Tp C: concave,
"instead of a linear one, as commonly believed").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.queue_log import QueueLog, backlog_at

SAMPLE_STEP_S = 0.001


@dataclass(frozen=True)
class Period:
    start_s: float  # a loss event's first drop (s after the log's base)
    end_s: float  # the next event's first drop
    min_queue: int  # packets, the lowest sample in it
    concave: bool | None  # the rise fits sqrt(t) better than t (None: too few samples)

    @property
    def length_s(self) -> float:
        return self.end_s - self.start_s


def loss_events(drops_s: np.ndarray, rtt_s: float) -> list[float]:
    """The start of each burst of drops (drops less than `rtt_s` apart are one event)."""
    events: list[float] = []
    last = -math.inf
    for t in np.sort(drops_s):
        if t - last >= rtt_s:
            events.append(float(t))
        last = float(t)
    return events


def periods(q: QueueLog, rtt_s: float, end_s: float | None = None,
            start_s: float | None = None) -> list[Period]:
    """The sawtooth's periods after the first one (slow start's aftermath is left out),
    only those starting at or after `start_s` (the scored window: a period that began in
    the warm-up is still the aftermath of slow start's losses)."""
    drops = q.drop_arrival_us / 1e6
    if end_s is not None:
        drops = drops[drops < end_s]
    events = loss_events(drops, rtt_s)
    out = []
    for start, end in zip(events[1:], events[2:]):
        if start_s is not None and start < start_s:
            continue
        times = np.arange(start, end, SAMPLE_STEP_S)
        queue = backlog_at(q, np.round(times * 1e6).astype(np.int64))
        if queue.size == 0:
            continue
        # The rise starts where the queue last sat at its low point.
        low = int(queue.size - 1 - np.argmin(queue[::-1]))
        out.append(Period(start, end, int(queue[low]),
                          rises_concavely(times[low:] - times[low], queue[low:])))
    return out


def rises_concavely(t: np.ndarray, queue: np.ndarray, min_samples: int = 50) -> bool | None:
    """Whether the rise bends down: the t^2 term of a least-squares parabola through it is
    negative. (The fluid model's rise, sqrt(2Ct + (RTT C)^2) - RTT C, starts with the slope
    C / (RTT C), not with a square root's infinite one: a bare sqrt(t) fits it worse than a
    line, so the parabola's sign is the test.) None with fewer than `min_samples` samples."""
    if t.size < min_samples or np.ptp(t) == 0:
        return None
    curvature = np.polyfit(t, queue.astype(np.float64), 2)[0]
    return bool(curvature < 0)


@dataclass(frozen=True)
class SawtoothSummary:
    periods: int
    period_median_s: float | None
    min_queue_max: int | None  # the highest of the periods' low points
    min_queue_min: int | None  # the lowest of them
    concave_share: float | None  # of the periods whose rise could be judged

    def to_dict(self) -> dict[str, float | int | None]:
        return {"sawtooth_periods": self.periods, "period_median_s": self.period_median_s,
                "period_min_queue_max": self.min_queue_max,
                "period_min_queue_min": self.min_queue_min,
                "concave_share": self.concave_share}


def summarize(found: list[Period]) -> SawtoothSummary:
    if not found:
        return SawtoothSummary(0, None, None, None, None)
    judged = [p.concave for p in found if p.concave is not None]
    return SawtoothSummary(
        periods=len(found), period_median_s=float(np.median([p.length_s for p in found])),
        min_queue_max=max(p.min_queue for p in found),
        min_queue_min=min(p.min_queue for p in found),
        concave_share=(sum(judged) / len(judged)) if judged else None)
