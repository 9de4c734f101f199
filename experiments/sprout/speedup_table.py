"""The Sprout paper's summary table: Sprout's average speed-up and delay reduction
against each other scheme, as CSV and Markdown.

Averaged the way the paper averages (its introduction's table, recomputed exactly from its
Figure 7), over the panels (one trace in one direction) where both schemes have a point:

- speed-up = the mean over the panels of Sprout's throughput / the other's throughput;
- delay reduction = the mean of the other's self-inflicted delays / the mean of Sprout's
  (a ratio of means, not a mean of ratios; each delay at least `DELAY_FLOOR_MS`).

table.csv also gives the mean of the per-panel delay ratios (labelled as such) and the
geometric means of both per-panel ratios.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from analysis.scheme_labels import display_name, scheme_label
from analysis.summary import write_csv
from experiments.sprout.tradeoff_points import TradeoffPoint

NOT_REPORTED = "not reported here"
NO_RESULT = "no result"

CSV_COLUMNS = ["scheme", "label", "panels", "speedup", "paper_speedup", "delay_reduction",
               "paper_delay_reduction", "speedup_geomean", "delay_reduction_geomean",
               "delay_reduction_mean_of_ratios", "mean_self_inflicted_delay_ms",
               "reference_mean_self_inflicted_delay_ms"]


@dataclass(frozen=True)
class PaperValue:
    """What the paper reports for Sprout against one scheme (None: not reported)."""

    speedup: float | None = None
    delay_reduction: float | None = None


@dataclass(frozen=True)
class SpeedupRow:
    scheme: str
    label: str
    panels: int  # panels where both schemes have a point; the means are over these
    speedup: float | None
    speedup_geomean: float | None
    delay_reduction: float | None  # the paper's: mean of the other's delays / mean of Sprout's
    delay_reduction_geomean: float | None
    paper: PaperValue
    delay_reduction_mean_of_ratios: float | None = None
    mean_delay_ms: float | None = None            # the other's, over the common panels
    reference_mean_delay_ms: float | None = None  # Sprout's, over the same panels

    def to_dict(self) -> dict[str, object]:
        return {"scheme": self.scheme, "label": self.label, "panels": self.panels,
                "speedup": self.speedup, "paper_speedup": self.paper.speedup,
                "delay_reduction": self.delay_reduction,
                "paper_delay_reduction": self.paper.delay_reduction,
                "speedup_geomean": self.speedup_geomean,
                "delay_reduction_geomean": self.delay_reduction_geomean,
                "delay_reduction_mean_of_ratios": self.delay_reduction_mean_of_ratios,
                "mean_self_inflicted_delay_ms": self.mean_delay_ms,
                "reference_mean_self_inflicted_delay_ms": self.reference_mean_delay_ms}


def panel_ratios(reference: TradeoffPoint, other: TradeoffPoint) -> tuple[float, float]:
    """(speed-up, delay reduction) of `reference` against `other` on one panel."""
    if reference.throughput_mbps <= 0 or other.throughput_mbps <= 0:
        raise ValueError("throughput ratios need positive throughputs (failed runs are "
                         "never points)")
    return (reference.throughput_mbps / other.throughput_mbps,
            other.plotted_delay_ms / reference.plotted_delay_ms)


def speedup_table(panels: Mapping[str, Mapping[str, TradeoffPoint]],
                  schemes: Sequence[str], reference: str = "sprout",
                  paper: Mapping[str, PaperValue] | None = None) -> list[SpeedupRow]:
    """One row per scheme in `schemes` (the reference excluded), in that order.

    `panels` maps a panel name to its points by scheme. A scheme with no panel in
    common with the reference still gets a row (panels = 0, no ratios).
    """
    paper = paper or {}
    rows = []
    for scheme in schemes:
        if scheme == reference:
            continue
        speedups: list[float] = []
        reductions: list[float] = []
        providers: list[str | None] = []
        delays: list[float] = []
        reference_delays: list[float] = []
        for points in panels.values():
            other = points.get(scheme)
            if other is not None:
                providers += other.providers
            if other is None or reference not in points:
                continue
            speedup, reduction = panel_ratios(points[reference], other)
            speedups.append(speedup)
            reductions.append(reduction)
            delays.append(other.plotted_delay_ms)
            reference_delays.append(points[reference].plotted_delay_ms)
        mean_delay, reference_mean = _mean(delays), _mean(reference_delays)
        rows.append(SpeedupRow(
            scheme=scheme, label=scheme_label(scheme, providers), panels=len(speedups),
            speedup=_mean(speedups), speedup_geomean=_geomean(speedups),
            delay_reduction=None if mean_delay is None or reference_mean is None
            else mean_delay / reference_mean,
            delay_reduction_geomean=_geomean(reductions),
            paper=paper.get(scheme, PaperValue()),
            delay_reduction_mean_of_ratios=_mean(reductions),
            mean_delay_ms=mean_delay, reference_mean_delay_ms=reference_mean))
    return rows


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _geomean(values: list[float]) -> float | None:
    return statistics.geometric_mean(values) if values else None


def write_table_csv(rows: Sequence[SpeedupRow], path: Path) -> Path:
    return write_csv(path, [row.to_dict() for row in rows], CSV_COLUMNS)


def _times(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.2f}x"


def table_markdown(rows: Sequence[SpeedupRow], reference: str = "sprout",
                   title: str = "", notes: Sequence[str] = ()) -> str:
    ref = display_name(reference)
    lines = [f"# {title}", ""] if title else []
    lines += [f"| {ref} vs | panels | {ref}'s speed-up (ours) | (paper) | "
              f"delay reduction, ratio of means (ours) | (paper) | "
              f"mean of per-panel ratios (ours) | mean self-inflicted delay (ours) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        mean = "" if row.mean_delay_ms is None else f"{row.mean_delay_ms / 1000:.2f} s"
        lines.append(
            f"| {row.label} | {row.panels} | {_times(row.speedup, NO_RESULT)} | "
            f"{_times(row.paper.speedup, NOT_REPORTED)} | "
            f"{_times(row.delay_reduction, NO_RESULT)} | "
            f"{_times(row.paper.delay_reduction, NOT_REPORTED)} | "
            f"{_times(row.delay_reduction_mean_of_ratios, NO_RESULT)} | {mean} |")
    if notes:
        lines.append("")
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_table_markdown(rows: Sequence[SpeedupRow], path: Path, reference: str = "sprout",
                         title: str = "", notes: Sequence[str] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table_markdown(rows, reference, title, notes))
    return path
