"""Sprout's self-inflicted delay for finished runs.

Self-inflicted delay = the run's 95% end-to-end delay minus the omniscient
protocol's on the same trace, the same span and the same fixed delay
(the link spec, section 4; `analysis.omniscient`). The span is what the run
played of that direction's trace (core/run_span.py): one pass of it (also when
the run played each trace once), or a window from the run's offset for the
run's span, the trace looping as the emulator plays it. Within the span, the
omniscient delay is taken on the run's own scored ms (after the warm-up, up to
the last arrival of a delivered packet, or where the chosen scored span ends:
analysis/scored_span.py), so an outage the run's delay leaves out is left out
of the reference too. A run that loads both directions has a
reference per direction: the reverse one is on the ack trace.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from analysis.mahimahi_log import parse_log
from analysis.metrics import MetricsError, arrival_times_ms
from analysis.omniscient import (OPPORTUNITY_BYTES, OmniscientResult, omniscient,
                                 self_inflicted_delay_ms)
from core.run_span import RunSpan, both_directions, looped_times, run_span, window_trace
from core.runspec import RunSpec
from core.traces import TraceSet, load_trace

log = logging.getLogger(__name__)


def span_ms(duration_s: float | None) -> int | None:
    """The omniscient window for a run: None for one pass, else its duration in ms."""
    return None if duration_s is None else int(round(duration_s * 1000))


def signal_axis(metrics: Mapping[str, Any], run_dir: Path | None = None) -> tuple[int, int]:
    """The ms a run's signal delay is defined on, from metrics.json or, for runs
    measured before it was recorded there, from the run's data.log."""
    first, last = metrics.get("signal_delay_first_ms"), metrics.get("signal_delay_last_ms")
    if first is not None and last is not None:
        return int(first), int(last)
    log_path = None if run_dir is None else run_dir / "data.log"
    if log_path is None or not log_path.is_file():
        raise MetricsError(f"run {run_dir}: metrics.json has no signal_delay_first_ms/"
                           "signal_delay_last_ms and there is no data.log to read them "
                           "from; rerun it with --force")
    arrival = arrival_times_ms(parse_log(log_path))
    return int(arrival.min()), int(arrival.max())


class OmniscientReferences:
    """The omniscient protocol per (trace, fixed delay, span), computed once each.

    Traces are resolved through the trace set, so a missing or corrupt trace
    raises `core.traces.TraceError` naming it.
    """

    def __init__(self, traces: TraceSet) -> None:
        self.traces = traces
        self._cache: dict[tuple[Any, ...], OmniscientResult] = {}
        self._times: dict[str, np.ndarray] = {}

    def times(self, trace: str) -> np.ndarray:
        """A trace's opportunity times, read once."""
        if trace not in self._times:
            self._times[trace] = load_trace(self.traces.resolve(trace))
        return self._times[trace]

    def for_trace(self, trace: str, delay_ms: float, duration_s: float | None,
                  axis_ms: tuple[int, int] | None = None) -> OmniscientResult:
        key = (trace, float(delay_ms), span_ms(duration_s), axis_ms)
        if key not in self._cache:
            path = self.traces.resolve(trace)
            log.debug("omniscient reference for %s, %s ms, span %s, on ms %s", trace,
                      delay_ms, key[2], axis_ms)
            self._cache[key] = omniscient(path, delay_ms, key[2], axis_ms)
        return self._cache[key]

    def span(self, spec: RunSpec) -> RunSpan:
        """What the run played (core/run_span.py), from its traces' periods. A one-way run's
        span does not depend on its ack trace: its period, read when the trace is here, only
        says whether it looped and where the shorter trace of the pair ends."""
        data = int(self.times(spec.data_trace)[-1])
        ack = data
        if both_directions(spec) or self.traces.locate(spec.ack_trace) is not None:
            ack = int(self.times(spec.ack_trace)[-1])
        return run_span(spec, data, ack)

    def for_played(self, trace: str, delay_ms: float, span: RunSpan,
                   axis_ms: tuple[int, int] | None = None) -> OmniscientResult:
        """The reference for one direction's trace as a run played it: one pass when the run
        played exactly one pass of it from its start, else the window the run played."""
        times = self.times(trace)
        period = int(times[-1])
        if span.once or (span.offset_ms == 0 and span.span_ms == period):
            # Played once (core/run_span.py refuses an offset then): one pass, never looped.
            return self.for_trace(trace, delay_ms, None, axis_ms)
        if span.offset_ms == 0:
            return self.for_trace(trace, delay_ms, span.span_ms / 1000.0, axis_ms)
        key = (f"{trace}@{span.offset_ms}", float(delay_ms), span.span_ms, axis_ms)
        if key not in self._cache:
            window = window_trace(times, span.offset_ms, span.span_ms)
            result = omniscient(window, delay_ms, span.span_ms, axis_ms)
            self._cache[key] = replace(result, trace=f"{trace} from {span.offset_ms} ms")
        return self._cache[key]

    def capacity_mbps(self, trace: str, span: RunSpan, from_ms: int,
                      until_ms: int | None = None) -> float:
        """The link's capacity (Mbit/s, 1504-byte opportunities) over [from_ms, until_ms) of
        the run's clock, the trace played as the run played it (until_ms None: the span's
        end)."""
        end = span.span_ms if until_ms is None else min(until_ms, span.span_ms)
        if end <= from_ms:
            raise ValueError(f"no scored ms in [{from_ms}, {end})")
        times = self.times(trace)
        if span.once:
            played = times[times < end]
        else:
            played = looped_times(times, span.offset_ms, span.offset_ms + end)
        count = int(np.count_nonzero(played >= from_ms))
        return 8.0 * OPPORTUNITY_BYTES * count / ((end - from_ms) / 1000.0) / 1e6

    def for_run(self, spec: RunSpec, metrics: Mapping[str, Any] | None = None,
                run_dir: Path | None = None, reverse: bool = False) -> OmniscientResult:
        """The whole span's reference, or with a run's metrics, the one on its own ms; with
        `reverse`, the other direction's (a two-way run's `reverse` metrics)."""
        axis = None if metrics is None else signal_axis(metrics, run_dir)
        trace = spec.ack_trace if reverse else spec.data_trace
        return self.for_played(trace, spec.delay_ms, self.span(spec), axis)

    def scored_span(self, spec: RunSpec) -> tuple[int, int]:
        """(from, to) ms of the run that are scored: after the warm-up to the span's end."""
        span = self.span(spec)
        return span.warmup_ms, span.span_ms

    def self_inflicted_ms(self, spec: RunSpec, metrics: Mapping[str, Any],
                          run_dir: Path | None = None) -> float:
        """The run's p95 end-to-end delay (metrics.json) minus the omniscient one on its ms."""
        return self_inflicted_delay_ms(float(metrics["p95_e2e_delay_ms"]),
                                       self.for_run(spec, metrics, run_dir))
