"""Link metrics exactly as mahimahi's `mm-throughput-graph` and the contest define them.

Definitions (the link spec, section 4):

- duration: from the first `#`/`+`/`-` event (file order) to the latest one, in s.
- capacity / throughput: 8 x (opportunity / departed bytes) / duration / 1e6, Mbit/s,
  on the log's own byte basis (mahimahi: IP length + 4, 1504-byte opportunities).
- p95 queueing delay: sorted per-packet delays, element int(0.95 * N) (0-based).
- p95 signal delay: the per-ms construction of `signal_delay_per_ms`, element
  int(0.95 * M) of the sorted per-ms values.  Excludes the fixed delay.
- p95 end-to-end delay (the contest's "95% end-to-end delay"): signal delay plus
  the data path's fixed one-way delay.
- power (as CS244 reports it): throughput in Mbit/s / p95 signal delay in s.
- score (the contest): ln(throughput in Mbit/s) - ln(p95 end-to-end delay in ms).

`int(0.95 * n)` is used on purpose: it is the same IEEE double product and
truncation as the Perl script's array index, so the chosen element is identical.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.mahimahi_log import LinkLog, parse_log


class MetricsError(ValueError):
    """The log cannot give the metric; the message says why and names the log."""


class NoDeliveries(MetricsError):
    """Nothing left the link: there is no throughput or delay to report (never plot a 0)."""


@dataclass(frozen=True)
class LinkMetrics:
    """One direction of one run. Rates in Mbit/s, delays in ms, sizes in bytes."""

    duration_s: float
    capacity_mbps: float
    ingress_mbps: float
    throughput_mbps: float
    utilization: float | None  # None when the log has no opportunities (not a trace link)
    p95_queue_delay_ms: float
    p95_signal_delay_ms: float
    # The ms the signal delay is defined on: first to last arrival of a delivered
    # packet (log time); the omniscient reference is taken on the same ms.
    signal_delay_first_ms: int
    signal_delay_last_ms: int
    fixed_delay_ms: float
    p95_e2e_delay_ms: float
    power: float | None  # Mbit/s per s of p95 signal delay; None when that delay is 0
    score: float | None  # ln(Mbit/s) - ln(ms); None when the e2e delay is 0
    arrived_packets: int
    arrived_bytes: int
    departed_packets: int
    departed_bytes: int
    dropped_packets: int
    dropped_bytes: int
    loss: float | None  # 1 - departed/arrived bytes; None when nothing arrived

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def p95_index(n: int) -> int:
    """The index mahimahi reads for the 95th percentile of n sorted values."""
    if n <= 0:
        raise MetricsError("the 95th percentile of an empty set is undefined")
    return int(0.95 * n)


def p95(values: np.ndarray) -> int | float:
    """mahimahi's 95th percentile: sort ascending, take element int(0.95 * n)."""
    values = np.asarray(values)
    k = p95_index(values.size)
    return np.partition(values, k)[k].item()


