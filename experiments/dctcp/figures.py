"""The `dctcp` experiment's figures, from its finished runs' artifacts and summary rows.

- fig1-queue: the bottleneck's queue over 10 s after the warm-up, TCP's sawtooth against
  DCTCP's flat line (N = 2), with the buffer and K marked (packets; KB on the right);
- fig13-queue-cdf: the queue's CDF (every millisecond of the scored window), whole range and
  DCTCP's close up, beside Mininet-HiFi's and the hardware's published 5th percentile,
  median, 95th percentile and maximum (experiments/dctcp/paper.py);
- alpha-over-time: each DCTCP flow's alpha in the N = 2 run, and every DCTCP run's mean
  alpha against the analysis's;
- throughput-per-flow: each flow's goodput (its iperf3 server's), per run, with the fair
  share;
- flows-sweep (full run): the peak queue against K + N and the amplitude against the
  analysis, for N = 2, 10, 40;
- k-sweep (full run): goodput and the queue's trough against K, with C RTT / 7 marked.

Runs missing from the plan are listed on fig1 (and in missing.csv).
"""
from __future__ import annotations

import logging
import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from matplotlib.ticker import MaxNLocator

from analysis.coverage import Coverage
from analysis.dctcp_alpha import alpha_timeline
from analysis.plotting import new_figure, new_grid, save
from analysis.scheme_labels import display_name, scheme_label, scheme_style
from analysis.summary import RunRecord
from experiments.dctcp import model, paper
from experiments.dctcp.claims import COMPARE, COMPARE_1G, FLOWS, K_SWEEP
from runkinds.shared_bottleneck.metrics import load_window, queue_samples

log = logging.getLogger(__name__)

FIG1_SPAN_S = 10.0
KB_PER_PACKET = model.PACKET_BYTES / 1000.0
MARKERS = {"Mininet-HiFi": "s", "hardware": "D"}


def draw_all(cov: Coverage, rows: list[dict[str, Any]], out_dir: Path, notes: list[str],
             quick: bool) -> list[Path]:
    records = {r.path.name: r for r in cov.records()}
    files: list[Path] = []
    # At the paper's own 1 Gbit/s (`--rate 1000`) Figures 1 and 13 are files of their own, so
    # a pass at each rate keeps the other's.
    studies = {row["study"] for row in rows}
    study, suffix = (COMPARE_1G, "-1g") if COMPARE_1G in studies else (COMPARE, "")
    compare = [(row, records[row["run"]]) for row in rows
               if row["study"] == study and row["run"] in records]
    for name, draw in ((f"fig1-queue{suffix}", lambda: fig1(compare, notes, quick)),
                       (f"fig13-queue-cdf{suffix}", lambda: fig13(compare)),
                       ("alpha-over-time", lambda: alpha_figure(rows, records)),
                       ("throughput-per-flow", lambda: throughput_figure(rows)),
                       ("flows-sweep", lambda: flows_figure(rows)),
                       ("k-sweep", lambda: k_figure(rows))):
        try:
            fig = draw()
        except Exception as e:  # noqa: BLE001 - an unreadable run: say so, draw the rest
            log.warning("%s not drawn: %s: %s", name, type(e).__name__, e)
            continue
        if fig is not None:
            files += save(fig, out_dir, name)
    return files


def _label(row: dict[str, Any]) -> str:
    name = scheme_label(row["scheme"], [row.get("cc_provider")])
    if row["scheme"] != "dctcp":
        return f"{name}, drop-tail"
    marker = "RED" if row.get("marking") == "red" else "emulator"
    return f"{name}, K={row['k']} ({marker})"


def _samples(record: RunRecord) -> tuple[np.ndarray, np.ndarray, Any]:
    window = load_window(record.path, record.spec, record.meta)
    times, samples = queue_samples(window.log, window.start_s, window.end_s)
    return times, samples, window


def _notes_text(fig: Any, lines: Sequence[str]) -> None:
    if lines:
        fig.text(0.01, 0.005, textwrap.fill("Missing: " + "; ".join(lines), 150),
                 fontsize=7, va="bottom", color="firebrick")


def _packets_to_kb(packets: Any) -> Any:
    return np.asarray(packets, dtype=float) * KB_PER_PACKET


