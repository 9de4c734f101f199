"""Sprout's self-inflicted delay for finished runs.

Self-inflicted delay = the run's 95% end-to-end delay minus the omniscient
protocol's on the same data trace, the same span and the same fixed delay
(the link spec, section 4; `analysis.omniscient`). The span is one pass of the
trace for a `--once` run, else the run's first `duration_s` seconds (the trace
loops, as the emulator plays it). Within the span, the omniscient delay is taken
on the run's own ms (first to last arrival of a delivered packet, where the
run's signal delay is defined), so an outage the run's delay leaves out is left
out of the reference too.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

from analysis.mahimahi_log import parse_log
from analysis.metrics import MetricsError, arrival_times_ms
from analysis.omniscient import OmniscientResult, omniscient, self_inflicted_delay_ms
from core.runspec import RunSpec
from core.traces import TraceSet

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
        self._cache: dict[tuple[str, float, int | None, tuple[int, int] | None],
                          OmniscientResult] = {}

    def for_trace(self, trace: str, delay_ms: float, duration_s: float | None,
                  axis_ms: tuple[int, int] | None = None) -> OmniscientResult:
        key = (trace, float(delay_ms), span_ms(duration_s), axis_ms)
        if key not in self._cache:
            path = self.traces.resolve(trace)
            log.debug("omniscient reference for %s, %s ms, span %s, on ms %s", trace,
                      delay_ms, key[2], axis_ms)
            self._cache[key] = omniscient(path, delay_ms, key[2], axis_ms)
        return self._cache[key]

    def for_run(self, spec: RunSpec, metrics: Mapping[str, Any] | None = None,
                run_dir: Path | None = None) -> OmniscientResult:
        """The whole span's reference, or with a run's metrics, the one on its own ms."""
        axis = None if metrics is None else signal_axis(metrics, run_dir)
        return self.for_trace(spec.data_trace, spec.delay_ms, spec.duration_s, axis)

    def self_inflicted_ms(self, spec: RunSpec, metrics: Mapping[str, Any],
                          run_dir: Path | None = None) -> float:
        """The run's p95 end-to-end delay (metrics.json) minus the omniscient one on its ms."""
        return self_inflicted_delay_ms(float(metrics["p95_e2e_delay_ms"]),
                                       self.for_run(spec, metrics, run_dir))