def signal_delay_per_ms(arrival_ms: np.ndarray, delay_ms: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """mm-throughput-graph's per-ms signal delay: (ms axis, delay at each ms).

    For each delivered packet its arrival ms is a = departure - delay, and
    SD[a] = the smallest delay among the packets that arrived in ms a.  Walking t
    down from the latest arrival ms to the earliest, an empty SD[t] becomes
    SD[t+1] + 1 (a filled value is never compared with SD[t+1] + 1).  So an
    empty ms gets SD[n] + (n - t), n being the next ms above with a packet.
    """
    arrival_ms = np.asarray(arrival_ms, dtype=np.int64)
    delay_ms = np.asarray(delay_ms, dtype=np.int64)
    if arrival_ms.size == 0:
        raise NoDeliveries("no delivered packets: the signal delay is undefined")
    if arrival_ms.size > 1 and not (np.diff(arrival_ms) >= 0).all():
        order = np.argsort(arrival_ms, kind="stable")  # FIFO logs are already sorted
        arrival_ms, delay_ms = arrival_ms[order], delay_ms[order]
    group_start = np.flatnonzero(np.r_[True, arrival_ms[1:] != arrival_ms[:-1]])
    lo, hi = int(arrival_ms[0]), int(arrival_ms[-1])
    axis = np.arange(lo, hi + 1, dtype=np.int64)
    present = arrival_ms[group_start] - lo
    smallest = np.minimum.reduceat(delay_ms, group_start)
    # For every ms, the next ms at or above it that has a packet.
    index = np.full(axis.size, axis.size, dtype=np.int64)
    index[present] = present
    next_present = np.minimum.accumulate(index[::-1])[::-1]
    per_ms = np.empty(axis.size, dtype=np.int64)
    per_ms[present] = smallest
    values = per_ms[next_present] + (next_present - np.arange(axis.size))
    return axis, values


def arrival_times_ms(log: LinkLog) -> np.ndarray:
    """Each delivered packet's arrival at the link (ms): its departure minus its queueing delay."""
    return log.departure_time - log.departure_delay


def p95_signal_delay_ms(arrival_ms: np.ndarray, delay_ms: np.ndarray) -> int:
    return int(p95(signal_delay_per_ms(arrival_ms, delay_ms)[1]))


def link_metrics(log: LinkLog, fixed_delay_ms: float = 0.0, from_ms: int = 0,
                 until_ms: int | None = None) -> LinkMetrics:
    """All metrics of one log; `fixed_delay_ms` is the data path's fixed one-way delay.

    With `from_ms` > 0 only what happens from that ms on is scored (the Sprout paper skips
    each run's first minute): throughput and capacity count departures and opportunities
    from then to the last event; the signal delay is sampled on the ms from then on (its
    value at a ms still depends on the packets that arrive after it, as without a skip).
    With `until_ms`, scoring also stops there (exclusive): departures, opportunities and
    signal-delay samples from that ms on are left out, and the duration ends there (or at
    the last event, if earlier).
    """
    if fixed_delay_ms < 0:
        raise MetricsError(f"fixed delay {fixed_delay_ms} ms is negative; pass the data "
                           "path's fixed one-way delay (0 or more)")
    if from_ms > 0 or until_ms is not None:
        return _scored_window(log, fixed_delay_ms, from_ms, until_ms)
    dep_bytes = int(log.departure_size.sum())
    arr_bytes = int(log.arrival_size.sum())
    if log.departure_time.size == 0:
        raise NoDeliveries(
            f"{log.source}: no packet left the link ({log.arrival_time.size} arrivals, "
            f"{log.opportunity_time.size} opportunities, {int(log.drop_count.sum())} drops): "
            "the sender sent nothing or the link never served it; there is no throughput "
            "or delay to report")
    assert log.first_event_ms is not None and log.last_event_ms is not None
    duration_ms = log.last_event_ms - log.first_event_ms
    if duration_ms <= 0:
        raise MetricsError(f"{log.source}: all events fall in one millisecond "
                           f"({log.first_event_ms} ms): the duration is 0 and rates are "
                           "undefined; the run was too short")
    arrival = arrival_times_ms(log)
    if (log.departure_delay < 0).any() or (arrival < 0).any():
        bad = int(np.argmax((log.departure_delay < 0) | (arrival < 0)))
        raise MetricsError(f"{log.source}: departure at {int(log.departure_time[bad])} ms "
                           f"has delay {int(log.departure_delay[bad])} ms, so it arrived "
                           "before the base timestamp; the log is corrupt")
    return _from_counts(
        duration_s=duration_ms / 1000.0, opportunity_bytes=int(log.opportunity_bytes.sum()),
        arrived=(int(log.arrival_time.size), arr_bytes),
        departed=(int(log.departure_time.size), dep_bytes),
        dropped=(int(log.drop_count.sum()), int(log.drop_bytes.sum())),
        p95_queue_delay_ms=float(p95(log.departure_delay)),
        signal_ms=float(p95_signal_delay_ms(arrival, log.departure_delay)),
        signal_span=(int(arrival.min()), int(arrival.max())), fixed_delay_ms=fixed_delay_ms)


def _scored_window(log: LinkLog, fixed_delay_ms: float, from_ms: int,
                   until_ms: int | None) -> LinkMetrics:
    """link_metrics over the ms from `from_ms` up to `until_ms` (see there)."""
    full = link_metrics(log, fixed_delay_ms)  # checks the log; the whole run's figures
    assert log.last_event_ms is not None
    start = max(int(from_ms), int(log.first_event_ms or 0))
    end = log.last_event_ms if until_ms is None else min(int(until_ms), log.last_event_ms)
    if end <= start:
        raise MetricsError(f"{log.source}: the scored span [{from_ms}, "
                           f"{until_ms if until_ms is not None else 'end'}) ms holds nothing "
                           f"of the run (its events from {log.first_event_ms} to "
                           f"{log.last_event_ms} ms): nothing to score")
    stop = log.last_event_ms + 1 if until_ms is None else int(until_ms)

    def inside(times: np.ndarray) -> np.ndarray:
        return (times >= start) & (times < stop)

    arrival = arrival_times_ms(log)
    axis, values = signal_delay_per_ms(arrival, log.departure_delay)
    scored = inside(axis)
    if not scored.any():
        raise NoDeliveries(f"{log.source}: no packet arrived at the link in the scored span "
                           f"[{start}, {stop}) ms: there is no delay to report")
    departed = inside(log.departure_time)
    arrived = inside(log.arrival_time)
    if not departed.any():
        raise NoDeliveries(f"{log.source}: no packet left the link in the scored span "
                           f"[{start}, {stop}) ms: there is no throughput to report")
    dropped = inside(log.drop_time)
    last = full.signal_delay_last_ms if until_ms is None else int(axis[scored][-1])
    return _from_counts(
        duration_s=(end - start) / 1000.0,
        opportunity_bytes=int(log.opportunity_bytes[inside(log.opportunity_time)].sum()),
        arrived=(int(arrived.sum()), int(log.arrival_size[arrived].sum())),
        departed=(int(departed.sum()), int(log.departure_size[departed].sum())),
        dropped=(int(log.drop_count[dropped].sum()), int(log.drop_bytes[dropped].sum())),
        p95_queue_delay_ms=float(p95(log.departure_delay[departed])),
        signal_ms=float(p95(values[scored])),
        signal_span=(int(axis[scored][0]), last),
        fixed_delay_ms=fixed_delay_ms)


def _from_counts(*, duration_s: float, opportunity_bytes: int, arrived: tuple[int, int],
                 departed: tuple[int, int], dropped: tuple[int, int],
                 p95_queue_delay_ms: float, signal_ms: float, signal_span: tuple[int, int],
                 fixed_delay_ms: float) -> LinkMetrics:
    """The metrics from what was counted over `duration_s`: opportunity bytes, (packets,
    bytes) arrived, departed and dropped, the p95 queueing and signal delays and the ms the
    signal delay is defined on; rates, utilization, end-to-end delay, power, score and loss
    follow."""
    def mbps(n_bytes: int) -> float:
        return 8.0 * n_bytes / duration_s / 1e6

    capacity = mbps(opportunity_bytes)
    throughput = mbps(departed[1])
    e2e = signal_ms + float(fixed_delay_ms)
    return LinkMetrics(
        duration_s=duration_s,
        capacity_mbps=capacity,
        ingress_mbps=mbps(arrived[1]),
        throughput_mbps=throughput,
        utilization=throughput / capacity if capacity > 0 else None,
        p95_queue_delay_ms=p95_queue_delay_ms,
        p95_signal_delay_ms=signal_ms,
        signal_delay_first_ms=signal_span[0],
        signal_delay_last_ms=signal_span[1],
        fixed_delay_ms=float(fixed_delay_ms),
        p95_e2e_delay_ms=e2e,
        power=throughput / (signal_ms / 1000.0) if signal_ms > 0 else None,
        score=contest_score(throughput, e2e),
        arrived_packets=arrived[0],
        arrived_bytes=arrived[1],
        departed_packets=departed[0],
        departed_bytes=departed[1],
        dropped_packets=dropped[0],
        dropped_bytes=dropped[1],
        loss=1.0 - departed[1] / arrived[1] if arrived[1] > 0 else None,
    )


def contest_score(throughput_mbps: float, p95_e2e_delay_ms: float) -> float | None:
    """ln(throughput in Mbit/s) - ln(95% end-to-end delay in ms); None if either is 0."""
    if throughput_mbps <= 0 or p95_e2e_delay_ms <= 0:
        return None
    return math.log(throughput_mbps) - math.log(p95_e2e_delay_ms)


def metrics_from_file(path: Path | str, fixed_delay_ms: float = 0.0,
                      from_ms: int = 0, until_ms: int | None = None) -> LinkMetrics:
    return link_metrics(parse_log(path), fixed_delay_ms, from_ms, until_ms)


@dataclass(frozen=True, eq=False)
class BinnedRates:
    """Per-bin rates in Mbit/s, like mm-throughput-graph's plot; `start_s` is each bin's start."""

    bin_ms: int
    start_s: np.ndarray
    capacity_mbps: np.ndarray
    ingress_mbps: np.ndarray
    throughput_mbps: np.ndarray


def binned_rates(log: LinkLog, bin_ms: int) -> BinnedRates:
    """Capacity, ingress and throughput per bin of `bin_ms`, over every bin from the
    earliest to the latest that holds a `#`, `+` or `-` event (empty bins are 0)."""
    if bin_ms <= 0:
        raise MetricsError(f"bin width {bin_ms} ms must be a positive number of ms")
    times = [log.opportunity_time, log.arrival_time, log.departure_time]
    if not any(t.size for t in times):
        raise NoDeliveries(f"{log.source}: the log has no events to plot")
    bins = [np.floor_divide(t, bin_ms) for t in times]
    first = min(int(b.min()) for b in bins if b.size)
    last = max(int(b.max()) for b in bins if b.size)
    scale = 8.0 / (bin_ms / 1000.0) / 1e6

    def rate(b: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        return np.bincount(b - first, weights=sizes, minlength=last - first + 1) * scale

    return BinnedRates(
        bin_ms=bin_ms,
        start_s=np.arange(first, last + 1) * bin_ms / 1000.0,
        capacity_mbps=rate(bins[0], log.opportunity_bytes),
        ingress_mbps=rate(bins[1], log.arrival_size),
        throughput_mbps=rate(bins[2], log.departure_size),
    )


def packet_delays(log: LinkLog, fixed_delay_ms: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(departure time in s, queueing delay + fixed delay in ms) for every delivered packet."""
    return log.departure_time / 1000.0, log.departure_delay + float(fixed_delay_ms)


def signal_delay_series(log: LinkLog, fixed_delay_ms: float = 0.0
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(time in s, signal delay + fixed delay in ms) for every ms between first and last arrival."""
    if log.departure_time.size == 0:
        raise NoDeliveries(f"{log.source}: no packet left the link; no delay series")
    axis, values = signal_delay_per_ms(arrival_times_ms(log), log.departure_delay)
    return axis / 1000.0, values + float(fixed_delay_ms)