def _kb_to_packets(kb: Any) -> Any:
    return np.asarray(kb, dtype=float) / KB_PER_PACKET


def fig1(compare: list[tuple[dict[str, Any], RunRecord]], notes: list[str], quick: bool) -> Any:
    fig, ax = new_figure(9.0, 4.8)
    start = None
    for row, record in compare:
        times, samples, window = _samples(record)
        start = window.start_s if start is None else start
        keep = times < times[0] + FIG1_SPAN_S
        style = scheme_style(row["scheme"])
        ax.plot(times[keep] - times[0], samples[keep], color=style.colour, lw=0.9,
                label=f"{_label(row)}: median {row['queue_median']:.0f} pkts")
    ax.axhline(paper.HIFI_BUFFER_PACKETS, color="grey", ls="--", lw=0.8,
               label=f"buffer ({paper.HIFI_BUFFER_PACKETS} packets)")
    ax.axhline(paper.PAPER_K, color="tab:olive", ls=":", lw=0.8, label=f"K = {paper.PAPER_K}")
    ax.set_xlabel(f"time after the {compare[0][0].get('warmup_s', 2):g}-s warm-up (s)"
                  if compare else "time (s)")
    ax.set_ylabel("packets in the bottleneck queue")
    ax.set_ylim(0, paper.HIFI_BUFFER_PACKETS * 1.08)
    right = ax.secondary_yaxis("right", functions=(_packets_to_kb, _kb_to_packets))
    right.set_ylabel("KB (1504 bytes per packet)")
    mode = "quick pass, 20 s runs" if quick else "60 s runs"
    rate = compare[0][0].get("rate_mbps", 100) if compare else 100
    ax.set_title(f"DCTCP Fig. 1: queue at the shared port, 2 long flows, {rate:g} Mbit/s, "
                 f"RTT 1 ms ({mode})", fontsize=10)
    # Between DCTCP's line and TCP's troughs: the one empty band of the plot.
    ax.legend(fontsize=8, loc="center right", bbox_to_anchor=(1.0, 0.3))
    _notes_text(fig, notes)
    if not compare:
        ax.text(0.5, 0.5, "no finished run", transform=ax.transAxes, ha="center")
    return fig


