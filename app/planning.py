"""What a run will need before anything is built: its link sides and its duration.

No Mininet here (only building the network needs it), so the runner, the CLI's
checks and the unit tests can plan runs on any machine.
"""
from __future__ import annotations

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


def planned_duration_s(spec: RunSpec, traces: TraceSet) -> float:
    """How long the run's measurement is expected to last (the runner's plan and ETA)."""
    if topology_of(spec) == OPENFLOW_SWITCH:
        return PRR_RUN_EXPECTED_S
    if spec.duration_s is not None:
        return float(spec.duration_s)
    if spec.data_trace.startswith(FIXED_RATE_PREFIX):
        raise TraceError("a fixed-rate link has no end: give a duration instead of --once")
    return trace_duration_ms(traces.resolve(spec.data_trace)) / 1000.0
