"""A trace-path run, measured (needs root and Mininet; imported only when a run is made).

In order: the scheme acquires what it needs (a congestion control, say); the path is built
with the run's own name prefix (network.py); the receiver starts, then the emulator's clock,
then the sender for the run's span; the link serves nothing after the span, and a sender
still running a second later is stopped, so every scheme is measured over the same span.
The emulator is stopped first (everything it put on the wire has then reached the
receiver), then the scheme, which verifies what really ran.
"""
from __future__ import annotations

import logging
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.active_runs import ActiveRun
from core.endpoints import Endpoints
from core.paths import ProjectPaths
from core.results import read_json
from core.run_span import RunSpan, window_trace
from core.runspec import RunSpec
from core.traces import TraceSet, load_trace
from kernel import tcp_buffers
from runkinds.drive import RunEnd, drive
from runkinds.trace_path.network import RECEIVER_IP, TracePath
from runkinds.trace_path.span import span_of
from schemes.registry import make_scheme
from topologies import queue_log
from topologies.cpu_placement import refused_for
from topologies.guarded_network import new_prefix
from topologies.link_conditions import link_conditions
from topologies.link_side import LinkSide, link_side

log = logging.getLogger(__name__)

# The native programs this module starts (core/code_identity.py hashes their sources into
# the run's id).
NATIVE = ("link",)

# The link serves nothing after the span (the run's duration, or the trace with --once), so
# every scheme is measured over the same span. A sender still running this long after it (TCP
# waiting for data stuck in its own queue, say) is stopped: the measurement is over.
SPAN_SETTLE_S = 1.0


def measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
            meta: dict[str, Any]) -> None:
    span = span_of(spec, traces)
    conditions = link_conditions(spec, span.span_ms)
    data = _played_side(spec.data_trace, link_side(spec.data_trace, traces), span, out, "data")
    if conditions.rate_steps:
        data = replace(data, rate_steps=conditions.rate_steps)
    ack = _played_side(spec.ack_trace, link_side(spec.ack_trace, traces), span, out, "ack")
    duration_s = span.span_ms / 1000.0
    meta["traces"] = {"data": data.describe(), "ack": ack.describe()}
    meta["link_conditions"] = conditions.describe()
    meta["duration_s"] = duration_s
    meta["span"] = {"offset_ms": span.offset_ms, "span_ms": span.span_ms,
                    "warmup_ms": span.warmup_ms, "both_directions": span.both_directions,
                    "data_period_ms": span.data.period_ms, "ack_period_ms": span.ack.period_ms,
                    "data_loops": span.data.loops, "ack_loops": span.ack.loops,
                    "once": span.once}
    scheme = make_scheme(spec, paths)
    meta["scheme"] = scheme.describe()
    emulator = paths.native_binary("link", "netrepro-link")
    with ExitStack() as stack:
        meta["provider"] = scheme.prepare(stack)
        active = ActiveRun(paths.state_dir / "active", new_prefix())
        stack.callback(active.close)
        meta["prefix"] = active.prefix
        path = stack.enter_context(TracePath(
            refuse_placement=refused_for(meta["provider"]),
            data=data, ack=ack, emulator=emulator,
            log_dir=out, delay_ms=spec.delay_ms, queue=spec.queue, once=span.once,
            span_ms=span.span_ms, active=active,
            tcp_buffer_profile=spec.option(tcp_buffers.OPTION, tcp_buffers.MACHINE),
            queue_log=bool(spec.option(queue_log.OPTION, False)), conditions=conditions))
        link = path.link
        assert link is not None
        meta["queue_log"] = link.queue_log
        meta["tcp_buffer_profile"] = path.tcp_buffer_profile
        meta["tcp_buffers"] = {"sender": tcp_buffers.read(path.sender),
                               "receiver": tcp_buffers.read(path.receiver)}
        ends = Endpoints(path.sender, path.receiver, RECEIVER_IP, out, active.add,
                         run_tag=active.prefix)
        stack.callback(scheme.stop)
        scheme.start_receiver(ends)
        link.start()
        meta["sender_end"] = drive(scheme, ends, duration_s, link.check_alive,
                                   RunEnd(duration_s + SPAN_SETTLE_S, stop_sender=True))
        # Emulator first: everything it put on the wire has then reached the receiver,
        # so the receiver's count can be checked against the emulator's.
        link.check_alive()
        link.stop_emulator()
        meta["offloads_off"] = list(link.offloads_off)
        meta["cpu_placement"] = link.placement.facts()
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