def fig13(compare: list[tuple[dict[str, Any], RunRecord]]) -> Any:
    fig, (whole, close) = new_grid(1, 2, 6.0, 4.6)
    for row, record in compare:
        _, samples, _ = _samples(record)
        values = np.sort(samples)
        cdf = np.arange(1, values.size + 1) / values.size
        style = scheme_style(row["scheme"])
        for ax in (whole, close):
            ax.step(values, cdf, where="post", color=style.colour, lw=1.4,
                    label=f"ours: {_label(row)}")
    for ref in paper.QUEUES:
        colour = scheme_style("dctcp" if ref.scheme == "dctcp" else "reno").colour
        xs, ys = [ref.p5, ref.median, ref.p95, ref.max], [0.05, 0.5, 0.95, 1.0]
        name = "DCTCP" if ref.scheme == "dctcp" else "TCP"
        for ax in (whole, close):
            ax.plot(xs, ys, ls=":", lw=0.8, color=colour, marker=MARKERS[ref.label],
                    mfc="none", ms=6, label=f"{ref.label} {name} (p5, median, p95, max)")
    whole.set_xlim(0, paper.HIFI_BUFFER_PACKETS * 1.05)
    close.set_xlim(0, 50)
    for ax, what in ((whole, "all"), (close, "DCTCP's range")):
        ax.set_xlabel("packets in the bottleneck queue (sampled every ms)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        rate = compare[0][0].get("rate_mbps", 100) if compare else 100
        ax.set_title(f"DCTCP Fig. 13: queue CDF, N = 2, {rate:g} Mbit/s ({what})", fontsize=10)
    close.legend(fontsize=7, loc="lower right")
    fig.text(0.5, 0.005, "published numbers count tc's backlog (the packet being sent not "
             "included); ours count it: one packet more for the same queue", fontsize=7,
             ha="center", va="bottom")
    return fig


def alpha_figure(rows: list[dict[str, Any]], records: dict[str, RunRecord]) -> Any:
    dctcp = [r for r in rows if r["scheme"] == "dctcp" and r["run"] in records]
    if not dctcp:
        return None
    fig, (left, right) = new_grid(1, 2, 6.0, 4.6)
    main = next((r for r in dctcp if r["study"] == COMPARE), dctcp[0])
    record = records[main["run"]]
    window = load_window(record.path, record.spec, record.meta)
    for i, facts in enumerate((record.meta.get("verification") or {}).get("flows") or [], 1):
        line = alpha_timeline(record.path / str(facts.get("folder")), window.base_s)
        if line is not None:
            left.plot(line[0] - window.start_s, line[1], lw=0.9, label=f"flow {i}")
    if main.get("theory_alpha") is not None:
        left.axhline(main["theory_alpha"], color="black", ls="--", lw=0.8,
                     label=f"analysis: {main['theory_alpha']:.2f}")
    lo, hi = left.get_xlim()
    left.axvspan(lo, 0, color="grey", alpha=0.1, label="warm-up, after the window")
    left.axvspan(window.end_s - window.start_s, hi, color="grey", alpha=0.1)
    left.set_xlim(lo, hi)
    left.set_xlabel("time after the warm-up (s)")
    left.set_ylabel("alpha")
    left.set_ylim(0, 1.05)
    left.set_title(f"alpha per flow: {_label(main)}, N = {main['flows']}, RTT "
                   f"{main['rtt_ms']} ms", fontsize=10)
    left.legend(fontsize=8)
    for study, marker, name in ((COMPARE, "o", "N = 2, RTT 1 ms"),
                                (FLOWS, "s", "N = 10, 40, RTT 1 ms"),
                                (K_SWEEP, "^", "K sweep: N = 10, RTT 10 ms")):
        points = [r for r in dctcp if r["study"] == study and r.get("alpha_mean") is not None
                  and r.get("theory_alpha") is not None]
        if not points:
            continue
        right.plot([r["theory_alpha"] for r in points], [r["alpha_mean"] for r in points],
                   marker=marker, ls="none", color=scheme_style("dctcp").colour, label=name)
        for i, r in enumerate(points):
            text = f"K={r['k']}" if study == K_SWEEP else f"N={r['flows']}"
            right.annotate(text, (r["theory_alpha"], r["alpha_mean"]), fontsize=6,
                           textcoords="offset points", xytext=(4, 6 if i % 2 else -9))
    right.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="measured = analysis")
    right.axhspan(0.1, 0.7, color="tab:olive", alpha=0.08, label="claimed band 0.1-0.7")
    right.set_xlim(0, 1.05)
    right.set_ylim(0, 1.05)
    right.set_xlabel("analysis: alpha^2 (1 - alpha/4) = 2 / W*")
    right.set_ylabel("measured: mean alpha over flows and the window")
    right.set_title("each DCTCP run's alpha against the analysis", fontsize=10)
    right.legend(fontsize=7, loc="upper left")
    return fig


