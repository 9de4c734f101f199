"""Sprout's risk knob (NSDI'13): the forecast's confidence swept from 95% down to 5%, on the
T-Mobile 3G (UMTS) uplink, as the paper ran it.

Sprout sends what its forecast says will be delivered with the chosen confidence: 95% (the
default) sends what the forecast's 5th percentile promises; lower confidences send more, for
more throughput and more delay. Runs as in experiments/sprout/tradeoff.py (by default both
directions loaded at once; the uplink is scored: data over TMobile-UMTS-driving.up, the
downlink loaded too), with Sprout-EWMA and Cubic as reference points, and the paper's five
points beside ours. The 95% run is the same run as sprout-fig7's Sprout on that network (no
parameter: the default), so the two experiments share it.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Mapping, Sequence

from analysis.coverage import missing_notes
from analysis.plotting import new_figure, save
from analysis.scheme_labels import display_name, scheme_style
from experiments.sprout.self_inflicted import OmniscientReferences
from analysis.summary import RunRecord, write_csv
from experiments.sprout.tradeoff_points import points_by
from experiments.sprout.tradeoff_plot import PublishedPoint, Series, draw_panel, series_per_scheme
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments.sprout import paper as sprout_paper
from experiments.sprout.claims import RISK_CLAIMS
from experiments.sprout.tradeoff import TradeoffExperiment
from schemes.sprout import DEFAULT_CONFIDENCE

# The paper's confidences, highest (the default, most cautious) first.
CONFIDENCES = (0.95, 0.75, 0.50, 0.25, 0.05)
REFERENCES = ("sprout-ewma", "cubic")
NETWORK = "TMobile-UMTS-driving"
DOWN, UP = f"{NETWORK}.down", f"{NETWORK}.up"

COLUMNS = ["scheme", "label", "confidence", "trial", "throughput_mbps", "p95_e2e_delay_ms",
           "self_inflicted_delay_ms", "omniscient_p95_e2e_delay_ms", "utilization",
           "capacity_mbps", "provider", "cc_used", "lateness_p99_us", "lateness_ok",
           "cpu_steal_pct", "run", "direction", "data_trace", "ack_trace", "loads",
           "offset_s", "warmup_s", "played_s", "scored_s", "trace_loops",
           "paper_throughput_mbps", "paper_self_inflicted_delay_ms"]


def percent(confidence: float) -> str:
    return f"{confidence * 100:g}%"


class SproutRisk(TradeoffExperiment):
    name = "sprout-risk"
    title = "Sprout's confidence parameter: throughput vs self-inflicted delay"
    quick_note = "one stretch of the T-Mobile 3G traces, both directions at once"
    claims = RISK_CLAIMS

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None,
                 confidences: Sequence[float] = CONFIDENCES,
                 references: Sequence[str] = REFERENCES, **timing: float) -> None:
        super().__init__(traces, options, **timing)
        self.confidences = tuple(confidences)
        self.references = tuple(references)

    def _spec(self, scheme: str, quick: bool, trial: int, **params: Any) -> RunSpec:
        offset = self.quick_offset_s(DOWN, UP) if quick else 0.0
        # One way: data over the uplink's trace. Both: the downlink's trace on the data side,
        # as in sprout-fig7 (the same runs), and the uplink scored from the reverse metrics.
        data, ack = (UP, DOWN) if self.one_way else (DOWN, UP)
        return self.run_spec(scheme, data, ack, quick, trial, offset_s=offset, **params)

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        specs = []
        for trial in range(1, trials + 1):
            specs += [self._spec("sprout", quick, trial,
                                 confidence=None if c == DEFAULT_CONFIDENCE else c)
                      for c in self.confidences]
            specs += [self._spec(s, quick, trial) for s in self.references]
        return specs

    def scored_directions(self, record: RunRecord) -> tuple[bool, ...]:
        """The uplink only: the reverse direction of a two-way run, the data of a one-way."""
        return (False,) if self.one_way else (True,)

    def describe(self, spec: RunSpec, reverse: bool = False) -> dict[str, Any]:
        confidence = spec.param("confidence")
        if spec.scheme == "sprout" and confidence is None:
            confidence = DEFAULT_CONFIDENCE
        paper = sprout_paper.RISK.get(confidence) if spec.scheme == "sprout" else \
            sprout_paper.FIGURE7[sprout_paper.RISK_TRACE].get(spec.scheme)
        return {"confidence": confidence, "direction": "uplink", "data_trace": UP,
                "ack_trace": DOWN,
                "paper_throughput_mbps": paper.throughput_mbps if paper else None,
                "paper_self_inflicted_delay_ms": paper.delay_ms if paper else None}

    def published(self) -> list[PublishedPoint]:
        points = [PublishedPoint("sprout", p.throughput_mbps, p.delay_ms,
                                 f"paper {percent(c)}")
                  for c, p in sprout_paper.RISK.items() if c in self.confidences]
        points += [PublishedPoint(s, p.throughput_mbps, p.delay_ms)
                   for s, p in sprout_paper.FIGURE7[sprout_paper.RISK_TRACE].items()
                   if s in self.references]
        return points

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if self.nothing_on_record(cov):
            return []
        out_dir = self.figure_dir(out_dir)
        rows = self.rows(cov, OmniscientReferences(self.traces))
        order = ("sprout", *self.references)
        rows.sort(key=lambda r: (order.index(r["scheme"]), -(r["confidence"] or 0), r["trial"]))
        sweep = points_by((r for r in rows if r["scheme"] == "sprout"),
                          key=lambda r: r["confidence"])
        known = [c for c in self.confidences if c in sweep]
        series = [Series(f"{display_name('sprout')} (confidence "
                         f"{percent(self.confidences[0])}-{percent(self.confidences[-1])})",
                         scheme_style("sprout"), tuple(sweep[c] for c in known),
                         point_labels=tuple(percent(c) for c in known), connect=True)]
        series += series_per_scheme(points_by(r for r in rows if r["scheme"] != "sprout").values())
        problem = self.trace_problem(DOWN, UP)
        notes = [] if problem else missing_notes(cov.cells, self._group)
        trials = f"; mean ± sd of {cov.trials} trials" if cov.trials > 1 else ""
        fig, ax = new_figure(6.8, 5.4)
        setup = textwrap.fill(f"{self.setup_text(cov.quick)}{trials}", 100)
        draw_panel(ax, series, f"{self.title}\nT-Mobile 3G (UMTS) uplink: data over {UP}\n"
                   f"{setup}", notes, problem or "no finished runs",
                   published=self.published(),
                   remarks=["hollow faint markers labelled \"paper\": the paper's points",
                            "confidence 95% (the default) = the forecast's 5th percentile"])
        return [write_csv(out_dir / "summary.csv", rows, COLUMNS), self.write_missing(cov, out_dir),
                *save(fig, out_dir, "throughput-vs-delay")]

    @staticmethod
    def _group(spec: RunSpec) -> str:
        confidence = spec.param("confidence")
        name = display_name(spec.scheme)
        if spec.scheme == "sprout" and confidence is None:
            confidence = DEFAULT_CONFIDENCE
        return name if confidence is None else f"{name} {percent(confidence)}"
