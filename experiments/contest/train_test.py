"""Training against testing (Protocol Design Contests, CCR 2014, Figure 8).

The same protocols on the contest's training trace (Verizon-LTE-short: the 2013
contest trained on it) and on a testing trace from another network and day
(TMobile-LTE-short), on the contest path of each (data over .down then 20 ms,
ACKs over 20 ms then .up, infinite queue, the whole trace once; quick mode the
first 30 s). The protocols are a thinned population: each family's quick
settings of the region (experiments/contest/families.py), every other one in
quick mode. The training runs are the region's own (same RunSpecs apart from
the experiment), so with a shared run pool only the testing side runs here.

The validation trace, ATT-LTE-driving-2016 (an AT&T LTE drive: a third
network, as the paper validated on an AT&T LTE snippet), is the leaderboard's
(experiments/contest/board.py) and `contest submit --trace validation`'s.

Figures: train-test.png (utilization vs 95% end-to-end delay, each protocol on
training and testing joined by a line) and score-train-vs-test.png (score on
training vs on testing, Spearman's rho). summary.csv: one row per protocol.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.claims.checks import spearman
from analysis.coverage import Coverage, missing_notes
from analysis.plotting import new_grid, readable_log_axis, save
from analysis.scheme_labels import scheme_style
from analysis.summary import write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec
from experiments.base import Experiment
from experiments.contest.claims import TRAIN_TEST_CLAIMS
from experiments.contest.families import (DELAY_MS, QUICK_DURATION_S, REGION_FAMILIES, TESTING,
                                          TRAINING, Family, family_of)
from experiments.contest.region import protocol_rows

METRICS = ("throughput_mbps", "utilization", "p95_e2e_delay_ms", "score", "capacity_mbps")
COLUMNS = ["name", "family", "scheme", "params",
           *[f"{side}_{m}" for side in ("train", "test") for m in METRICS],
           "train_runs", "test_runs"]


def thinned(family: Family, quick: bool) -> tuple[dict[str, Any], ...]:
    """The protocols taken from a family: its quick settings (every other in quick mode)."""
    return family.quick[::2] if quick else family.quick


class ContestTrainTest(Experiment):
    name = "contest-train-test"
    title = "Training against testing: the same protocols on two networks"
    quick_note = f"every other quick setting of each family, first {QUICK_DURATION_S:g} s"
    claims = TRAIN_TEST_CLAIMS
    compared_metrics = tuple(f"{side}_{m}" for side in ("train", "test")
                             for m in ("score", "throughput_mbps", "p95_e2e_delay_ms"))

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        specs = []
        for trace in (TRAINING, TESTING):
            for family in REGION_FAMILIES:
                picked = Family(family.name, family.scheme, full=thinned(family, False),
                                quick=thinned(family, True))
                specs += picked.runs(self.name, trace, quick, trials)
        return specs

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """One row per protocol: its training and its testing numbers side by side."""
        sides = {trace: {(r["scheme"], r["params"]): r for r in protocol_rows(
            [rec for rec in cov.records() if rec.spec.data_trace == f"{trace}.down"])}
            for trace in (TRAINING, TESTING)}
        rows = []
        for key, train in sides[TRAINING].items():
            keep = ("name", "family", "scheme", "params", "label")
            row: dict[str, Any] = {k: train[k] for k in keep}
            test = sides[TESTING].get(key)
            for m in METRICS:
                row[f"train_{m}"] = train.get(m)
                row[f"test_{m}"] = test.get(m) if test else None
            row.update(train_runs=train["runs"], test_runs=test["runs"] if test else "")
            rows.append(row)
        return rows

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        rows = self.claim_rows(cov)
        if not rows:
            return []
        notes = missing_notes(cov.cells, lambda s: f"{family_of(s)} on {s.data_trace}")
        files = [write_csv(out_dir / "summary.csv", rows, COLUMNS)]
        files += self._plot(rows, cov.quick, notes, out_dir)
        return files

    def _plot(self, rows: list[dict[str, Any]], quick: bool, notes: list[str], out_dir: Path
              ) -> list[Path]:
        both = [r for r in rows if r["test_score"] is not None and r["train_score"] is not None]
        fig, (ax, ax_s) = new_grid(1, 2, 6.4, 5.4)
        for family in dict.fromkeys(r["family"] for r in rows):
            mine = [r for r in rows if r["family"] == family]
            style = scheme_style(mine[0]["scheme"])
            ax.plot([r["train_p95_e2e_delay_ms"] for r in mine],
                    [r["train_utilization"] for r in mine], linestyle="none",
                    marker=style.marker, color=style.colour, label=f"{family}: training")
            tested = [r for r in mine if r["test_score"] is not None]
            ax.plot([r["test_p95_e2e_delay_ms"] for r in tested],
                    [r["test_utilization"] for r in tested], linestyle="none",
                    marker=style.marker, markerfacecolor="white", markeredgecolor=style.colour,
                    label=f"{family}: testing")
            for r in tested:
                ax.plot([r["train_p95_e2e_delay_ms"], r["test_p95_e2e_delay_ms"]],
                        [r["train_utilization"], r["test_utilization"]], "-",
                        color=style.colour, alpha=0.3, linewidth=0.8)
            ax_s.plot([r["train_score"] for r in tested], [r["test_score"] for r in tested],
                      linestyle="none", marker=style.marker, color=style.colour, label=family)
            for r in tested:
                ax_s.annotate(r["label"], (r["train_score"], r["test_score"]),
                              textcoords="offset points", xytext=(3, 2), fontsize=5)
        ax.set_xscale("log")
        readable_log_axis(ax.xaxis)
        ax.set_xlabel("95% end-to-end delay (ms, log scale)")
        ax.set_ylabel("utilization (throughput / the trace's capacity)")
        ax.set_title(f"filled: {TRAINING} (training); hollow: {TESTING} (testing)",
                     fontsize=8)
        if both:
            lo = min(min(r["train_score"], r["test_score"]) for r in both)
            hi = max(max(r["train_score"], r["test_score"]) for r in both)
            ax_s.plot([lo, hi], [lo, hi], ":", color="gray", label="same score on both")
            rho = spearman([r["train_score"] for r in both], [r["test_score"] for r in both])
            ax_s.set_title(f"score on each trace; Spearman rho {rho:.2f} over {len(both)} "
                           "protocols", fontsize=8)
        ax_s.set_xlabel(f"score on {TRAINING} (training)")
        ax_s.set_ylabel(f"score on {TESTING} (testing)")
        ax_s.legend(fontsize=6, loc="upper left")
        span = f"first {QUICK_DURATION_S:g} s" if quick else "whole trace once"
        title = (f"{self.title}\ncontest path of each trace ({DELAY_MS} ms each way, infinite "
                 f"queue, {span}); {len(rows)} protocols")
        if notes:
            title += "\nmissing: " + "; ".join(notes)
        fig.suptitle(title, fontsize=9)
        handles, labels = ax.get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7)
        fig.tight_layout(rect=(0, 0.16, 1, 0.93))
        return save(fig, out_dir, "train-test", tight=False)
