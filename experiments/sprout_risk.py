"""Sprout's risk knob (NSDI'13): the forecast's confidence swept from 5% to 95%.

Sprout sends what the forecast says will be delivered with the chosen
probability; a lower confidence percentile is cautious (less throughput, less
delay), a higher one aggressive. One downlink trace (data over
Verizon-LTE-short.down, ACKs over .up), 20 ms each way, infinite queue, the
whole trace once; quick mode the first 60 s. Sprout-EWMA and Cubic are the
reference points.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from analysis.claims import Claim
from analysis.coverage import missing_notes
from analysis.plotting import new_figure, save
from analysis.scheme_labels import display_name, scheme_style
from analysis.self_inflicted import OmniscientReferences
from analysis.summary import write_csv
from analysis.tradeoff import points_by
from analysis.tradeoff_plot import Series, draw_panel, series_per_scheme
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments.sprout_claims import RISK_CLAIMS
from experiments.tradeoff_base import QUICK_DURATION_S, TradeoffExperiment

CONFIDENCES = (0.05, 0.25, 0.50, 0.75, 0.95)
REFERENCES = ("sprout-ewma", "cubic")
DATA_TRACE = "Verizon-LTE-short.down"
ACK_TRACE = "Verizon-LTE-short.up"

COLUMNS = ["scheme", "label", "confidence", "trial", "throughput_mbps", "p95_e2e_delay_ms",
           "self_inflicted_delay_ms", "omniscient_p95_e2e_delay_ms", "utilization",
           "capacity_mbps", "provider", "cc_used", "lateness_p99_us", "lateness_ok",
           "cpu_steal_pct", "run"]


def percent(confidence: float) -> str:
    return f"{confidence * 100:g}%"


class SproutRisk(TradeoffExperiment):
    name = "sprout-risk"
    title = "Sprout's confidence parameter: throughput vs self-inflicted delay"
    quick_note = f"first {QUICK_DURATION_S:g} s of the trace"

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None,
                 confidences: Sequence[float] = CONFIDENCES,
                 references: Sequence[str] = REFERENCES,
                 quick_duration_s: float = QUICK_DURATION_S) -> None:
        super().__init__(traces, options, quick_duration_s)
        self.confidences = tuple(confidences)
        self.references = tuple(references)

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        specs = []
        for trial in range(1, trials + 1):
            specs += [self.run_spec("sprout", DATA_TRACE, ACK_TRACE, quick, trial, confidence=c)
                      for c in self.confidences]
            specs += [self.run_spec(s, DATA_TRACE, ACK_TRACE, quick, trial)
                      for s in self.references]
        return specs

    def describe(self, spec: RunSpec) -> dict[str, Any]:
        return {"confidence": spec.param("confidence")}

    def claims(self) -> tuple[Claim, ...]:
        return RISK_CLAIMS

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if self.nothing_on_record(cov):
            return []
        rows = self.rows(cov, OmniscientReferences(self.traces))
        order = ("sprout", *self.references)
        rows.sort(key=lambda r: (order.index(r["scheme"]), r["confidence"] or 0, r["trial"]))
        sweep = points_by((r for r in rows if r["scheme"] == "sprout"),
                          key=lambda r: r["confidence"])
        known = [c for c in self.confidences if c in sweep]
        series = [Series(f"{display_name('sprout')} (confidence "
                         f"{percent(self.confidences[0])}-{percent(self.confidences[-1])})",
                         scheme_style("sprout"), tuple(sweep[c] for c in known),
                         point_labels=tuple(percent(c) for c in known), connect=True)]
        series += series_per_scheme(points_by(r for r in rows if r["scheme"] != "sprout").values())
        problem = self.trace_problem(DATA_TRACE, ACK_TRACE)
        notes = [] if problem else missing_notes(cov.cells, self._group)
        trials = f"; mean ± sd of {cov.trials} trials" if cov.trials > 1 else ""
        fig, ax = new_figure(6.8, 5.2)
        draw_panel(ax, series, f"{self.title}\n{DATA_TRACE} / {ACK_TRACE} (downlink)\n"
                   f"{self.setup_text(cov.quick)}{trials}", notes, problem or "no finished runs")
        return [write_csv(out_dir / "summary.csv", rows, COLUMNS), self.write_missing(cov, out_dir),
                *save(fig, out_dir, "throughput-vs-delay")]

    @staticmethod
    def _group(spec: RunSpec) -> str:
        confidence = spec.param("confidence")
        name = display_name(spec.scheme)
        return name if confidence is None else f"{name} {percent(confidence)}"
