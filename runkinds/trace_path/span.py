"""What a trace-path run plays of its traces: the span (core/run_span.py), from the traces'
lengths; planning, measuring and the metrics read it alike."""
from __future__ import annotations

from core.run_span import RunSpan, SpanError, run_span
from core.runspec import RunSpec
from core.traces import TraceError, TraceSet, trace_duration_ms
from topologies.link_side import FIXED_RATE_PREFIX


def span_of(spec: RunSpec, traces: TraceSet) -> RunSpan:
    """What a trace-path run plays of its traces (core/run_span.py); a fixed-rate side has
    no period of its own and never loops."""
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
