"""What a run plays of its traces and what of it is scored: the span, the loops, the warm-up.

A run's link serves both directions from its start (trace time `offset`) for `span_ms`, and
nothing after (`netrepro-link --span-ms`). Each direction's trace loops when it runs out
before the span ends, as mahimahi and Cellsim play a trace, so feedback
never stops mid-run:

- a full run (`duration_s` None) lasts one pass of the data trace when one direction is
  loaded, and one pass of the LONGER trace when both are (`directions=both`, as the
  cellular links were measured: the shorter trace loops; on AT&T LTE the 786-s downlink
  trace loops to the uplink's 1,012 s);
- a run with a duration lasts that long, from `offset_s` into both traces (a quick run's
  stretch: the same for every scheme).

With `trace_play=once` (Cellsim of 2012, which had no looping), a full run
still lasts the longer trace, but each direction's trace plays once: a direction whose trace
ends first serves nothing after its end (`netrepro-link --once`), and what reaches it then is
not delivered, so the other direction loses its feedback there.

The first `warmup_s` of the span are played but not scored (the paper skips each run's first
minute). These are RunSpec options, so they are part of the run's id.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import UsageError
from core.runspec import RunSpec

# RunSpec options read here.
DIRECTIONS = "directions"  # "both": data both ways at once; absent or "one": one way
BOTH, ONE = "both", "one"
WARMUP_S = "warmup_s"      # seconds played but not scored (default 0)
OFFSET_S = "offset_s"      # where in the traces the run starts, seconds (default 0)
TRACE_PLAY = "trace_play"  # "loop" (absent: mahimahi's, and Cellsim's from 2013) or "once"
LOOP, ONCE = "loop", "once"


class SpanError(UsageError):
    """The spec's span cannot be played (the message says why)."""


def both_directions(spec: RunSpec) -> bool:
    value = spec.option(DIRECTIONS, ONE)
    if value not in (BOTH, ONE):
        raise SpanError(f"option {DIRECTIONS}={value!r}: expected {BOTH!r} or {ONE!r}")
    return value == BOTH


def plays_once(spec: RunSpec) -> bool:
    """Each trace played once, no looping (the paper-era Cellsim), rather than looped."""
    value = spec.option(TRACE_PLAY, LOOP)
    if value not in (LOOP, ONCE):
        raise SpanError(f"option {TRACE_PLAY}={value!r}: expected {LOOP!r} or {ONCE!r}")
    return value == ONCE


@dataclass(frozen=True)
class DirectionPlay:
    """How one direction's trace is played over the span."""

    period_ms: int  # one pass of the trace (its last value)
    passes: float   # how many passes of the trace the span covers (from the offset)
    once: bool = False  # played once: no service after its end

    @property
    def loops(self) -> bool:
        return not self.once and self.passes > 1.0 + 1e-9

    @property
    def ends_early(self) -> bool:
        """Played once and over before the span is: the direction serves nothing after."""
        return self.once and self.passes > 1.0 + 1e-9


@dataclass(frozen=True)
class RunSpan:
    offset_ms: int
    span_ms: int     # service from the start of the run for this long
    warmup_ms: int   # scored from here (ms after the start)
    data: DirectionPlay
    ack: DirectionPlay
    both_directions: bool
    once: bool = False  # each trace played once (TRACE_PLAY), none looping

    @property
    def scored_ms(self) -> int:
        return self.span_ms - self.warmup_ms

    @property
    def one_pass(self) -> bool:
        """The data trace played exactly once from its start (a `--once` run of old)."""
        return self.offset_ms == 0 and self.span_ms == self.data.period_ms

    def describe(self) -> str:
        """A line for figures: what was played, what looped and what was scored."""
        parts = []
        if self.offset_ms:
            parts.append(f"{self.offset_ms / 1000:g} s into the traces")
        parts.append(f"{self.span_ms / 1000:g} s played")
        if self.once:
            parts.append("each trace once, none looping")
        parts.append(f"first {self.warmup_ms / 1000:g} s not scored" if self.warmup_ms
                     else "all scored")
        return ", ".join(parts)

    def loop_note(self, data_name: str, ack_name: str) -> str:
        """Which trace loops, or with `once` which one ends before the run (empty when none
        does)."""
        sides = ((data_name, self.data), (ack_name, self.ack))
        end = (self.offset_ms + self.span_ms) / 1000
        looped = [f"{name} ({play.period_ms / 1000:.0f} s) loops to {end:.0f} s"
                  for name, play in sides if play.loops]
        ended = [f"{name} ends at {play.period_ms / 1000:.1f} s (no service after)"
                 for name, play in sides if play.ends_early]
        return "; ".join(looped + ended)


