"""Where a run's delay comes from, millisecond by millisecond: against the omniscient protocol
through a trace's outages, and split into its parts for a flow whose feedback crosses the
other direction (docs/sprout-fig7.md, "AT&T LTE: the span, the outage and the ACK path").

    ./repro outage-study window RUN [RUN ...] --direction uplink \\
        --from-s 785 --to-s 875 --out FIGURE.png [--label NAME ...]
    ./repro outage-study outages RUN [RUN ...] --direction uplink [--label ...]
    ./repro outage-study parts RUN --direction downlink [--until-s 786.1] [--out FIGURE.png]
    ./repro outage-study drain RUN [RUN ...] --direction uplink --at-s 865.914

A RUN is a finished trace-path run's folder. The downlink of a run that loaded both
directions is its data.log (data over the `.down` trace), the uplink its ack.log; a one-way
run has only its data direction.

- `window`: each run's 95%-style per-ms end-to-end delay (analysis/metrics.py's signal delay
  plus the fixed delay) over a stretch of the run, with the omniscient protocol's on the same
  ms (analysis/omniscient.py), and how many ms each run spends above it.
- `outages`: one row per gap of 1 s or more between the trace's opportunities: how far above
  the omniscient protocol each run is in it and in the 5 s after.
- `drain`: the queue when the link comes back at a given time (an outage's end), and what
  each of the next opportunities carried: several small packets (heartbeats, ACKs) leave at
  one opportunity when the link drains bytes, as mahimahi's does, not packets.
- `parts`: the per-ms delay of one direction split into the wait for the next packet the
  sender sends (the sender idle: for TCP, its window full while its ACKs are late) and that
  packet's time in the queue; beside it the queueing of the flow's data on this direction and
  of its ACKs (the small packets) on the other, and the sender's own view from tcp_probe
  (cwnd, smoothed RTT), for a TCP run.
"""
from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from analysis.mahimahi_log import LinkLog, parse_log
from analysis.metrics import p95, signal_delay_per_ms
from analysis.omniscient import least_delay_per_ms
from analysis.plotting import new_grid, save
from analysis.tcp_probe import read_probe
from core.results import read_json
from core.run_span import RunSpan, both_directions, looped_times, run_span
from core.runspec import RunSpec
from core.traces import TraceSet, load_trace

log = logging.getLogger(__name__)

DOWNLINK, UPLINK = "downlink", "uplink"
# A gap between opportunities at least this long is an outage.
OUTAGE_MS = 1000
# How long after an outage its queue is still counted as the outage's.
AFTER_OUTAGE_MS = 5000
# Above the omniscient protocol by more than this: a ms spent behind a backlog, not noise.
EXCESS_MS = 100
# A departure this small is an ACK (or a heartbeat); full data packets are 1504 bytes.
SMALL_PACKET_BYTES = 200


class StudyError(ValueError):
    """The run cannot give what was asked (the message names the run and why)."""


@dataclass(frozen=True, eq=False)
class Direction:
    """One direction of one run, with the trace it was played over."""

    label: str
    run_dir: Path
    spec: RunSpec
    span: RunSpan
    log: LinkLog
    other_log: LinkLog | None  # the other direction's log, when the run logged it
    trace_times: np.ndarray  # one pass of this direction's trace
    reverse: bool  # this is the run's ack.log (a two-way run's uplink)

    @property
    def fixed_delay_ms(self) -> int:
        return self.spec.delay_ms

    def delay_per_ms(self) -> tuple[np.ndarray, np.ndarray]:
        """(ms axis, end-to-end delay at each ms) as analysis/metrics.py samples it."""
        arrival = self.log.departure_time - self.log.departure_delay
        axis, values = signal_delay_per_ms(arrival, self.log.departure_delay)
        return axis, values + self.fixed_delay_ms

    def omniscient_per_ms(self, first_ms: int, last_ms: int) -> np.ndarray:
        """The omniscient protocol's end-to-end delay on ms first..last of the run."""
        duration = None if self.span.once else self.span.span_ms
        return least_delay_per_ms(self.trace_times, duration, first_ms, last_ms) + \
            self.fixed_delay_ms

    def opportunities(self) -> np.ndarray:
        """Opportunity times (ms of the run) as the run played the trace."""
        if self.span.once:
            return self.trace_times[self.trace_times < self.span.span_ms]
        return looped_times(self.trace_times, self.span.offset_ms,
                            self.span.offset_ms + self.span.span_ms)


