"""Sprout's self-inflicted delay for finished runs.

Self-inflicted delay = the run's 95% end-to-end delay minus the omniscient
protocol's on the same data trace, the same span and the same fixed delay
(the link spec, section 4; `analysis.omniscient`). The span is one pass of the
trace for a `--once` run, else the run's first `duration_s` seconds (the trace
loops, as the emulator plays it).
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

from analysis.omniscient import OmniscientResult, omniscient, self_inflicted_delay_ms
from core.runspec import RunSpec
from core.traces import TraceSet

log = logging.getLogger(__name__)


def span_ms(duration_s: float | None) -> int | None:
    """The omniscient window for a run: None for one pass, else its duration in ms."""
    return None if duration_s is None else int(round(duration_s * 1000))


class OmniscientReferences:
    """The omniscient protocol per (trace, fixed delay, span), computed once each.

    Traces are resolved through the trace set, so a missing or corrupt trace
    raises `core.traces.TraceError` naming it.
    """

    def __init__(self, traces: TraceSet) -> None:
        self.traces = traces
        self._cache: dict[tuple[str, float, int | None], OmniscientResult] = {}

    def for_trace(self, trace: str, delay_ms: float, duration_s: float | None) -> OmniscientResult:
        key = (trace, float(delay_ms), span_ms(duration_s))
        if key not in self._cache:
            path = self.traces.resolve(trace)
            log.debug("omniscient reference for %s, %s ms, span %s", trace, delay_ms, key[2])
            self._cache[key] = omniscient(path, delay_ms, key[2])
        return self._cache[key]

    def for_run(self, spec: RunSpec) -> OmniscientResult:
        return self.for_trace(spec.data_trace, spec.delay_ms, spec.duration_s)

    def self_inflicted_ms(self, spec: RunSpec, metrics: Mapping[str, Any]) -> float:
        """The run's p95 end-to-end delay (metrics.json) minus the omniscient one."""
        return self_inflicted_delay_ms(float(metrics["p95_e2e_delay_ms"]), self.for_run(spec))
