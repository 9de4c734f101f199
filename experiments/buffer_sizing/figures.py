"""Sizing Router Buffers' figures from the runs' rows and their logs.

- `sawtooth`: one panel per buffer of the single flow (under-, exactly and over-buffered,
  the paper's Figures 4-6): its congestion window (the kernel's, from tcp_probe) and the
  bottleneck's queue (every packet, from the emulator's log), with RTT x C and B marked.
- `min-buffer`: the minimum buffer for 98%, 99.5% and 99.9% utilization against n, log-log,
  beside RTT x C / sqrt(n) and RTT x C (the paper's Figure 11); a minimum the grid only
  bounds is drawn as a triangle pointing the way it may lie.
- `utilization`: utilization against the buffer (as a multiple of RTT x C / sqrt(n)), one
  line per n.
- `table.md` and `table.csv`: the utilization table in Figure 15's layout, the paper's
  ns2 and GSR numbers beside ours where the paper has that n.
"""
from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from analysis.coverage import Coverage
from analysis.plotting import new_figure, new_grid, readable_log_axis, save
from analysis.queue_log import backlog_at
from analysis.summary import write_csv
from analysis.tcp_probe import read_probe
from experiments.buffer_sizing import model
from experiments.buffer_sizing.claims import SAWTOOTH, SWEEP, TARGETS
from experiments.buffer_sizing.minimum import AT_MOST, MORE_THAN
from experiments.buffer_sizing.paper import FIG15
from runkinds.shared_bottleneck.metrics import load_window

log = logging.getLogger(__name__)

STEP_S = 0.01  # the queue drawn every 10 ms
TARGET_STYLE = {0.98: ("tab:blue", "o"), 0.995: ("tab:orange", "s"), 0.999: ("tab:red", "D")}
TABLE_COLUMNS = ["flows", "multiple", "buffer_packets", "utilization_pct", "paper_sim_pct",
                 "paper_gsr_pct", "paper_model_pct", "runs"]


def draw_all(cov: Coverage, runs: list[dict[str, Any]], minima: list[dict[str, Any]],
             out_dir: Path, notes: list[str]) -> list[Path]:
    files: list[Path] = []
    saw = [r for r in runs if r["study"] == SAWTOOTH]
    if saw:
        files += sawtooth_figure(cov, saw, out_dir)
    sweep = [r for r in runs if r["study"] == SWEEP and r.get("utilization") is not None]
    if sweep:
        files += min_buffer_figure(minima, sweep, out_dir, notes)
        files += utilization_figure(sweep, out_dir)
        files += table(sweep, out_dir)
    return files


