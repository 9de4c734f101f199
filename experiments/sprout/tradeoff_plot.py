"""Throughput vs self-inflicted delay panels, as the Sprout paper draws them.

Delay on a log axis, reversed, so better is up and to the right; one colour
and marker per scheme; error bars (one standard deviation over trials) when a
point has more than one trial. Only finished runs are points: whatever is
missing is written on the panel as a note, never drawn as a zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from analysis.fidelity import LATE_RULE
from analysis.plotting import reversed_log_delay_axis
from analysis.scheme_labels import SchemeStyle, scheme_style
from experiments.sprout.tradeoff_points import DELAY_FLOOR_MS, TradeoffPoint

DELAY_LABEL = "self-inflicted delay (ms, log scale, reversed)"
THROUGHPUT_LABEL = "throughput (Mbit/s)"
NOTE_COLOUR = "firebrick"
EMPTY_XLIM = (2000.0, 10.0)
# Room around the points: a factor on the log delay axis, a fraction above the top.
X_MARGIN = 1.8
Y_HEADROOM = 1.15


@dataclass(frozen=True)
class Series:
    """Points drawn alike: one scheme, or one scheme swept over a parameter."""

    label: str
    style: SchemeStyle
    points: tuple[TradeoffPoint, ...]
    point_labels: tuple[str, ...] = ()  # written beside each point
    connect: bool = False  # a line through the points, in order


@dataclass(frozen=True)
class PublishedPoint:
    """A published result drawn faintly beside ours (e.g. the paper's point for a scheme)."""

    scheme: str
    throughput_mbps: float
    delay_ms: float
    label: str = "paper"


PUBLISHED_ALPHA = 0.35


def _draw_published(ax: Axes, points: Sequence[PublishedPoint]) -> None:
    for p in points:
        style = scheme_style(p.scheme)
        x = max(p.delay_ms, DELAY_FLOOR_MS)
        ax.plot([x], [p.throughput_mbps], linestyle="none", marker=style.marker,
                markersize=8, markerfacecolor="none", markeredgecolor=style.colour,
                alpha=PUBLISHED_ALPHA + 0.25, zorder=1)
        ax.annotate(p.label, (x, p.throughput_mbps), textcoords="offset points",
                    xytext=(-4, -9), fontsize=5.5, color=style.colour, alpha=0.8,
                    ha="right")


def series_per_scheme(points: Iterable[TradeoffPoint]) -> list[Series]:
    return [Series(p.label, scheme_style(p.scheme), (p,)) for p in points]


def _x_errors(points: Sequence[TradeoffPoint]) -> list[list[float]] | None:
    """(lower, upper) error lengths, the lower end kept above the axis floor."""
    if all(p.trials < 2 for p in points):
        return None
    lower = [min(p.delay_sd, max(0.0, p.plotted_delay_ms - DELAY_FLOOR_MS)) for p in points]
    return [lower, [p.delay_sd for p in points]]


def _draw_series(ax: Axes, s: Series) -> None:
    xs = [p.plotted_delay_ms for p in s.points]
    ys = [p.throughput_mbps for p in s.points]
    yerr = [p.throughput_sd for p in s.points] if any(p.trials > 1 for p in s.points) else None
    size = 9 if s.style.marker == "*" else 6
    ax.errorbar(xs, ys, xerr=_x_errors(s.points), yerr=yerr, label=s.label,
                color=s.style.colour, marker=s.style.marker, markersize=size,
                linestyle="-" if s.connect else "none",
                linewidth=1, capsize=2, elinewidth=0.8)
    for p, x, y in zip(s.points, xs, ys):
        if p.late:  # hollow: the emulator was late in at least one of its runs
            ax.plot([x], [y], linestyle="none", marker=s.style.marker, markersize=size,
                    markerfacecolor="white", markeredgecolor=s.style.colour, zorder=3)
    for text, x, y in zip(s.point_labels, xs, ys):
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=7,
                    color=s.style.colour)


def _limits(ax: Axes, series: Sequence[Series],
            published: Sequence[PublishedPoint] = ()) -> None:
    """Every point (and error bar) well inside the panel; throughput from 0."""
    points = [p for s in series for p in s.points]
    if not points and not published:
        ax.set_xscale("log")
        ax.set_xlim(*EMPTY_XLIM)
        return
    lows = [max(p.plotted_delay_ms - p.delay_sd, DELAY_FLOOR_MS) for p in points]
    highs = [p.plotted_delay_ms + p.delay_sd for p in points]
    tops = [p.throughput_mbps + p.throughput_sd for p in points]
    lows += [max(p.delay_ms, DELAY_FLOOR_MS) for p in published]
    highs += [max(p.delay_ms, DELAY_FLOOR_MS) for p in published]
    tops += [p.throughput_mbps for p in published]
    low, high, top = min(lows), max(highs), max(tops)
    ax.set_xscale("log")
    ax.set_xlim(high * X_MARGIN, low / X_MARGIN)  # reversed: better is to the right
    ax.set_ylim(0, top * Y_HEADROOM)


def draw_panel(ax: Axes, series: Sequence[Series], title: str, notes: Sequence[str] = (),
               empty_message: str = "no finished runs", legend: bool = True,
               published: Sequence[PublishedPoint] = (), remarks: Sequence[str] = ()) -> None:
    """One panel; `notes` (what is missing and why) go under the axis in red, `remarks`
    (how it was measured) in grey; `published` points are drawn faintly, labelled."""
    drawn = [s for s in series if s.points]
    _draw_published(ax, published)
    for s in drawn:
        _draw_series(ax, s)
    notes = list(notes)
    if any(p.self_inflicted_delay_ms < DELAY_FLOOR_MS for s in drawn for p in s.points):
        notes.append(f"points at {DELAY_FLOOR_MS:g} ms: self-inflicted delay "
                     f"<= {DELAY_FLOOR_MS:g} ms")
    late = sum(p.late for s in drawn for p in s.points)
    if late:
        notes.append(f"hollow: {late} run(s) with the emulator late ({LATE_RULE}); rerun "
                     "with --redo-late")
    _limits(ax, drawn, published)
    if not drawn:
        ax.text(0.5, 0.5, empty_message, transform=ax.transAxes, ha="center", va="center",
                color=NOTE_COLOUR, fontsize=9, wrap=True)
    reversed_log_delay_axis(ax, DELAY_LABEL)
    ax.set_ylabel(THROUGHPUT_LABEL)
    ax.set_title(title, fontsize=9)
    if remarks:
        ax.text(0.01, 0.01, "\n".join(remarks), transform=ax.transAxes, ha="left",
                va="bottom", fontsize=5.5, color="dimgray")
    if notes:
        ax.text(0.0, -0.2, "\n".join(notes), transform=ax.transAxes, ha="left", va="top",
                fontsize=6.5, color=NOTE_COLOUR)
    if legend and drawn:
        ax.legend(fontsize=7, loc="best")


def shared_legend(fig: Figure, axes: Iterable[Axes], columns: int = 4) -> None:
    """One legend for a multi-panel figure: every label once, in first-seen order."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), loc="lower center",
                   ncol=columns, fontsize=8, frameon=False)
