"""The measured part of a run: the network up, the emulator and the scheme, artifacts out.

The only module of the run's path that needs Mininet; app/executor.py calls it and
owns the run's folder, metrics and commit.
"""
from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from app.planning import link_side, span_of
from core.active_runs import ActiveRun
from core.paths import ProjectPaths
from core.results import read_json
from core.run_span import RunSpan, window_trace
from core.runspec import OPENFLOW_SWITCH, RunSpec, topology_of
from core.traces import TraceSet, load_trace
from schemes.base import Endpoints, StillRunning
from schemes.registry import make_scheme
from kernel import tcp_buffers
from topologies import queue_log
from topologies.link_side import LinkSide
from topologies.trace_path import RECEIVER_IP, TracePath, new_prefix

log = logging.getLogger(__name__)

# The link serves nothing after the span (the run's duration, or the trace with --once), so
# every scheme is measured over the same span. A sender still running this long after it (TCP
# waiting for data stuck in its own queue, say) is stopped: the measurement is over.
SPAN_SETTLE_S = 1.0
POLL_S = 0.5
SENDER_EXITED = "exited by itself"
SENDER_STOPPED = "stopped at the end of the span"


def measure_network(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                    meta: dict[str, Any]) -> None:
    """Measure `spec` on a real network, leaving its artifacts in `out` and facts in `meta`.

    The run's `topology` option chooses the network: the trace path below, or the PRR
    experiment's switched path (app/prr_lifecycle.py)."""
    meta["topology_kind"] = topology_of(spec)
    if meta["topology_kind"] == OPENFLOW_SWITCH:
        from app.prr_lifecycle import measure as measure_switched_path
        measure_switched_path(spec, out, paths, traces, meta)
        return
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
            span_ms=span.span_ms, active=active,
            tcp_buffer_profile=spec.option(tcp_buffers.OPTION, tcp_buffers.MACHINE),
            queue_log=bool(spec.option(queue_log.OPTION, False))))
        assert path.link is not None
        meta["tcp_buffer_profile"] = path.tcp_buffer_profile
        meta["tcp_buffers"] = {"sender": tcp_buffers.read(path.sender),
                               "receiver": tcp_buffers.read(path.receiver)}
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
