"""LinkSide: one direction's service of a trace link (a trace file or a fixed rate).

Kept apart from TraceLink so that planning a run (its duration, its traces) needs
no Mininet: only building the network does.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.traces import TraceError, TraceSet, load_trace

OPPORTUNITY_BYTES = 1504
# A "trace" written rate:<Mbit/s> is a fixed-rate link (wired paths, behavioural tests).
FIXED_RATE_PREFIX = "rate:"


@dataclass(frozen=True)
class LinkSide:
    """One direction's service: a trace file, or a fixed rate in Mbit/s."""

    trace: Path | None = None
    rate_mbps: float | None = None

    def args(self, direction: str) -> list[str]:
        if (self.trace is None) == (self.rate_mbps is None):
            raise ValueError(f"{direction}: give exactly one of a trace or a fixed rate")
        if self.trace is not None:
            return [f"--{direction}-trace", str(self.trace)]
        return [f"--{direction}-rate-mbps", f"{self.rate_mbps:g}"]

    def describe(self) -> str:
        return str(self.trace) if self.trace is not None else f"fixed {self.rate_mbps:g} Mbit/s"

    def mean_rate_mbps(self) -> float:
        """The rate the side offers on average (a trace: its opportunities over its period)."""
        if self.rate_mbps is not None:
            return self.rate_mbps
        assert self.trace is not None
        times = load_trace(self.trace)
        return len(times) * OPPORTUNITY_BYTES * 8 / (int(times[-1]) * 1000)


def link_side(trace: str, traces: TraceSet) -> LinkSide:
    """A direction's service from its name: rate:<Mbit/s>, else a trace of the set."""
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
