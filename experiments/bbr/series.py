"""A BBR-paper run's record on one clock: the link's per-packet queue log and the sender's
socket samples, in seconds after the emulator's base timestamp (the moment its schedule and
its rate steps start).

The link's log gives every packet's arrival at the bottleneck, its departure and the backlog
it found, so the round trip a packet saw is the path's fixed one plus its time in the queue
(nothing else on the path varies), and the link's delivery rate is its departures per bin.
The socket samples (every 10 ms or so) give the kernel's window, in-flight count, delivery
rate and BBR's gains; their first sample of the data connection is its SYN, to within one
sampling interval.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.queue_log import QueueLog, backlog_at, parse_queue_log
from analysis.socket_samples import Connection, data_connection
from analysis.summary import RunRecord
from experiments.bbr.phases import Phase, phases
from topologies.queue_log import DATA_FILE


@dataclass(frozen=True, eq=False)
class FlowRun:
    """One sender's run: its link log, its data connection's samples and BBR's phases."""

    record: RunRecord
    queue: QueueLog
    samples: Connection | None
    phases: list[Phase]
    t0_s: float | None  # the data connection's first sample (its SYN)
    rtt_ms: float  # the path's fixed round trip

    @property
    def base_s(self) -> float:
        return self.queue.base_ms / 1000.0

    def sample_times(self) -> np.ndarray:
        assert self.samples is not None
        return self.samples.time_s - self.base_s


def flow_start_s(samples: Connection | None, base_s: float) -> float | None:
    if samples is None or len(samples) == 0:
        return None
    return float(samples.time_s[0] - base_s)


def load_flow(record: RunRecord, folder: Path | None = None, port: int | None = None,
              rtt_ms: float | None = None) -> FlowRun:
    """A trace-path run (or one flow of a shared bottleneck: its `folder` and `port`)."""
    q = parse_queue_log(record.path / DATA_FILE)
    verification = record.meta.get("verification") or {}
    samples = data_connection(folder or record.path,
                              port if folder is not None else verification.get("data_port"))
    base_s = q.base_ms / 1000.0
    return FlowRun(record=record, queue=q, samples=samples,
                   phases=phases(samples, base_s) if samples is not None else [],
                   t0_s=flow_start_s(samples, base_s),
                   rtt_ms=float(rtt_ms if rtt_ms is not None else 2 * record.spec.delay_ms))


def departure_rate(q: QueueLog, start_s: float, end_s: float,
                   bin_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(bin starts, Mbit/s) of what left the queue in each bin, on the emulator's basis (IP
    length + 4, the basis its rate is set on: a busy link reads its rate exactly); packets
    lost after the queue left it too."""
    edges = np.arange(start_s, end_s + 1e-9, bin_s)
    if edges.size < 2:
        return np.zeros(0), np.zeros(0)
    times = np.concatenate([q.departure_us, q.lost_departure_us]) / 1e6
    sizes = np.concatenate([q.size, q.lost_size]).astype(np.float64)
    bits, _ = np.histogram(times, bins=edges, weights=sizes * 8)
    return edges[:-1], bits / bin_s / 1e6


def packet_rtt_ms(q: QueueLog, rtt_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """(arrival s, round trip ms) of every packet sent on: the path's fixed round trip plus
    its time in the queue (serialization included, as the link served it)."""
    return q.arrival_us / 1e6, rtt_ms + (q.departure_us - q.arrival_us) / 1000.0


def queue_delay_ms(q: QueueLog) -> tuple[np.ndarray, np.ndarray]:
    """(arrival s, ms from arrival to departure) of every packet that left the queue."""
    arrival = np.concatenate([q.arrival_us, q.lost_arrival_us])
    departure = np.concatenate([q.departure_us, q.lost_departure_us])
    order = np.argsort(arrival, kind="stable")
    return arrival[order] / 1e6, (departure - arrival)[order] / 1000.0


def queue_at(q: QueueLog, times_s: np.ndarray) -> np.ndarray:
    """Packets in the queue at each time (s after the base), as a poll would read it."""
    return backlog_at(q, np.round(np.asarray(times_s) * 1e6).astype(np.int64))


def drops_between(q: QueueLog, start_s: float, end_s: float) -> int:
    """The queue's own drops (full buffer) by arrival in [start_s, end_s)."""
    t = q.drop_arrival_us / 1e6
    return int(np.count_nonzero((t >= start_s) & (t < end_s)))


def sampled(c: Connection, column: str, base_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(s after the base, value) of one column where the kernel gave it."""
    values = c[column]
    keep = np.isfinite(values)
    return c.time_s[keep] - base_s, values[keep]


def acked_rate_mbps(c: Connection, base_s: float, edges_s: np.ndarray) -> np.ndarray:
    """Mbit/s the connection had acknowledged in each bin between `edges_s`, from its
    samples' bytes_acked (interpolated at the edges; 0 before it started, flat after)."""
    t, acked = sampled(c, "bytes_acked", base_s)
    if t.size == 0:
        return np.zeros(max(0, edges_s.size - 1))
    at_edges = np.interp(edges_s, t, acked, left=0.0, right=float(acked[-1]))
    return np.diff(at_edges) * 8 / np.diff(edges_s) / 1e6
