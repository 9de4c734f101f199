"""Execute one RunSpec: network up, emulator and scheme, artifacts, metrics, DONE.

A run either ends in runs/<run>/ with DONE, or in failed/<run>-<time>/ with
FAILED.json naming the reason; its partial artifacts are kept either way.
"""
from __future__ import annotations

import logging
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.run_metrics import compute_run_metrics
from core.active_runs import ActiveRun
from core.cpu_steal import StealMeter
from core.environment import environment
from core.paths import ProjectPaths
from core.results import ExperimentStore, read_json, write_json
from core.runspec import RunSpec
from core.run_span import RunSpan, SpanError, run_span, window_trace
from core.traces import TraceError, TraceSet, load_trace, trace_duration_ms
from schemes.base import Endpoints, StillRunning
from schemes.registry import make_scheme
from topologies.trace_link import LinkSide
from topologies.trace_path import RECEIVER_IP, TracePath, new_prefix

log = logging.getLogger(__name__)

# The link serves nothing after the span (the run's duration, or the trace with --once), so
# every scheme is measured over the same span. A sender still running this long after it (TCP
# waiting for data stuck in its own queue, say) is stopped: the measurement is over.
SPAN_SETTLE_S = 1.0
POLL_S = 0.5
SENDER_EXITED = "exited by itself"
SENDER_STOPPED = "stopped at the end of the span"


@dataclass(frozen=True)
class RunOutcome:
    spec: RunSpec
    ok: bool
    path: Path
    reason: str = ""
    metrics: dict[str, Any] | None = None


# A "trace" written rate:<Mbit/s> is a fixed-rate link (wired paths, behavioural tests).
FIXED_RATE_PREFIX = "rate:"


def link_side(trace: str, traces: TraceSet) -> LinkSide:
    if trace.startswith(FIXED_RATE_PREFIX):
        text = trace[len(FIXED_RATE_PREFIX):]
        try:
            rate = float(text)
        except ValueError:
            rate = -1.0
        if rate <= 0:
            raise TraceError(f"bad fixed rate {trace!r}: write rate:<Mbit/s>, e.g. rate:12")
        return LinkSide(rate_mbps=rate)
    return LinkSide(trace=traces.resolve(trace))


def span_of(spec: RunSpec, traces: TraceSet) -> RunSpan:
    """What the run plays of its traces (core/run_span.py); a fixed-rate side has no period
    of its own and never loops."""
    def period(name: str) -> int | None:
        if name.startswith(FIXED_RATE_PREFIX):
            return None
        return trace_duration_ms(traces.resolve(name))

    data, ack = period(spec.data_trace), period(spec.ack_trace)
    if spec.duration_s is None and data is None:
        raise TraceError("a fixed-rate link has no end: give a duration instead of --once")
    fallback = data if spec.duration_s is None else int(round(spec.duration_s * 1000))
    assert fallback is not None
    try:
        return run_span(spec, data or fallback, ack or fallback)
    except SpanError as e:
        raise TraceError(f"{spec.label()}: {e}") from e


def planned_duration_s(spec: RunSpec, traces: TraceSet) -> float:
    return span_of(spec, traces).span_ms / 1000.0


def _played_side(name: str, side: LinkSide, span: RunSpan, out: Path, label: str) -> LinkSide:
    """The side as the run plays it: from `span.offset_ms` into the trace, a window of it
    written into the run folder (the omniscient reference reads the same window)."""
    if span.offset_ms == 0 or side.trace is None:
        return side
    window = window_trace(load_trace(side.trace), span.offset_ms, span.span_ms)
    path = out / f"{label}-trace-window.txt"
    path.write_text("\n".join(str(int(t)) for t in window) + "\n")
    log.debug("%s: %s from %d ms, %d opportunities", label, name, span.offset_ms, window.size)
    return LinkSide(trace=path)


def execute(spec: RunSpec, store: ExperimentStore, paths: ProjectPaths,
            traces: TraceSet) -> RunOutcome:
    tmp = store.new_temp_dir(spec)
    meta: dict[str, Any] = {"spec": spec.to_dict(), "run_id": spec.run_id(),
                            "environment": environment(), "started": time.time()}
    try:
        steal = StealMeter()
        _measure(spec, tmp, paths, traces, meta)
        meta["cpu_steal_pct"] = steal.percent()
        metrics = compute_run_metrics(tmp, spec, meta)
        write_json(tmp / "metrics.json", metrics)
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        return RunOutcome(spec, True, store.commit(tmp, spec), metrics=metrics)
    except KeyboardInterrupt:
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        store.fail(tmp, spec, "interrupted by the user (Ctrl-C)")
        raise
    except Exception as e:  # the run fails; the matrix goes on
        reason = f"{type(e).__name__}: {e}"
        log.error("run %s failed: %s", spec.label(), reason)
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        dest = store.fail(tmp, spec, reason, traceback.format_exc())
        return RunOutcome(spec, False, dest, reason=reason)


def _measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
             meta: dict[str, Any]) -> None:
    span = span_of(spec, traces)
    data = _played_side(spec.data_trace, link_side(spec.data_trace, traces), span, out, "data")
    ack = _played_side(spec.ack_trace, link_side(spec.ack_trace, traces), span, out, "ack")
    duration_s = span.span_ms / 1000.0
    meta["traces"] = {"data": data.describe(), "ack": ack.describe()}
    meta["duration_s"] = duration_s
    meta["span"] = {"offset_ms": span.offset_ms, "span_ms": span.span_ms,
                    "warmup_ms": span.warmup_ms, "both_directions": span.both_directions,
                    "data_period_ms": span.data.period_ms, "ack_period_ms": span.ack.period_ms,
                    "data_loops": span.data.loops, "ack_loops": span.ack.loops}
    scheme = make_scheme(spec, paths)
    meta["scheme"] = scheme.describe()
    emulator = paths.native_binary("link", "netrepro-link")
    with ExitStack() as stack:
        meta["provider"] = scheme.prepare(stack)
        active = ActiveRun(paths.state_dir / "active", new_prefix())
        stack.callback(active.close)
        meta["prefix"] = active.prefix
        path = stack.enter_context(TracePath(
            data=data, ack=ack, emulator=emulator,
            log_dir=out, delay_ms=spec.delay_ms, queue=spec.queue, once=False,
            span_ms=span.span_ms, active=active))
        assert path.link is not None
        ends = Endpoints(path.sender, path.receiver, RECEIVER_IP, out, active.add,
                         run_tag=active.prefix)
        stack.callback(scheme.stop)
        scheme.start_receiver(ends)
        path.link.start()
        span_end = time.monotonic() + duration_s
        scheme.start_sender(ends, duration_s)
        meta["sender_end"] = SENDER_EXITED
        while True:
            try:
                scheme.wait_sender(POLL_S)
                break
            except StillRunning:
                path.link.check_alive()
                if time.monotonic() > span_end + SPAN_SETTLE_S:
                    scheme.stop_sender()
                    meta["sender_end"] = SENDER_STOPPED
                    break
        # Emulator first: everything it put on the wire has then reached the receiver,
        # so the receiver's count can be checked against the emulator's.
        path.link.check_alive()
        path.link.stop_emulator()
        scheme.stop()
        meta["verification"] = scheme.verify(ends)
    stats = out / "link-stats.json"
    meta["link"] = read_json(stats) if stats.exists() else None