def sawtooth_figure(cov: Coverage, rows: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    by_run = {r.path.name: r for r in cov.records()}
    rows = sorted(rows, key=lambda r: (r["planned"], r["trial"]))
    rows = [r for i, r in enumerate(rows) if i == 0 or r["planned"] != rows[i - 1]["planned"]]
    fig, axes = new_grid(len(rows), 1, panel_width=11.0, panel_height=3.4)
    for ax, row in zip(axes, rows):
        record = by_run.get(row["run"])
        if record is None:
            continue
        window = load_window(record.path, record.spec, record.meta)
        q = window.log
        times = np.arange(0.0, q.departure_us.max() / 1e6 if q.departure_us.size else 0.0,
                          STEP_S)
        ax.plot(times, backlog_at(q, np.round(times * 1e6).astype(np.int64)),
                color="tab:blue", lw=0.8, label="queue (packets)")
        probe = read_probe(record.path / "flow-01")
        if probe is not None and len(probe):
            ax.plot(probe.time_s - window.base_s, probe.snd_cwnd, color="tab:red", lw=0.8,
                    label="cwnd (packets)")
        ax.axhline(row["bdp_packets"], color="gray", ls="--", lw=0.8, label="RTT x C")
        ax.axhline(row["buffer_packets"], color="black", ls=":", lw=0.8, label="B")
        ax.axvspan(window.start_s, window.end_s, color="tab:green", alpha=0.06,
                   label="scored")
        period = row.get("period_median_s")
        ax.set_title(f"one Reno flow, B = {row['planned']:g} x RTT x C ({row['buffer_packets']} "
                     f"packets): utilization {100 * (row.get('utilization') or 0):.1f}% "
                     f"(model {100 * row['model_utilization']:.1f}%), period "
                     + (f"{period:.1f} s" if period else "-")
                     + f" (model {row['model_period_s']:.1f} s)", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("packets")
        ax.legend(fontsize=7, loc="upper right", ncol=5)
    fig.suptitle("The single flow's sawtooth (Sizing Router Buffers, Figs. 4-6): 10 Mbit/s, "
                 "RTT 50 ms", fontsize=10)
    return save(fig, out_dir, "sawtooth")


def min_buffer_figure(minima: list[dict[str, Any]], sweep: list[dict[str, Any]],
                      out_dir: Path, notes: Sequence[str]) -> list[Path]:
    fig, ax = new_figure(7.2, 5.2)
    flows = sorted({int(r["flows"]) for r in sweep})
    bdp = model.bdp_packets(50, 100)
    n_line = np.geomspace(1, max(max(flows), 2), 100)
    ax.plot(n_line, bdp / np.sqrt(n_line), color="black", lw=1, label="RTT x C / sqrt(n)")
    ax.plot(n_line, np.full_like(n_line, bdp), color="gray", ls="--", lw=1,
            label="RTT x C (rule of thumb)")
    for target in TARGETS:
        colour, marker = TARGET_STYLE[target]
        points = sorted((r for r in minima if r["target"] == target), key=lambda r: r["flows"])
        exact = [r for r in points if r["bound"] not in (AT_MOST, MORE_THAN)]
        ax.plot([r["flows"] for r in exact], [r["min_buffer_packets"] for r in exact],
                color=colour, marker=marker, ls="-", lw=1,
                label=f"minimum for {100 * target:g}% (measured)")
        for r, symbol in [(r, "v" if r["bound"] == AT_MOST else "^") for r in points
                          if r["bound"] in (AT_MOST, MORE_THAN)]:
            ax.plot([r["flows"]], [r["min_buffer_packets"]], color=colour, marker=symbol,
                    ls="none", mfc="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    readable_log_axis(ax.xaxis)
    readable_log_axis(ax.yaxis)
    ax.set_xlabel("long-lived flows n")
    ax.set_ylabel("buffer (packets)")
    ax.set_title("Minimum buffer for a utilization, against n (Fig. 11): 50 Mbit/s, RTT "
                 "80-120 ms\n(open triangles: the grid only bounds it, below or above)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    for i, note in enumerate(notes[:4]):
        ax.text(0.99, 0.98 - 0.04 * i, note[:90], transform=ax.transAxes, ha="right",
                va="top", fontsize=6, color="tab:red")
    return save(fig, out_dir, "min-buffer")


def utilization_figure(sweep: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    fig, ax = new_figure(7.2, 5.0)
    cmap = _colours(sorted({int(r["flows"]) for r in sweep}))
    for n, colour in cmap.items():
        rows = sorted((r for r in sweep if int(r["flows"]) == n), key=lambda r: r["multiple"])
        ax.plot([r["multiple"] for r in rows], [100 * r["utilization"] for r in rows],
                marker="o", color=colour, lw=1, label=f"n = {n}")
    for level in (98.0, 99.5, 99.9):
        ax.axhline(level, color="gray", ls=":", lw=0.7)
    ax.set_xscale("log")
    readable_log_axis(ax.xaxis)
    ax.set_xlabel("buffer / (RTT x C / sqrt(n))")
    ax.set_ylabel("utilization (%)")
    ax.set_title("Utilization against the buffer, per number of flows", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    return save(fig, out_dir, "utilization")


def table(sweep: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """Figure 15's layout: per n and multiple, our utilization beside the paper's."""
    paper = {(t.flows, t.multiple): t for t in FIG15}
    cells: dict[tuple[int, float], list[dict[str, Any]]] = {}
    for r in sweep:
        if int(r["flows"]) >= 32:
            cells.setdefault((int(r["flows"]), float(r["planned"])), []).append(r)
    rows = []
    for (n, multiple), members in sorted(cells.items()):
        utilization = float(np.median([r["utilization"] for r in members]))
        theirs = paper.get((n, multiple))
        rows.append({"flows": n, "multiple": multiple,
                     "buffer_packets": members[0]["buffer_packets"],
                     "utilization_pct": 100 * utilization,
                     "paper_sim_pct": theirs.sim if theirs else None,
                     "paper_gsr_pct": theirs.experiment if theirs else None,
                     "paper_model_pct": theirs.model if theirs else None,
                     "runs": " ".join(r["run"] for r in members)})
    files = [write_csv(out_dir / "table.csv", rows, TABLE_COLUMNS)]
    lines = ["| n | buffer / rule | packets | ours (%) | paper ns2 (%) | paper GSR (%) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['flows']} | {r['multiple']:g}x | {r['buffer_packets']} | "
                     f"{r['utilization_pct']:.2f} | {_pct(r['paper_sim_pct'])} | "
                     f"{_pct(r['paper_gsr_pct'])} |")
    lines.append("")
    lines.append("The paper's numbers are for its n = 100 (and 200-400); at n = 32 and 64 it "
                 "has none.")
    path = out_dir / "table.md"
    path.write_text("\n".join(lines) + "\n")
    return files + [path]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _colours(flows: list[int]) -> dict[int, Any]:
    import matplotlib
    cmap = matplotlib.colormaps["viridis"]
    span = max(1.0, math.log(max(flows)))
    return {n: cmap(0.9 * math.log(n) / span) for n in flows}