def load(run_dir: Path, direction: str, traces: TraceSet, label: str | None = None
         ) -> Direction:
    spec = RunSpec.from_dict(read_json(run_dir / "spec.json"))
    both = both_directions(spec)
    data_direction = DOWNLINK if spec.data_trace.endswith(".down") else UPLINK
    if both:
        reverse = direction != data_direction
    elif direction == data_direction:
        reverse = False
    else:
        raise StudyError(f"{run_dir.name}: a one-way run of the {data_direction}; it has no "
                         f"{direction} data")
    logs = {name: run_dir / name for name in ("data.log", "ack.log")}
    own, other = ("ack.log", "data.log") if reverse else ("data.log", "ack.log")
    data_times = load_trace(traces.resolve(spec.data_trace))
    ack_times = load_trace(traces.resolve(spec.ack_trace))
    span = run_span(spec, int(data_times[-1]), int(ack_times[-1]))
    return Direction(label=label or run_dir.name, run_dir=run_dir, spec=spec, span=span,
                     log=parse_log(logs[own]),
                     other_log=parse_log(logs[other]) if logs[other].is_file() else None,
                     trace_times=ack_times if reverse else data_times, reverse=reverse)


# ----------------------------------------------------------------- outages


@dataclass(frozen=True)
class Outage:
    start_ms: int  # the last opportunity before the gap
    end_ms: int  # the first one after it

    @property
    def length_ms(self) -> int:
        return self.end_ms - self.start_ms


def outages(opportunities: np.ndarray, min_gap_ms: int = OUTAGE_MS) -> list[Outage]:
    times = np.unique(opportunities)
    gaps = np.flatnonzero(np.diff(times) >= min_gap_ms)
    return [Outage(int(times[i]), int(times[i + 1])) for i in gaps]


@dataclass(frozen=True)
class OutageExcess:
    """One run through one outage: its per-ms delay above the omniscient protocol's, over
    the outage and the AFTER_OUTAGE_MS after it."""

    outage: Outage
    max_excess_ms: float
    mean_excess_ms: float
    ms_above: int  # ms more than EXCESS_MS above the omniscient protocol
    ms_above_after: int  # of those, in the AFTER_OUTAGE_MS after the outage
    ms: int  # ms of the window on the run's axis


def excess_through(direction: Direction, outage: Outage) -> OutageExcess | None:
    """None when the run's per-ms delay does not cover the outage (it ended before)."""
    axis, delay = direction.delay_per_ms()
    lo, hi = outage.start_ms, outage.end_ms + AFTER_OUTAGE_MS
    inside = (axis >= lo) & (axis < hi)
    if not inside.any():
        return None
    ms = axis[inside]
    excess = delay[inside] - direction.omniscient_per_ms(int(ms[0]), int(ms[-1]))
    above = excess > EXCESS_MS
    return OutageExcess(outage, float(excess.max()), float(excess.mean()), int(above.sum()),
                        int((above & (ms >= outage.end_ms)).sum()), int(ms.size))


def backlog_at(direction: Direction, at_ms: int) -> tuple[int, int]:
    """(packets, bytes) that arrived before `at_ms` and left at or after it: the queue then."""
    lg = direction.log
    arrival = lg.departure_time - lg.departure_delay
    queued = (arrival < at_ms) & (lg.departure_time >= at_ms)
    return int(queued.sum()), int(lg.departure_size[queued].sum())


def departures_per_opportunity(direction: Direction, from_ms: int, count: int
                               ) -> list[tuple[int, int, int]]:
    """(time, packets, bytes) of the first `count` opportunity times from `from_ms` that
    carried a departure: several small packets leave at one opportunity when the link
    drains bytes, not packets."""
    lg = direction.log
    after = lg.departure_time >= from_ms
    times, index = np.unique(lg.departure_time[after], return_inverse=True)
    sizes = lg.departure_size[after]
    return [(int(t), int((index == i).sum()), int(sizes[index == i].sum()))
            for i, t in enumerate(times[:count])]


# ------------------------------------------------------------------- parts


