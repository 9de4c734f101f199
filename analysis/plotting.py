"""Figure helpers shared by the experiments: one style, PNG and SVG side by side."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a server; figures go to files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def new_figure(width: float = 6.4, height: float = 4.4) -> tuple[Figure, plt.Axes]:
    fig, ax = plt.subplots(figsize=(width, height), dpi=110)
    ax.grid(True, which="both", alpha=0.3)
    return fig, ax


def save(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    fig.tight_layout()
    for p in paths:
        fig.savefig(p)
    plt.close(fig)
    return paths


def readable_log_axis(axis: matplotlib.axis.Axis) -> None:
    """Log scale with plain 1-2-5 tick labels (50, 100, 200 ms) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())
