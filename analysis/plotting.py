"""Figure helpers shared by the experiments: one style, PNG and SVG side by side."""
from __future__ import annotations

import math

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a server; figures go to files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def new_figure(width: float = 6.4, height: float = 4.4) -> tuple[Figure, plt.Axes]:
    fig, ax = plt.subplots(figsize=(width, height), dpi=110)
    ax.grid(True, which="both", alpha=0.3)
    return fig, ax


def new_grid(rows: int, cols: int, panel_width: float = 6.0, panel_height: float = 4.6
             ) -> tuple[Figure, list[plt.Axes]]:
    """A figure of rows x cols panels in the shared style, the axes row by row."""
    fig, axes = plt.subplots(rows, cols, figsize=(panel_width * cols, panel_height * rows),
                             dpi=110, squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat:
        ax.grid(True, which="both", alpha=0.3)
    return fig, flat


def save(fig: Figure, out_dir: Path, stem: str, tight: bool = True) -> list[Path]:
    """PNG and SVG side by side; `tight=False` keeps a layout the caller already made."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    if tight:
        fig.tight_layout()
    for p in paths:
        fig.savefig(p)
    plt.close(fig)
    return paths


# Beyond this many decades in view, 2 and 5 ticks keep their lines but lose
# their labels, which would otherwise run into each other (20000 10000 5000).
LABEL_ONLY_POWERS_BEYOND_DECADES = 3.0


def readable_log_axis(axis: matplotlib.axis.Axis) -> None:
    """Log scale with plain 1-2-5 tick labels (50, 100, 200 ms) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def label(value: float, _pos: int) -> str:
        lo, hi = sorted(abs(v) for v in axis.get_view_interval())
        wide = lo > 0 and math.log10(hi / lo) > LABEL_ONLY_POWERS_BEYOND_DECADES
        mantissa = value / 10 ** math.floor(math.log10(value)) if value > 0 else 1.0
        return "" if wide and round(mantissa) != 1 else f"{value:g}"

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


def reversed_log_delay_axis(ax: plt.Axes, label: str) -> None:
    """A delay x axis as the papers draw it: log scale, reversed, so better is up and right."""
    ax.set_xscale("log")
    readable_log_axis(ax.xaxis)
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    ax.set_xlabel(label)
