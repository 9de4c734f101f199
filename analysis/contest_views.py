"""The contest server's views of one run (the paper's Figures 2-5), from its data.log.

- throughput: what the link delivered in non-overlapping 500 ms windows, against
  the capacity (delivery opportunities) in the same windows, Mbit/s;
- delay: the contest's end-to-end delay sampled every ms (the signal delay of
  analysis.metrics plus the fixed one-way delay), on a log scale.

PNG and SVG each, into a folder of the caller's choosing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from analysis.mahimahi_log import parse_log
from analysis.metrics import binned_rates, signal_delay_series
from analysis.plotting import new_figure, readable_log_axis, save

WINDOW_MS = 500
VIEW_STEMS = ("throughput", "delay")


def plot_run_views(run_dir: Path, out_dir: Path, fixed_delay_ms: float, title: str
                   ) -> dict[str, list[Path]]:
    """Both views of a run; {"throughput": [png, svg], "delay": [png, svg]}."""
    log = parse_log(run_dir / "data.log")
    rates = binned_rates(log, WINDOW_MS)
    fig, ax = new_figure(8.0, 3.8)
    width_s = WINDOW_MS / 1000.0
    ax.fill_between(rates.start_s, rates.capacity_mbps, step="post", color="tab:gray",
                    alpha=0.35, label=f"capacity ({WINDOW_MS} ms windows)")
    ax.step(rates.start_s, rates.throughput_mbps, where="post", color="tab:blue",
            label=f"throughput ({WINDOW_MS} ms windows)")
    ax.set_xlim(float(rates.start_s[0]), float(rates.start_s[-1]) + width_s)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mbit/s")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    files = {"throughput": save(fig, out_dir, "throughput")}

    t_s, delay_ms = signal_delay_series(log, fixed_delay_ms)
    fig, ax = new_figure(8.0, 3.8)
    ax.plot(t_s, np.maximum(delay_ms, 1), color="tab:red", linewidth=0.7,
            label="end-to-end delay, every ms")
    ax.set_yscale("log")
    readable_log_axis(ax.yaxis)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("delay (ms, log scale)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    files["delay"] = save(fig, out_dir, "delay")
    return files