@dataclass(frozen=True)
class Parts:
    """A direction's per-ms delay split in two, over ms [from_ms, until_ms) of the run."""

    from_ms: int
    until_ms: int
    p95_ms: float  # the per-ms end-to-end delay's 95th percentile (mahimahi's element)
    wait_ms: np.ndarray  # per ms: until the sender's next packet reaches the queue
    queue_ms: np.ndarray  # per ms: that packet's time in this direction's queue
    axis_ms: np.ndarray

    def at_or_above_p95(self) -> tuple[float, float, int]:
        """(mean wait, mean queue, ms) over the ms whose delay is at the 95th percentile or
        above: what the percentile is made of."""
        total = self.wait_ms + self.queue_ms
        top = total >= self.p95_ms - 1e-9
        return float(self.wait_ms[top].mean()), float(self.queue_ms[top].mean()), \
            int(top.sum())


def parts(direction: Direction, from_ms: int, until_ms: int | None = None) -> Parts:
    """Split the per-ms delay: at ms t, the next packet to reach the queue arrives at n >= t;
    the delay is (n - t) + its queueing + the fixed delay (analysis/metrics.py)."""
    lg = direction.log
    arrival = lg.departure_time - lg.departure_delay
    axis, values = signal_delay_per_ms(arrival, lg.departure_delay)
    order = np.argsort(arrival, kind="stable")
    present = np.unique(arrival[order])
    nxt = present[np.searchsorted(present, axis, side="left")]
    wait = (nxt - axis).astype(np.float64)
    queue = values - wait
    end = int(axis[-1]) + 1 if until_ms is None else until_ms
    scored = (axis >= from_ms) & (axis < end)
    if not scored.any():
        raise StudyError(f"{direction.label}: no ms of its delay in [{from_ms}, {end})")
    total = values[scored] + direction.fixed_delay_ms
    return Parts(from_ms, end, float(p95(total)) - direction.fixed_delay_ms,
                 wait[scored], queue[scored], axis[scored])