def run_span(spec: RunSpec, data_period_ms: int, ack_period_ms: int) -> RunSpan:
    """The span of `spec` over traces whose one pass lasts these ms (their last values)."""
    if data_period_ms <= 0 or ack_period_ms <= 0:
        raise SpanError("trace periods must be positive")
    both = both_directions(spec)
    once = plays_once(spec)
    offset_ms = int(round(float(spec.option(OFFSET_S, 0)) * 1000))
    warmup_ms = int(round(float(spec.option(WARMUP_S, 0)) * 1000))
    if offset_ms < 0 or warmup_ms < 0:
        raise SpanError(f"{OFFSET_S} and {WARMUP_S} must not be negative")
    if once and offset_ms:
        raise SpanError(f"{TRACE_PLAY}={ONCE} plays each trace from its start: no {OFFSET_S}")
    if spec.duration_s is None:
        if offset_ms:
            raise SpanError(f"{OFFSET_S} needs a duration: a full run plays whole traces")
        span_ms = max(data_period_ms, ack_period_ms) if both else data_period_ms
    else:
        span_ms = int(round(float(spec.duration_s) * 1000))
    if span_ms <= warmup_ms:
        raise SpanError(f"the warm-up ({warmup_ms / 1000:g} s) leaves nothing of the "
                        f"{span_ms / 1000:g}-s span to score")
    end = offset_ms + span_ms
    return RunSpan(offset_ms=offset_ms, span_ms=span_ms, warmup_ms=warmup_ms,
                   data=DirectionPlay(data_period_ms, end / data_period_ms, once),
                   ack=DirectionPlay(ack_period_ms, end / ack_period_ms, once),
                   both_directions=both, once=once)


def looped_times(trace: np.ndarray, start_ms: int, end_ms: int) -> np.ndarray:
    """Opportunity times in [start_ms, end_ms) of the trace looped from 0 (period = its last
    value, as mahimahi loops), minus start_ms."""
    trace = np.asarray(trace, dtype=np.int64)
    if trace.size == 0 or trace[-1] <= 0:
        raise SpanError("a trace needs at least one timestamp and a nonzero last value")
    period = int(trace[-1])
    first_pass, last_pass = start_ms // period, -(-end_ms // period)
    passes = np.arange(first_pass, last_pass + 1, dtype=np.int64)
    times: np.ndarray = (trace[None, :] + period * passes[:, None]).ravel()
    times = times[(times >= start_ms) & (times < end_ms)]
    return times - start_ms


def window_trace(trace: np.ndarray, offset_ms: int, length_ms: int) -> np.ndarray:
    """The trace as a run starting `offset_ms` into it sees it for `length_ms`, as a trace of
    its own (times from 0). It ends with an opportunity at or after `length_ms`, so playing
    it never wraps within the length (its last value stays nonzero)."""
    if length_ms <= 0:
        raise SpanError("a window needs a positive length")
    trace = np.asarray(trace, dtype=np.int64)
    period = int(trace[-1])
    times = looped_times(trace, offset_ms, offset_ms + length_ms + period + 1)
    after = np.flatnonzero(times >= length_ms)
    times = times[:after[0] + 1] if after.size else times
    if times.size == 0 or times[-1] <= 0:
        raise SpanError("the window holds no opportunity after its start")
    return times
