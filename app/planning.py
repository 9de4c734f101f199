"""What a run will need before anything is built: its link sides and its duration.

No Mininet here (only building the network needs it), so the runner, the CLI's
checks and the unit tests can plan runs on any machine.
"""
from __future__ import annotations

from core.runspec import RunSpec
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


def planned_duration_s(spec: RunSpec, traces: TraceSet) -> float:
    if spec.duration_s is not None:
        return float(spec.duration_s)
    if spec.data_trace.startswith(FIXED_RATE_PREFIX):
        raise TraceError("a fixed-rate link has no end: give a duration instead of --once")
    return trace_duration_ms(traces.resolve(spec.data_trace)) / 1000.0
