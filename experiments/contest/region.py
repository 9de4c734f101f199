"""The achievability region (Protocol Design Contests, CCR 2014, Figure 7) and the
winners against Sprout.

A population of protocols on the contest's training trace (data over
Verizon-LTE-short.down then 20 ms, ACKs over 20 ms then .up, infinite queue,
the whole trace once; quick mode the first 30 s): parameter sweeps of every
controller family (experiments/contest/families.py: fixed window, AIMD, the
delay trigger, the winners' delivery rate x target delay, Sprout's confidence,
sheen's delay threshold, Sprout-EWMA). Its fixed-window, AIMD and delay-trigger
runs are warm-ups A, B and C's own runs (same RunSpecs apart from the
experiment), so with a shared run pool they are run once.

Figures: region.png (throughput vs 95% end-to-end delay, log delay axis, the
upper-left convex frontier, Sprout and the two 2013 winners marked) and
winners.png (score of the omniscient protocol, Sprout, the winners and each
family's best). CSVs: summary.csv (one row per protocol), frontier.csv,
winners.csv; claims.json/.md. The paper's population was about 3,000 student
protocols; ours is the sweeps above, and the figure says so.
"""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from analysis.coverage import Coverage, missing_notes
from experiments.contest.frontier import RegionPoint, convex_frontier, pareto_efficient
from analysis.omniscient import OmniscientResult, omniscient
from analysis.plotting import new_figure, readable_log_axis, save
from analysis.scheme_labels import scheme_style
from analysis.summary import write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceError, TraceSet, trace_duration_ms
from experiments.base import Experiment
from experiments.contest.claims import PAPER_POPULATION, REGION_CLAIMS
from experiments.contest.families import (DELAY_MS, QUICK_DURATION_S, REGION_FAMILIES, TRAINING,
                                          family_of, is_marked, params_text)

# Where each marked protocol's name goes (points, alignment): apart, as they sit close.
MARK_OFFSETS = {"Sprout": (-12, 6, "right"), "dasjoshma": (12, -10, "left"),
                "johnnybameesh": (12, 4, "left")}

MIN_LABEL_GAP_DECADES = 0.07  # frontier labels closer than this on the delay axis are skipped

SUMMARY_COLUMNS = ["name", "family", "scheme", "params", "marked", "trials", "throughput_mbps",
                   "p95_e2e_delay_ms", "p95_signal_delay_ms", "score", "power", "utilization",
                   "capacity_mbps", "on_frontier", "efficient", "late_trials", "runs"]


def region_matrix(experiment: str, trace: str, quick: bool, trials: int) -> list[RunSpec]:
    return [spec for family in REGION_FAMILIES
            for spec in family.runs(experiment, trace, quick, trials)]


def protocol_rows(records: list[Any]) -> list[dict[str, Any]]:
    """One row per protocol (scheme + parameters): the mean over its finished trials."""
    groups: dict[tuple, list[Any]] = {}
    for record in records:
        groups.setdefault((record.spec.scheme, record.spec.params), []).append(record)
    rows = []
    for (scheme, params), recs in groups.items():
        spec = recs[0].spec
        marked = is_marked(spec)
        row: dict[str, Any] = {
            "name": marked or f"{family_of(spec)} {params_text(spec)}",
            "family": family_of(spec), "scheme": scheme, "marked": marked or "",
            "params": " ".join(f"{k}={v}" for k, v in params), "label": params_text(spec),
            "trials": len(recs), "runs": " ".join(r.path.name for r in recs),
            "late_trials": sum(r.metrics.get("lateness_ok") is False for r in recs)}
        row.update(dict(params))
        for key in ("throughput_mbps", "p95_e2e_delay_ms", "p95_signal_delay_ms", "score",
                    "power", "utilization", "capacity_mbps"):
            values = [float(v) for r in recs if (v := r.metrics.get(key)) is not None]
            row[key] = statistics.fmean(values) if values else None
        rows.append(row)
    return rows


def region_points(rows: list[dict[str, Any]]) -> list[RegionPoint]:
    return [RegionPoint(r["name"], r["p95_e2e_delay_ms"], r["throughput_mbps"]) for r in rows
            if r.get("p95_e2e_delay_ms") and r.get("throughput_mbps") is not None]


