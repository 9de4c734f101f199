"""The contest server's views of one run (the paper's Figures 2-5), from its data.log.

- throughput: what the link delivered in non-overlapping 500 ms windows, against
  the capacity (delivery opportunities) in the same windows, Mbit/s;
- delay: the contest's end-to-end delay sampled every ms, on a log scale: at each
  ms t, t minus the send time of the most recently sent packet among those
  received by t (`e2e_delay_per_ms`). A packet is sent when it reaches the link
  (the sender sits right before it) and received its fixed delay after it
  leaves. The contest's 95% end-to-end delay is this series' 95th percentile
  (analysis.metrics computes it through the signal delay, which gives the same).

PNG and SVG each, into a folder of the caller's choosing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from analysis.mahimahi_log import parse_log
from analysis.mahimahi_log import LinkLog
from analysis.metrics import NoDeliveries, binned_rates
from analysis.plotting import new_figure, readable_log_axis, save

WINDOW_MS = 500
VIEW_STEMS = ("throughput", "delay")


def e2e_delay_per_ms(log: LinkLog, fixed_delay_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """(time in s, end-to-end delay in ms) at every ms from the first reception to the last."""
    if log.departure_time.size == 0:
        raise NoDeliveries(f"{log.source}: no packet left the link; no delay series")
    received = log.departure_time + float(fixed_delay_ms)
    sent = (log.departure_time - log.departure_delay).astype(float)
    order = np.argsort(received, kind="stable")
    received, newest_sent = received[order], np.maximum.accumulate(sent[order])
    axis = np.arange(np.ceil(received[0]), np.floor(received[-1]) + 1)
    latest = np.searchsorted(received, axis, side="right") - 1
    return axis / 1000.0, axis - newest_sent[latest]


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

    t_s, delay_ms = e2e_delay_per_ms(log, fixed_delay_ms)
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