def throughput_figure(rows: list[dict[str, Any]]) -> Any:
    runs = [r for r in rows if r.get("flow_goodput_mbps")]
    if not runs:
        return None
    cols = min(4, len(runs))
    fig, axes = new_grid((len(runs) + cols - 1) // cols, cols, 3.6, 3.0)
    for ax, row in zip(axes, runs):
        goodputs = [g if g is not None else 0.0 for g in row["flow_goodput_mbps"]]
        style = scheme_style(row["scheme"])
        flows = np.arange(1, len(goodputs) + 1)
        ax.bar(flows, goodputs, color=style.colour, width=0.8)
        if row.get("goodput_mbps") is not None:
            ax.axhline(row["goodput_mbps"] / int(row["flows"]), color="black", lw=0.9,
                       ls="--", label="fair share of the port's goodput")
        ax.set_ylim(0, max(goodputs + [1.0]) * 1.25)
        ax.set_xlabel("flow", fontsize=8)
        ax.set_ylabel("goodput (Mbit/s)", fontsize=8)
        fairness = row.get("jain_fairness")
        ax.set_title(f"{display_name(row['scheme'])} N={row['flows']}, "
                     + (f"K={row['k']}" if row.get("k") is not None else "drop-tail")
                     + f", RTT {row['rtt_ms']} ms\nport {row.get('goodput_mbps') or 0:.1f} "
                     f"Mbit/s" + (f", Jain {fairness:.3f}" if fairness is not None else ""),
                     fontsize=8)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in axes[len(runs):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=6, loc="lower left")
    fig.suptitle("throughput per flow (each flow's iperf3 server, over its own run)",
                 fontsize=10)
    return fig


def flows_figure(rows: list[dict[str, Any]]) -> Any:
    sweep = sorted((r for r in rows if r["scheme"] == "dctcp" and r["rtt_ms"] == 1
                    and r["study"] in (COMPARE, FLOWS) and r.get("queue_peak") is not None),
                   key=lambda r: r["flows"])
    if len({r["flows"] for r in sweep}) < 2:
        return None
    fig, (left, right) = new_grid(1, 2, 6.0, 4.6)
    n = np.array([r["flows"] for r in sweep], dtype=float)
    colour = scheme_style("dctcp").colour
    left.plot(n, [r["queue_peak"] for r in sweep], "o-", color=colour,
              label="peak (99th percentile at arrivals)")
    left.plot(n, [r["queue_max"] for r in sweep], "^", color=colour, mfc="none", label="max")
    left.plot(n, [r["queue_median"] for r in sweep], "s--", color="grey", label="median")
    grid = np.linspace(n.min(), n.max(), 50)
    left.plot(grid, paper.PAPER_K + grid, "k-", lw=0.8, label="K + N (analysis)")
    left.fill_between(grid, paper.PAPER_K + grid - 5, paper.PAPER_K + grid + 5, color="grey",
                      alpha=0.15, label="claimed ± 5")
    left.set_xlabel("flows N")
    left.set_ylabel("packets in the queue")
    left.set_title("DCTCP, K = 20, RTT 1 ms: peak queue against K + N", fontsize=10)
    left.legend(fontsize=7)
    right.plot(n, [r["queue_amplitude"] for r in sweep], "o-", color=colour,
               label="measured (99th - 1st percentile)")
    right.plot(n, [r["theory_amplitude"] for r in sweep], "k--",
               label="analysis: 1/2 sqrt(2N(C RTT + K))")
    right.set_xlabel("flows N")
    right.set_ylabel("amplitude (packets)")
    right.set_title("the queue's amplitude against the analysis", fontsize=10)
    right.legend(fontsize=7)
    return fig


def k_figure(rows: list[dict[str, Any]]) -> Any:
    sweep = sorted((r for r in rows if r["study"] == K_SWEEP and r.get("goodput_mbps")
                    is not None), key=lambda r: r["k"])
    if not sweep:
        return None
    fig, (left, right) = new_grid(1, 2, 6.0, 4.6)
    k = np.array([r["k"] for r in sweep], dtype=float)
    bound = sweep[0]["k_bound"]
    colour = scheme_style("dctcp").colour
    left.plot(k, [r["goodput_mbps"] for r in sweep], "o-", color=colour, label="goodput")
    left.axhline(92, color="grey", ls="--", lw=0.8, label="92 Mbit/s")
    for ax in (left, right):
        ax.axvline(bound, color="black", ls=":", lw=1.0, label=f"C RTT / 7 = {bound:.1f}")
        ax.set_xscale("log")
        ax.set_xticks(k)
        ax.set_xticklabels([f"{v:g}" for v in k])
        ax.set_xlabel("marking threshold K (packets)")
    left.set_ylabel("aggregate goodput (Mbit/s)")
    left.set_title(f"DCTCP, N = {sweep[0]['flows']}, RTT {sweep[0]['rtt_ms']} ms: goodput "
                   "against K", fontsize=10)
    left.legend(fontsize=7)
    right.plot(k, [r["queue_p1"] for r in sweep], "v-", color=colour, label="1st percentile")
    right.plot(k, [r["queue_median"] for r in sweep], "o-", color="grey", label="median")
    right.plot(k, [r["theory_q_min"] for r in sweep], "k--", lw=0.8,
               label="analysis: trough K + N - A")
    right.axhline(0, color="black", lw=0.5)
    right.set_ylabel("packets in the queue")
    right.set_title("the queue's trough: below 0 the link idles", fontsize=10)
    right.legend(fontsize=7)
    return fig