def omniscient_on(traces: TraceSet, trace: str, quick: bool) -> OmniscientResult | None:
    try:
        path = traces.resolve(f"{trace}.down")
    except TraceError:
        return None
    span = None if not quick or QUICK_DURATION_S * 1000 >= trace_duration_ms(path) \
        else int(QUICK_DURATION_S * 1000)
    return omniscient(path, DELAY_MS, span)


def span_text(quick: bool) -> str:
    return f"first {QUICK_DURATION_S:g} s" if quick else "whole trace once"


class ContestRegion(Experiment):
    name = "contest-region"
    title = "The achievability region on the contest's training trace"
    quick_note = f"each family's quick sweep, first {QUICK_DURATION_S:g} s"
    claims = REGION_CLAIMS
    headline = ("region",)
    headline_caption = ("The achievability region on the contest's training trace: every "
                        "protocol, the frontier, Sprout and the winners")

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return region_matrix(self.name, TRAINING, quick, trials)

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """One row per protocol (its trials' mean), named, as the frontier needs."""
        return protocol_rows(cov.records())

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        rows = self.claim_rows(cov)
        if not rows:
            return []
        points = region_points(rows)
        hull = convex_frontier(points)
        vertices = {p.name for p in hull}
        efficient = {p.name for p in pareto_efficient(points)}
        for row in rows:
            row.update(on_frontier=row["name"] in vertices, efficient=row["name"] in efficient)
        rows.sort(key=lambda r: (r["family"], r["p95_e2e_delay_ms"] or 0))
        bound = omniscient_on(self.traces, TRAINING, cov.quick)
        notes = missing_notes(cov.cells, family_of)
        files = [write_csv(out_dir / "summary.csv", rows, SUMMARY_COLUMNS),
                 write_csv(out_dir / "frontier.csv",
                           [r for p in hull for r in rows if r["name"] == p.name],
                           SUMMARY_COLUMNS)]
        files += self._region_plot(rows, hull, bound, cov.quick, notes, out_dir)
        files += self._winners(rows, bound, cov.quick, out_dir)
        return files

    def _region_plot(self, rows: list[dict[str, Any]], hull: list[RegionPoint],
                     bound: OmniscientResult | None, quick: bool, notes: list[str],
                     out_dir: Path) -> list[Path]:
        fig, ax = new_figure(8.0, 6.0)
        for family in dict.fromkeys(r["family"] for r in rows):
            mine = [r for r in rows if r["family"] == family]
            style = scheme_style(mine[0]["scheme"])
            ax.plot([r["p95_e2e_delay_ms"] for r in mine], [r["throughput_mbps"] for r in mine],
                    linestyle="none", marker=style.marker, color=style.colour, alpha=0.55,
                    markersize=5, label=f"{family} ({len(mine)})")
        if hull:
            xs = [p.delay_ms for p in hull]
            ys = [p.throughput_mbps for p in hull]
            ax.plot(xs, ys, "-", color="black", linewidth=1.2,
                    label="frontier (upper-left convex hull)")
            last_x = None
            for p in hull:
                if any(r["name"] == p.name and r["marked"] for r in rows):
                    continue  # named below
                if last_x is not None and p.x - last_x < MIN_LABEL_GAP_DECADES:
                    continue  # too close to the last label to read (frontier.csv has all)
                last_x = p.x
                label = next(r["label"] for r in rows if r["name"] == p.name)
                ax.annotate(label, (p.delay_ms, p.throughput_mbps), textcoords="offset points",
                            xytext=(-4, 5), fontsize=6, ha="right")
        for r in rows:
            if r["marked"]:
                style = scheme_style(r["scheme"])
                ax.plot([r["p95_e2e_delay_ms"]], [r["throughput_mbps"]], marker=style.marker,
                        color=style.colour, markersize=13, markeredgecolor="black",
                        linestyle="none")
                dx, dy, ha = MARK_OFFSETS.get(r["marked"], (12, 0, "left"))
                ax.annotate(f"{r['marked']} ({r['label']})",
                            (r["p95_e2e_delay_ms"], r["throughput_mbps"]),
                            textcoords="offset points", xytext=(dx, dy), fontsize=8,
                            fontweight="bold", va="center", ha=ha,
                            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                                  "alpha": 0.8})
        if bound is not None:
            ax.plot([bound.p95_e2e_delay_ms], [bound.throughput_mbps], "X", color="black",
                    markersize=11, linestyle="none", label="omniscient (the ceiling)")
        ax.set_xscale("log")
        readable_log_axis(ax.xaxis)
        ax.set_xlabel("95% end-to-end delay (ms, log scale)")
        ax.set_ylabel("average throughput (Mbit/s)")
        ax.legend(fontsize=7, loc="lower right")
        title = (f"{self.title}\n{TRAINING}.down / .up, {DELAY_MS} ms each way, infinite "
                 f"queue, {span_text(quick)}\nour population: {len(rows)} protocols (parameter "
                 f"sweeps); the paper's: {PAPER_POPULATION}")
        if notes:
            title += "\nmissing: " + "; ".join(notes)
        ax.set_title(title, fontsize=8)
        return save(fig, out_dir, "region")

    def _winners(self, rows: list[dict[str, Any]], bound: OmniscientResult | None, quick: bool,
                 out_dir: Path) -> list[Path]:
        """The winners against Sprout on score, with the omniscient ceiling and each
        family's best for scale."""
        table: list[dict[str, Any]] = []
        if bound is not None:
            table.append({"name": "omniscient", "kind": "ceiling", "score": bound.score,
                          "throughput_mbps": bound.throughput_mbps,
                          "p95_e2e_delay_ms": bound.p95_e2e_delay_ms})
        for name in ("Sprout", "dasjoshma", "johnnybameesh"):
            row = next((r for r in rows if r["marked"] == name), None)
            if row is not None:
                table.append({**row, "name": name, "kind": "paper's protocol"})
        for family in dict.fromkeys(r["family"] for r in rows):
            scored = [r for r in rows if r["family"] == family and r["score"] is not None]
            if scored:
                best = max(scored, key=lambda r: r["score"])
                table.append({**best, "name": f"best {family}: {best['label']}",
                              "kind": "family's best"})
        sprout = next((t["score"] for t in table if t["name"] == "Sprout"), None)
        for t in table:
            t["score_minus_sprout"] = (None if sprout is None or t.get("score") is None
                                       else t["score"] - sprout)
        files = [write_csv(out_dir / "winners.csv", table,
                           ["name", "kind", "params", "score", "score_minus_sprout",
                            "throughput_mbps", "p95_e2e_delay_ms", "trials", "runs"])]
        shown = [t for t in table if t.get("score") is not None]
        if not shown:
            return files
        fig, ax = new_figure(7.2, 0.5 + 0.32 * len(shown))
        colours = {"ceiling": "tab:red", "paper's protocol": "tab:blue",
                   "family's best": "tab:gray"}
        names = [t["name"] for t in shown][::-1]
        scores = [t["score"] for t in shown][::-1]
        ax.hlines(range(len(names)), min(scores) - 0.5, scores, color="lightgray", zorder=1)
        ax.scatter(scores, range(len(names)), color=[colours[t["kind"]] for t in shown][::-1],
                   zorder=2)
        ax.set_yticks(range(len(names)), names)
        for y, t in enumerate(shown[::-1]):
            ax.annotate(f"{t['score']:.3f}  ({t['throughput_mbps']:.2f} Mbit/s, "
                        f"{t['p95_e2e_delay_ms']:.0f} ms)", (t["score"], y),
                        textcoords="offset points", xytext=(3, -3), fontsize=6)
        lo = min(scores)
        ax.set_xlim(lo - 0.5, max(scores) + 1.2)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_xlabel("score = ln(Mbit/s) - ln(95% end-to-end delay, ms); higher is better",
                      fontsize=8)
        ax.set_title(f"The 2013 winners against Sprout on the training trace "
                     f"({span_text(quick)})", fontsize=8)
        return files + save(fig, out_dir, "winners")
