"""LinkSide: one direction's service of a trace link (a trace file or a fixed rate, which may
change at given times: `rate_steps`).

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
    """One direction's service: a trace file, or a fixed rate in Mbit/s, with `rate_steps`
    ((ms after the link's start, Mbit/s), ...) where that rate changes (netrepro-link's
    `--X-rate-steps`: each stretch an exact fixed-rate schedule of its own)."""

    trace: Path | None = None
    rate_mbps: float | None = None
    rate_steps: tuple[tuple[int, float], ...] = ()

    def args(self, direction: str) -> list[str]:
        if (self.trace is None) == (self.rate_mbps is None):
            raise ValueError(f"{direction}: give exactly one of a trace or a fixed rate")
        if self.trace is not None:
            if self.rate_steps:
                raise ValueError(f"{direction}: rate steps change a fixed rate, not a trace")
            return [f"--{direction}-trace", str(self.trace)]
        args = [f"--{direction}-rate-mbps", f"{self.rate_mbps:g}"]
        if self.rate_steps:
            args += [f"--{direction}-rate-steps",
                     ",".join(f"{at_ms}:{rate:g}" for at_ms, rate in self.rate_steps)]
        return args

    def describe(self) -> str:
        if self.trace is not None:
            return str(self.trace)
        steps = "".join(f", {rate:g} Mbit/s from {at_ms} ms" for at_ms, rate in self.rate_steps)
        return f"fixed {self.rate_mbps:g} Mbit/s{steps}"

    def mean_rate_mbps(self) -> float:
        """The rate the side offers on average (a trace: its opportunities over its period;
        a stepped rate: the highest of its rates, which is what a decision on the emulator's
        load needs)."""
        if self.rate_mbps is not None:
            return max([self.rate_mbps, *(rate for _, rate in self.rate_steps)])
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
