"""What the Sprout experiments share: runs set up as in the Sprout paper (20 ms
each way, infinite queue as its emulator, the whole trace once; quick mode the
first 60 s), read back as throughput vs self-inflicted delay.
"""
from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any, Mapping

from analysis.coverage import NOT_RUN, Coverage
from analysis.self_inflicted import OmniscientReferences
from analysis.summary import write_csv
from analysis.tradeoff import run_row
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceError, TraceMissing, TraceSet
from experiments.base import Experiment

log = logging.getLogger(__name__)

DELAY_MS = 20
QUEUE = "infinite"
QUICK_DURATION_S = 60.0

MISSING_COLUMNS = ["scheme", "data_trace", "ack_trace", "params", "trial", "reason"]


class TradeoffExperiment(Experiment):
    """An experiment whose figure is throughput vs Sprout's self-inflicted delay."""

    delay_ms = DELAY_MS
    queue = QUEUE

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None,
                 quick_duration_s: float = QUICK_DURATION_S) -> None:
        super().__init__(traces, options)
        self.quick_duration_s = quick_duration_s

    def duration_s(self, quick: bool) -> float | None:
        """None is the whole data trace once (`--once`)."""
        return self.quick_duration_s if quick else None

    def span_text(self, quick: bool) -> str:
        return f"first {self.quick_duration_s:g} s of each trace" if quick else \
            "whole trace once"

    def setup_text(self, quick: bool) -> str:
        """The conditions every figure states."""
        return (f"{self.delay_ms} ms fixed delay each way, {self.queue} queue, "
                f"{self.span_text(quick)}")

    def run_spec(self, scheme: str, data_trace: str, ack_trace: str, quick: bool, trial: int,
                 **params: Any) -> RunSpec:
        return RunSpec(experiment=self.name, scheme=scheme, data_trace=data_trace,
                       ack_trace=ack_trace, delay_ms=self.delay_ms, queue=self.queue,
                       duration_s=self.duration_s(quick), trial=trial,
                       params=make_params(**params), options=self.run_options())

    def with_traces(self, traces: TraceSet) -> "TradeoffExperiment":
        twin = copy.copy(self)
        twin._traces = traces
        return twin

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """The summary's rows: throughput and self-inflicted delay of every finished run."""
        return self.rows(cov, OmniscientReferences(self.traces))

    def trace_problem(self, *names: str) -> str | None:
        """Which of these traces cannot be used here (missing.csv has the details), or None."""
        for name in names:
            try:
                self.traces.resolve(name)
            except TraceError as e:
                log.debug("trace %s cannot be used: %s", name, e)
                if isinstance(e, TraceMissing):
                    return f"trace missing: {name}"
                return f"trace unusable: {name} ({type(e).__name__})"
        return None

    def describe(self, spec: RunSpec) -> dict[str, Any]:
        """Columns this experiment adds to every run's row."""
        return {}

    def rows(self, cov: Coverage, refs: OmniscientReferences) -> list[dict[str, Any]]:
        """One row per finished run; a run whose trace is gone here is left out (logged)."""
        rows = []
        for record in cov.records():
            try:
                row = run_row(record, refs)
            except TraceError as e:
                log.warning("%s: no self-inflicted delay without its trace: %s",
                            record.path.name, e)
                continue
            row.update(self.describe(record.spec))
            rows.append(row)
        return rows

    @staticmethod
    def write_missing(cov: Coverage, out_dir: Path) -> Path:
        """missing.csv: every planned run without a result, with the reason."""
        rows = [{"scheme": c.spec.scheme, "data_trace": c.spec.data_trace,
                 "ack_trace": c.spec.ack_trace, "trial": c.spec.trial, "reason": c.reason,
                 "params": " ".join(f"{k}={v}" for k, v in c.spec.params)}
                for c in cov.missing()]
        return write_csv(out_dir / "missing.csv", rows, MISSING_COLUMNS)

    @staticmethod
    def nothing_on_record(cov: Coverage) -> bool:
        """No run of the matrix has finished or failed: there is nothing to draw."""
        return all(c.reason == NOT_RUN for c in cov.cells)
