"""What a run will need before anything is built: its link sides and its duration.

No Mininet here (only building the network needs it), so the runner, the CLI's
checks and the unit tests can plan runs on any machine.
"""
from __future__ import annotations

from typing import Any

from core.run_span import RunSpan, SpanError, run_span
from core.runspec import OPENFLOW_SWITCH, RunSpec, topology_of
from core.traces import TraceError, TraceSet, trace_duration_ms
from topologies.link_side import LinkSide

# A "trace" written rate:<Mbit/s> is a fixed-rate link (wired paths, behavioural tests).
FIXED_RATE_PREFIX = "rate:"


def link_side(trace: str, traces: TraceSet) -> LinkSide:
    if trace.startswith(FIXED_RATE_PREFIX):
        text = trace[len(FIXED_RATE_PREFIX):]
        try:
            rate = float(text)
        except ValueError:
            rate = -1.0
        if not rate > 0:
            raise TraceError(f"bad fixed rate {trace!r}: write rate:<Mbit/s>, e.g. rate:12")
        return LinkSide(rate_mbps=rate)
    return LinkSide(trace=traces.resolve(trace))


# The plan's expectation of one PRR run. Alone a run takes ~2.7 s (pings, controller,
# transfer), but it is set-up work on the CPU, not waiting: side by side runs share the two
# cores. Set so the runner's plan (sum / jobs) matches what was measured: the 12 quick runs
# took 31-48 s at --jobs 10 on the 2-core VM.
PRR_RUN_EXPECTED_S = 25.0


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


def planned_duration_s(spec: RunSpec, traces: TraceSet) -> float:
    """How long the run's measurement is expected to last (the runner's plan and ETA)."""
    if topology_of(spec) == OPENFLOW_SWITCH:
        return PRR_RUN_EXPECTED_S
    return span_of(spec, traces).span_ms / 1000.0


def prr_spec_options(spec: RunSpec) -> dict[str, Any]:
    """A PRR run's options, checked against the spec's path fields derived from them."""
    o = dict(spec.options)
    missing = [k for k in ("pattern", "size", "recovery", "controller", "bottleneck", "rtt")
               if k not in o]
    if missing:
        raise ValueError(f"a PRR run needs the options {', '.join(missing)}")
    rate = f"rate:{float(o['bottleneck']):g}"
    if spec.data_trace != rate or spec.ack_trace != rate or spec.delay_ms * 2 != int(o["rtt"]):
        raise ValueError(f"the spec's path ({spec.data_trace}, {spec.ack_trace}, "
                         f"{spec.delay_ms} ms each way) disagrees with its options "
                         f"(bottleneck {o['bottleneck']}, rtt {o['rtt']})")
    return o
