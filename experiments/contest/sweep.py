"""Contest warm-ups B and C: one controller family swept on the training trace.

Set up like warm-up A (experiments/contest/warmup_a.py): data over
Verizon-LTE-short.down then 20 ms, ACKs over 20 ms then .up, infinite queue, the
whole 140 s trace once; quick mode the first 30 s. Figures: throughput vs p95
signal delay and vs p95 end-to-end delay, each point labelled by its
parameters; power (and score) vs the swept parameter, one line per value of the
other. summary.csv has one row per finished run; claims.json/.md the claims.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.coverage import Coverage, missing_notes
from analysis.fidelity import LATE_RULE
from analysis.omniscient import OmniscientResult, omniscient
from analysis.plotting import new_figure, new_grid, reversed_log_delay_axis, save
from analysis.summary import write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceError, trace_duration_ms
from experiments.base import Experiment
from experiments.contest.families import (DELAY_MS, QUICK_DURATION_S, TRAINING, Family, params_text)

METRIC_COLUMNS = ["trial", "throughput_mbps", "capacity_mbps", "utilization",
                  "p95_queue_delay_ms", "p95_signal_delay_ms", "p95_e2e_delay_ms", "power",
                  "score", "lateness_p99_us", "ack_lateness_p99_us", "lateness_ok",
                  "cpu_steal_pct", "duration_s", "run"]


class ContestSweep(Experiment):
    """One family over the training trace; `x` is the swept parameter on the power plot,
    `lines` the parameter drawn as one line per value."""

    family: Family
    x: str
    x_label: str
    lines: str
    lines_label: str

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return self.family.runs(self.name, TRAINING, quick, trials)

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """One row per finished run of the matrix: its metrics and parameters."""
        rows = []
        for record in cov.records():
            row: dict[str, Any] = dict(record.metrics)
            row.update(dict(record.spec.params), trial=record.spec.trial, run=record.path.name,
                       label=params_text(record.spec), duration_s=record.meta.get("duration_s"))
            rows.append(row)
        return rows

    def rows(self, store: ExperimentStore) -> tuple[list[dict[str, Any]], bool, list[str]]:
        """(one row per finished run of the matrix, quick mode?, notes on missing runs)."""
        cov = self.coverage(store)
        rows = self.claim_rows(cov)
        rows.sort(key=lambda r: (r[self.lines], r[self.x], r["trial"]))
        notes = missing_notes(cov.cells, lambda s: self.family.name)
        return rows, cov.quick, notes

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        rows, quick, notes = self.rows(store)
        if not rows:
            return []
        params = sorted({k for s in self.family.full for k in s})
        files = [write_csv(out_dir / "summary.csv", rows, [*params, "label", *METRIC_COLUMNS])]
        subtitle = self._subtitle(quick)
        for delay, what in (("p95_signal_delay_ms", "signal"), ("p95_e2e_delay_ms", "end-to-end")):
            files += self._tradeoff_plot(rows, delay, what, subtitle, quick, notes, out_dir)
        files += self._parameter_plot(rows, subtitle, out_dir)
        return files

    @staticmethod
    def _subtitle(quick: bool) -> str:
        span = f"first {QUICK_DURATION_S:g} s" if quick else "whole trace once"
        return (f"{TRAINING}.down / .up, {DELAY_MS} ms each way, infinite queue, {span}")

    def _tradeoff_plot(self, rows: list[dict[str, Any]], delay: str, what: str, subtitle: str,
                       quick: bool, notes: list[str], out_dir: Path) -> list[Path]:
        fig, ax = new_figure(7.2, 5.0)
        values = sorted({r[self.lines] for r in rows})
        colours = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown",
                   "tab:pink", "tab:gray", "tab:olive"]
        for i, value in enumerate(values):
            mine = [r for r in rows if r[self.lines] == value]
            colour = colours[i % len(colours)]
            ax.plot([r[delay] for r in mine], [r["throughput_mbps"] for r in mine], "o",
                    color=colour, label=f"{self.lines_label} {value}")
            late = [r for r in mine if r.get("lateness_ok") is False]
            if late:
                ax.plot([r[delay] for r in late], [r["throughput_mbps"] for r in late], "o",
                        markerfacecolor="white", markeredgecolor=colour)
            for r in mine:
                ax.annotate(r["label"], (r[delay], r["throughput_mbps"]),
                            textcoords="offset points", xytext=(4, 3), fontsize=6)
        bound = self._omniscient(quick)
        if bound is not None:
            x = bound.p95_signal_delay_ms if what == "signal" else bound.p95_e2e_delay_ms
            ax.plot([x], [bound.throughput_mbps], "*", markersize=12, color="tab:red",
                    label="omniscient (the ceiling)")
        if any(r.get("lateness_ok") is False for r in rows):
            ax.plot([], [], "o", markerfacecolor="white", markeredgecolor="k",
                    label=f"hollow: emulator late ({LATE_RULE})")
        ax.legend(fontsize=7, loc="upper left")
        reversed_log_delay_axis(ax, f"95th percentile {what} delay (ms, log scale, reversed)")
        ax.set_ylabel("average throughput (Mbit/s)")
        title = f"{self.title}\n{subtitle}"
        if notes:
            title += "\nmissing: " + "; ".join(notes)
        ax.set_title(title, fontsize=8)
        stem = "throughput-vs-delay" if what == "signal" else "throughput-vs-e2e-delay"
        return save(fig, out_dir, stem)

    def _parameter_plot(self, rows: list[dict[str, Any]], subtitle: str, out_dir: Path
                        ) -> list[Path]:
        fig, axes = new_grid(1, 2, 4.8, 4.2)
        ax_p, ax_s = axes
        for value in sorted({r[self.lines] for r in rows}):
            mine = sorted((r for r in rows if r[self.lines] == value),
                          key=lambda r: r[self.x])
            xs = [r[self.x] for r in mine]
            ax_p.plot(xs, [r["power"] for r in mine], "o-", label=f"{self.lines_label} {value}")
            ax_s.plot(xs, [r["score"] for r in mine], "o-", label=f"{self.lines_label} {value}")
        for ax, what in ((ax_p, "power (Mbit/s per s of p95 signal delay)"),
                         (ax_s, "score: ln(Mbit/s) - ln(p95 e2e delay, ms)")):
            ax.set_xlabel(self.x_label)
            ax.set_ylabel(what)
            ax.legend(fontsize=7)
        fig.suptitle(f"{self.title}: power and score vs {self.x_label}\n{subtitle}",
                     fontsize=8)
        return save(fig, out_dir, "power-vs-parameter")

    def _omniscient(self, quick: bool) -> OmniscientResult | None:
        try:
            trace = self.traces.resolve(f"{TRAINING}.down")
        except TraceError:
            return None
        span = None if not quick or QUICK_DURATION_S * 1000 >= trace_duration_ms(trace) \
            else int(QUICK_DURATION_S * 1000)
        return omniscient(trace, DELAY_MS, span)