def queue_delays(lg: LinkLog, small: bool, from_ms: int = 0, until_ms: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(departure ms, queueing ms) of the small (ACKs, heartbeats) or the large (data)
    packets that left the queue in [from_ms, until_ms)."""
    end = np.iinfo(np.int64).max if until_ms is None else until_ms
    pick = (lg.departure_size < SMALL_PACKET_BYTES) if small else \
        (lg.departure_size >= SMALL_PACKET_BYTES)
    pick &= (lg.departure_time >= from_ms) & (lg.departure_time < end)
    return lg.departure_time[pick], lg.departure_delay[pick]


# --------------------------------------------------------------- commands


def _runs(args: argparse.Namespace, traces: TraceSet) -> list[Direction]:
    labels = list(args.label or [])
    return [load(Path(run), args.direction, traces, labels[i] if i < len(labels) else None)
            for i, run in enumerate(args.runs)]


def window_figure(runs: Sequence[Direction], from_ms: int, to_ms: int, out: Path) -> None:
    """The delays (above, log scale) and each run's excess over the omniscient protocol
    (below, ms; its scale set by the 99.9th percentile, so the few ms before an outage whose
    packet just missed the last opportunity do not flatten the rest)."""
    fig, (top, bottom) = new_grid(2, 1, panel_width=9.0, panel_height=3.4)
    omniscient_drawn = False
    highest = 0.0
    for run in runs:
        axis, delay = run.delay_per_ms()
        inside = (axis >= from_ms) & (axis < to_ms)
        if not inside.any():
            continue
        ms = axis[inside]
        omni = run.omniscient_per_ms(int(ms[0]), int(ms[-1]))
        top.plot(ms / 1000, delay[inside] / 1000, lw=1.0, label=run.label)
        if not omniscient_drawn:
            top.plot(ms / 1000, omni / 1000, color="black", lw=0.8, ls="--",
                     label="omniscient protocol")
            omniscient_drawn = True
        excess = delay[inside] - omni
        bottom.plot(ms / 1000, excess, lw=0.8, label=run.label)
        highest = max(highest, float(np.percentile(excess, 99.9)))
    top.set_ylabel("per-ms end-to-end delay (s)")
    top.set_yscale("log")
    bottom.set_ylabel("above the omniscient (ms)")
    bottom.set_ylim(-50, max(highest * 1.2, 100))
    bottom.set_xlabel("time in the run (s)")
    for ax in (top, bottom):
        ax.legend(fontsize=8)
    save(fig, out.parent, out.stem)


def window_counts(runs: Sequence[Direction], from_ms: int, to_ms: int) -> list[str]:
    lines = []
    for run in runs:
        axis, delay = run.delay_per_ms()
        inside = (axis >= from_ms) & (axis < to_ms)
        if not inside.any():
            lines.append(f"{run.label}: no delay in the window (the run ended before)")
            continue
        ms = axis[inside]
        excess = delay[inside] - run.omniscient_per_ms(int(ms[0]), int(ms[-1]))
        lines.append(f"{run.label}: {ms.size} ms; above the omniscient by > {EXCESS_MS} ms: "
                     f"{int((excess > EXCESS_MS).sum())} ms, by > 0: "
                     f"{int((excess > 0).sum())} ms; max excess {excess.max():.0f} ms")
    return lines


def parts_figure(direction: Direction, from_ms: int, until_ms: int | None, out: Path) -> None:
    fig, axes = new_grid(3, 1, panel_width=9.0, panel_height=3.0)
    axis, delay = direction.delay_per_ms()
    end = int(axis[-1]) + 1 if until_ms is None else until_ms
    inside = (axis >= from_ms) & (axis < end)
    axes[0].plot(axis[inside] / 1000, delay[inside] / 1000, lw=0.6,
                 label=f"{direction.label}: per-ms end-to-end delay")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("s")
    data_t, data_q = queue_delays(direction.log, small=False, from_ms=from_ms, until_ms=end)
    axes[1].plot(data_t / 1000, data_q, ",", label="its data in this direction's queue")
    if direction.other_log is not None:
        ack_t, ack_q = queue_delays(direction.other_log, small=True, from_ms=from_ms,
                                    until_ms=end)
        axes[1].plot(ack_t / 1000, ack_q, ",", label="its ACKs in the other direction's queue")
    axes[1].set_ylabel("queueing (ms)")
    axes[1].set_yscale("symlog", linthresh=10)
    probe = read_probe(direction.run_dir / "reverse" if direction.reverse
                       else direction.run_dir)
    if probe is not None and len(probe):
        base = direction.log.base_timestamp_ms
        t = probe.time_s * 1000 - base
        keep = (t >= from_ms) & (t < end)
        axes[2].plot(t[keep] / 1000, probe.srtt_us[keep] / 1000, lw=0.6,
                     label="sender's smoothed RTT (ms)")
        twin = axes[2].twinx()
        twin.plot(t[keep] / 1000, probe.snd_cwnd[keep], lw=0.6, color="tab:red",
                  label="cwnd (segments)")
        twin.set_ylabel("cwnd")
        twin.legend(fontsize=7, loc="upper right")
        axes[2].set_yscale("log")
    axes[2].set_xlabel("time in the run (s)")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper left", markerscale=20)
    save(fig, out.parent, out.stem)


def parts_lines(direction: Direction, from_ms: int, until_ms: int | None) -> list[str]:
    split = parts(direction, from_ms, until_ms)
    wait, queue, top = split.at_or_above_p95()
    fixed = direction.fixed_delay_ms
    lines = [f"{direction.label}: ms {split.from_ms}-{split.until_ms}: p95 end-to-end delay "
             f"{split.p95_ms + fixed:.0f} ms; over the {top} ms at or above it, the sender's "
             f"next packet was {wait:.0f} ms away on average and then queued {queue:.0f} ms"]
    for name, lg, small in (("its data, this direction's queue", direction.log, False),
                            ("its ACKs, the other direction's queue", direction.other_log,
                             True)):
        if lg is None:
            continue
        _, q = queue_delays(lg, small, split.from_ms, split.until_ms)
        if q.size:
            lines.append(f"  {name}: {q.size} packets, queueing median "
                         f"{np.median(q):.0f} ms, p95 {np.percentile(q, 95):.0f} ms")
    probe = read_probe(direction.run_dir / "reverse" if direction.reverse
                       else direction.run_dir)
    if probe is not None and len(probe):
        t = probe.time_s * 1000 - direction.log.base_timestamp_ms
        keep = (t >= split.from_ms) & (t < split.until_ms)
        if keep.any():
            rtt = probe.srtt_us[keep] / 1000
            cwnd = probe.snd_cwnd[keep]
            lines.append(f"  tcp_probe: smoothed RTT median {np.median(rtt):.0f} ms, p95 "
                         f"{np.percentile(rtt, 95):.0f} ms, min {rtt.min():.0f} ms; cwnd "
                         f"median {np.median(cwnd):.0f}, p95 {np.percentile(cwnd, 95):.0f}")
    return lines


def drain_lines(direction: Direction, at_ms: int, count: int) -> list[str]:
    packets, size = backlog_at(direction, at_ms)
    lg = direction.log
    arrival = lg.departure_time - lg.departure_delay
    queued = (arrival < at_ms) & (lg.departure_time >= at_ms)
    small = queued & (lg.departure_size < SMALL_PACKET_BYTES)
    drained = lg.departure_time[queued]
    lines = [f"{direction.label}: queued at {at_ms / 1000:g} s: {packets} packets, {size} bytes "
             f"({int(small.sum())} small, {int(lg.departure_size[small].sum())} bytes); "
             f"the last of them left at "
             f"{(drained.max() / 1000 if drained.size else at_ms / 1000):g} s"]
    served = direction.opportunities()
    for t, n, b in departures_per_opportunity(direction, at_ms, count):
        used = int(np.count_nonzero(served == t))
        lines.append(f"  {t / 1000:.3f} s: {n} packets, {b} bytes left at "
                     f"{used} opportunit{'y' if used == 1 else 'ies'} of 1504 bytes")
    return lines


STUDIES = {
    "window": "each run's per-ms delay over a stretch, beside the omniscient protocol's",
    "outages": "one row per outage of the trace: each run's excess in it and after",
    "parts": "one direction's per-ms delay split into the sender's wait and the queue",
    "drain": "the queue when the link comes back, and what the next opportunities carried",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The study's own subcommands (`./repro outage-study --help`)."""
    sub = parser.add_subparsers(dest="study", required=True, metavar="STUDY")
    for name in ("window", "outages", "parts", "drain"):
        p = sub.add_parser(name, help=STUDIES[name])
        p.add_argument("runs", nargs="+", help="finished run folders")
        p.add_argument("--direction", choices=(DOWNLINK, UPLINK), required=True)
        p.add_argument("--label", action="append", help="a name per run, in order")
        if name == "window":
            p.add_argument("--from-s", type=float, required=True)
            p.add_argument("--to-s", type=float, required=True)
            p.add_argument("--out", type=Path)
        if name == "drain":
            p.add_argument("--at-s", type=float, required=True)
            p.add_argument("--count", type=int, default=8, help="opportunities to list")
        if name == "parts":
            p.add_argument("--from-s", type=float, default=60.0)
            p.add_argument("--until-s", type=float)
            p.add_argument("--out", type=Path)


def run(args: argparse.Namespace, traces: TraceSet) -> int:
    runs = _runs(args, traces)
    if args.study == "window":
        lo, hi = int(args.from_s * 1000), int(args.to_s * 1000)
        print("\n".join(window_counts(runs, lo, hi)))
        if args.out:
            window_figure(runs, lo, hi, args.out)
    elif args.study == "outages":
        for gap in outages(runs[0].opportunities()):
            cells = []
            for run in runs:
                e = excess_through(run, gap)
                cells.append(f"{run.label}: -" if e is None else
                             f"{run.label}: max {e.max_excess_ms:.0f}, mean "
                             f"{e.mean_excess_ms:.0f}, >{EXCESS_MS} ms {e.ms_above} "
                             f"({e.ms_above_after} after)")
            print(f"{gap.start_ms / 1000:8.1f}-{gap.end_ms / 1000:8.1f} s "
                  f"({gap.length_ms / 1000:5.1f} s) | " + " | ".join(cells))
    elif args.study == "drain":
        at = int(args.at_s * 1000)
        for run in runs:
            print("\n".join(drain_lines(run, at, args.count)))
    else:
        until = None if args.until_s is None else int(args.until_s * 1000)
        for run in runs:
            print("\n".join(parts_lines(run, int(args.from_s * 1000), until)))
            if args.out:
                parts_figure(run, int(args.from_s * 1000), until, args.out)
    return 0
