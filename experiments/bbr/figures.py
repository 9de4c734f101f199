"""The BBR experiment's figures (Queue numbering), from its finished runs' artifacts. Every
time axis is the link's clock; BBR's phases are the kernel's own (socket samples), shaded.

- fig2-gain-cycle: 700 ms of steady state: the RTT each packet saw, BBR's inflight against the
  BDP, its delivery-rate samples and BtlBw estimate, the pacing gain's phases;
- fig3-step: delivery at the link (100-ms bins), BBR's estimate, inflight and RTT over the
  run, the link's rate drawn as the steps it took;
- fig4-startup: the first second of BBR and CUBIC: data sent and acknowledged, and each
  packet's RTT, with BBR's state changes as grey lines;
- fig5-rtt: each packet's RTT over the first 8 s, BBR against CUBIC;
- fig6-convergence: five BBR flows' throughput (1-s bins, from their acknowledged bytes) with
  their ProbeRTTs, and Jain's index over time;
- fig8-loss: goodput against random loss, BBR and CUBIC, beside (1 - p) x C.
"""
from __future__ import annotations

import logging
import textwrap
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from analysis.coverage import Coverage
from analysis.plotting import new_figure, new_grid, save
from analysis.summary import RunRecord
from experiments.bbr import model
from experiments.bbr.phases import Phase, probe_rtt_episodes
from experiments.bbr.rows import FIG8
from experiments.bbr.series import (FlowRun, acked_rate_mbps, departure_rate, load_flow,
                                    packet_rtt_ms, sampled)
from experiments.bbr.studies import CONVERGENCE, LOSS, STARTUP, STEP

log = logging.getLogger(__name__)

COLOURS = {"bbr": "tab:green", "cubic": "tab:red"}
PHASE_COLOURS = {"ProbeBW 1.25": "#f4b6b6", "ProbeBW 0.75": "#b6cdf4", "Startup": "#f7e3a1",
                 "Drain": "#cfe8c8", "ProbeRTT": "#d9c2ec"}
SLICE_S = 0.7
SLICE_AFTER_S = 5.0  # Fig 2's slice starts at the first cycle this long after the SYN
FIG5_S = 8.0


def draw_all(cov: Coverage, runs: list[dict[str, Any]], derived: list[dict[str, Any]],
             out_dir: Path, notes: list[str]) -> list[Path]:
    records = {r.path.name: r for r in cov.records()}
    by_study: dict[str, list[tuple[dict[str, Any], RunRecord]]] = {}
    for row in runs:
        if row["run"] in records:
            by_study.setdefault(row["study"], []).append((row, records[row["run"]]))
    startup = {row["scheme"]: rec for row, rec in by_study.get(STARTUP, [])}
    drawers: list[tuple[str, Callable[[], Any]]] = [
        ("fig2-gain-cycle", lambda: fig2(startup.get("bbr"))),
        ("fig3-step", lambda: fig3(by_study.get(STEP, []))),
        ("fig4-startup", lambda: fig4(startup, notes)),
        ("fig5-rtt", lambda: fig5(startup)),
        ("fig6-convergence", lambda: fig6(by_study.get(CONVERGENCE, []))),
        ("fig8-loss", lambda: fig8([r for r in derived if r["study"] == FIG8],
                                   [row for row, _ in by_study.get(LOSS, [])], notes)),
    ]
    files: list[Path] = []
    for name, draw in drawers:
        try:
            fig = draw()
        except Exception as e:  # noqa: BLE001 - an unreadable run: say so, draw the rest
            log.warning("%s not drawn: %s: %s", name, type(e).__name__, e)
            continue
        if fig is not None:
            files += save(fig, out_dir, name)
    return files


def shade_phases(ax: Any, found: Sequence[Phase], start_s: float, end_s: float,
                 offset_s: float = 0.0, legend: bool = True) -> None:
    """BBR's phases (not ProbeBW's cruising at 1) as coloured bands."""
    seen: set[str] = set()
    for p in found:
        colour = PHASE_COLOURS.get(p.label)
        if colour is None or p.end_s < start_s or p.start_s > end_s:
            continue
        ax.axvspan(max(p.start_s, start_s) - offset_s, min(p.end_s, end_s) - offset_s,
                   color=colour, alpha=0.6, lw=0,
                   label=p.label if legend and p.label not in seen else None)
        seen.add(p.label)


def _notes(fig: Any, lines: Sequence[str]) -> None:
    if lines:
        fig.text(0.01, 0.005, textwrap.fill("Missing: " + "; ".join(lines), 160),
                 fontsize=7, va="bottom", color="firebrick")


def _rtt_in(run: FlowRun, start_s: float, end_s: float) -> tuple[np.ndarray, np.ndarray]:
    t, rtt = packet_rtt_ms(run.queue, run.rtt_ms)
    keep = (t >= start_s) & (t < end_s)
    return t[keep], rtt[keep]


# ------------------------------------------------------------------ Fig 2

def fig2(record: RunRecord | None) -> Any:
    if record is None:
        return None
    run = load_flow(record)
    if run.samples is None or run.t0_s is None:
        return None
    ups = [p.start_s for p in run.phases if p.label == "ProbeBW 1.25"
           and p.start_s >= run.t0_s + SLICE_AFTER_S]
    start = ups[0] - 0.1 if ups else run.t0_s + SLICE_AFTER_S
    end = start + SLICE_S
    fig, axes = new_grid(3, 1, panel_width=9.0, panel_height=2.6)
    rtt_ax, inflight_ax, rate_ax = axes
    t, rtt = _rtt_in(run, start, end)
    rtt_ax.plot(t - start, rtt, ".", ms=2.5, color="tab:green", label="each packet's RTT")
    rtt_ax.axhline(run.rtt_ms, color="grey", ls=":", lw=0.8, label="RTprop")
    rtt_ax.set_ylabel("RTT (ms)")
    ts, inflight = sampled(run.samples, "inflight", run.base_s)
    keep = (ts >= start) & (ts < end)
    inflight_ax.step(ts[keep] - start, inflight[keep], where="post", color="tab:green",
                     label="inflight (kernel)")
    rate = float(record.spec.data_trace.removeprefix("rate:"))
    inflight_ax.axhline(model.bdp_packets(rate, run.rtt_ms), color="grey", ls="--", lw=0.8,
                        label="BDP")
    inflight_ax.set_ylabel("packets")
    td, delivery = sampled(run.samples, "delivery_rate_Bps", run.base_s)
    tb, bw = sampled(run.samples, "bbr_bw_Bps", run.base_s)
    keep_d, keep_b = (td >= start) & (td < end), (tb >= start) & (tb < end)
    rate_ax.plot(td[keep_d] - start, delivery[keep_d] * 8 / 1e6, ".", ms=3, color="tab:green",
                 label="delivery rate (kernel)")
    rate_ax.step(tb[keep_b] - start, bw[keep_b] * 8 / 1e6, where="post", color="black",
                 lw=1.0, label="BtlBw estimate (max filter)")
    rate_ax.axhline(rate, color="grey", ls=":", lw=0.8, label="link rate")
    rate_ax.set_ylabel("Mbit/s")
    rate_ax.set_xlabel(f"time (s) from {start - run.t0_s:.2f} s after the SYN")
    for ax in axes:
        shade_phases(ax, run.phases, start, end, start, legend=ax is rtt_ax)
        ax.set_xlim(0, SLICE_S)
        ax.legend(fontsize=7, loc="upper right", ncol=3)
    rtt_ax.set_title("BBR Fig. 2: 700 ms of ProbeBW's gain cycling, 10 Mbit/s, 40 ms "
                     "(shading: the kernel's pacing gain)", fontsize=10)
    return fig


# ------------------------------------------------------------------ Fig 3

def fig3(found: list[tuple[dict[str, Any], RunRecord]]) -> Any:
    if not found:
        return None
    row, record = found[0]
    run = load_flow(record)
    end = float(record.spec.duration_s or 0)
    fig, axes = new_grid(3, 1, panel_width=10.0, panel_height=2.6)
    rate_ax, inflight_ax, rtt_ax = axes
    starts, rates = departure_rate(run.queue, 0.0, end, 0.1)
    rate_ax.plot(starts, rates, color="tab:green", lw=0.8, label="delivered at the link")
    steps = [(0.0, row["first_rate_mbps"]), (row["up_at_s"], row["up_rate_mbps"]),
             (row["down_at_s"], row["down_rate_mbps"]), (end, row["down_rate_mbps"])]
    rate_ax.step([s for s, _ in steps], [r for _, r in steps], where="post", color="black",
                 ls="--", lw=1.0, label="the link's rate")
    if run.samples is not None:
        tb, bw = sampled(run.samples, "bbr_bw_Bps", run.base_s)
        rate_ax.plot(tb, bw * 8 / 1e6, color="tab:blue", lw=0.8, label="BtlBw estimate")
        ti, inflight = sampled(run.samples, "inflight", run.base_s)
        inflight_ax.plot(ti, inflight, color="tab:green", lw=0.7, label="inflight (kernel)")
    inflight_ax.set_ylabel("packets")
    t, rtt = packet_rtt_ms(run.queue, run.rtt_ms)
    rtt_ax.plot(t, rtt, ",", color="tab:green", label="each packet's RTT")
    rtt_ax.axhline(1.25 * run.rtt_ms, color="grey", ls=":", lw=0.8, label="1.25 RTprop")
    rtt_ax.set_ylabel("RTT (ms)")
    rate_ax.set_ylabel("Mbit/s")
    rtt_ax.set_xlabel("time (s) after the link's start")
    for ax in axes:
        for at in (row["up_at_s"], row["down_at_s"]):
            ax.axvline(at, color="black", lw=0.6, ls=":")
        shade_phases(ax, run.phases, 0.0, end, legend=ax is rate_ax)
        ax.set_xlim(0, end)
        ax.legend(fontsize=7, loc="upper left", ncol=3)
    up = (f"18 Mbit/s held from +{_s(row.get('up_step_s'))}"
          if row.get("up_step_reached", True) else "18 Mbit/s never held")
    down = (f"RTT <= 50 ms held from +{_s(row.get('down_step_s'))}"
            if row.get("down_step_reached", True) else "RTT <= 50 ms never held (1 s)")
    rate_ax.set_title(f"BBR Fig. 3: 10 -> 20 -> 10 Mbit/s at {row['up_at_s']:g} and "
                      f"{row['down_at_s']:g} s, 40 ms; {up}, {down}", fontsize=9)
    return fig


def _s(value: Any) -> str:
    return "-" if value is None else f"{float(value):.2f} s"


# ------------------------------------------------------------------ Figs 4 and 5

def fig4(startup: dict[str, RunRecord], notes: list[str]) -> Any:
    if not startup:
        return None
    fig, (seq_ax, rtt_ax) = new_grid(2, 1, panel_width=9.0, panel_height=3.6)
    bbr_run = None
    for scheme in ("cubic", "bbr"):
        record = startup.get(scheme)
        if record is None:
            continue
        run = load_flow(record)
        if run.samples is None or run.t0_s is None:
            continue
        t0 = run.t0_s
        ts, sent = sampled(run.samples, "bytes_sent", run.base_s)
        ta, acked = sampled(run.samples, "bytes_acked", run.base_s)
        keep_s, keep_a = ts - t0 <= 1.0, ta - t0 <= 1.0
        colour = COLOURS[scheme]
        seq_ax.plot(ts[keep_s] - t0, sent[keep_s] / 1e6, color=colour, lw=1.2,
                    label=f"{scheme.upper()} sent")
        seq_ax.plot(ta[keep_a] - t0, acked[keep_a] / 1e6, color=colour, lw=1.0, ls="--",
                    label=f"{scheme.upper()} acknowledged")
        t, rtt = _rtt_in(run, t0, t0 + 1.0)
        rtt_ax.plot(t - t0, rtt, ".", ms=2, color=colour, label=f"{scheme.upper()} RTT")
        if scheme == "bbr":
            bbr_run = run
    if bbr_run is not None and bbr_run.t0_s is not None:
        for p in bbr_run.phases:
            if p.start_s - bbr_run.t0_s <= 1.0 and p.label in ("Startup", "Drain") or \
                    p.label == "ProbeBW 1.25" and p is _first_bw(bbr_run.phases):
                for ax in (seq_ax, rtt_ax):
                    ax.axvline(p.end_s - bbr_run.t0_s, color="grey", lw=0.8)
                seq_ax.text(p.end_s - bbr_run.t0_s, 0.02, f" end of {p.label}",
                            transform=seq_ax.get_xaxis_transform(), fontsize=7, color="grey")
    seq_ax.set_ylabel("data (MB)")
    rtt_ax.set_ylabel("RTT (ms)")
    rtt_ax.set_xlabel("time (s) after the SYN")
    for ax in (seq_ax, rtt_ax):
        ax.set_xlim(0, 1.0)
        ax.legend(fontsize=7, loc="upper left")
    seq_ax.set_title("BBR Fig. 4: the first second, 10 Mbit/s, 40 ms, 150-packet buffer; grey: "
                     "BBR's state changes (kernel)", fontsize=10)
    _notes(fig, [n for n in notes if n.startswith(STARTUP)])
    return fig


def _first_bw(found: Sequence[Phase]) -> Phase | None:
    return next((p for p in found if p.mode == "probe_bw"), None)


def fig5(startup: dict[str, RunRecord]) -> Any:
    if not startup:
        return None
    fig, ax = new_figure(9.0, 4.2)
    for scheme in ("cubic", "bbr"):
        record = startup.get(scheme)
        if record is None:
            continue
        run = load_flow(record)
        if run.t0_s is None:
            continue
        t, rtt = _rtt_in(run, run.t0_s, run.t0_s + FIG5_S)
        ax.plot(t - run.t0_s, rtt, ".", ms=1.5, color=COLOURS[scheme],
                label=f"{scheme.upper()}: each packet's RTT")
    ax.set_xlim(0, FIG5_S)
    ax.set_xlabel("time (s) after the SYN")
    ax.set_ylabel("RTT (ms)")
    ax.legend(fontsize=8, loc="upper left", markerscale=4)
    ax.set_title("BBR Fig. 5: RTT over the first 8 s, 10 Mbit/s, 40 ms, 150-packet buffer",
                 fontsize=10)
    return fig


# ------------------------------------------------------------------ Fig 6

def fig6(found: list[tuple[dict[str, Any], RunRecord]]) -> Any:
    if not found:
        return None
    row, record = found[0]
    flows = (record.meta.get("verification") or {}).get("flows") or []
    rtt = float(record.spec.option("rtt_ms"))
    runs = [load_flow(record, record.path / str(f["folder"]), f.get("client_port"), rtt)
            for f in flows]
    fig, (rate_ax, jain_ax) = new_grid(2, 1, panel_width=10.0, panel_height=3.4)
    end = float(row.get("first_end_s") or 0) + 8.0
    edges = np.arange(0.0, end + 1e-9, 0.1)
    for i, run in enumerate(runs, 1):
        if run.samples is None:
            continue
        rates = acked_rate_mbps(run.samples, run.base_s, edges)
        line = rate_ax.plot(edges[:-1], rates, lw=0.8, label=f"flow {i}")[0]
        for p in probe_rtt_episodes(run.phases):
            rate_ax.axvspan(p.start_s, p.end_s, color=line.get_color(), alpha=0.25, lw=0)
    rate_ax.set_ylabel("throughput (Mbit/s, 100-ms bins)")
    rate_ax.set_xlim(0, end)
    rate_ax.legend(fontsize=7, loc="upper right", ncol=5)
    rate_ax.set_title(f"BBR Fig. 6: five BBR flows joining 2 s apart, {row['rate_mbps']:g} "
                      f"Mbit/s, {row['rtt_ms']:g} ms; shaded: each flow's ProbeRTT (kernel)",
                      fontsize=10)
    bins = np.array(row.get("bin_starts_s") or [])
    jain = np.array([np.nan if v is None else v for v in row.get("jain_bins") or []])
    if bins.size:
        jain_ax.step(bins, jain, where="post", color="black", label="Jain's index (1-s bins)")
    jain_ax.axhline(0.9, color="grey", ls=":", lw=0.8, label="0.90")
    jain_ax.axvline(float(row.get("last_start_s") or 0) + 10, color="tab:blue", ls="--", lw=0.8,
                    label="10 s after the last start")
    jain_ax.set_ylim(0, 1.05)
    jain_ax.set_xlim(0, end)
    jain_ax.set_xlabel("time (s) after the link's start")
    jain_ax.legend(fontsize=7, loc="lower right")
    return fig


# ------------------------------------------------------------------ Fig 8

def fig8(table: list[dict[str, Any]], runs: list[dict[str, Any]], notes: list[str]) -> Any:
    if not table:
        return None
    fig, ax = new_figure(8.0, 4.8)
    for scheme in ("bbr", "cubic"):
        points = [(100 * float(r["loss"]), float(r["goodput_mbps"])) for r in runs
                  if r["scheme"] == scheme and r.get("goodput_mbps") is not None]
        if points:
            xs, ys = zip(*sorted(points))
            ax.plot(xs, ys, "o-", color=COLOURS[scheme], ms=4, label=f"{scheme.upper()} goodput")
    rate = float(runs[0]["rate_mbps"]) if runs else 100.0
    losses = np.logspace(-3, np.log10(50), 200)
    ax.plot(losses, [model.loss_limit_mbps(p / 100, rate) for p in losses], color="black",
            ls="--", lw=1.0,
            label="(1 - p) x C")
    ax.set_xscale("log")
    ax.set_xlabel("random loss (%), data direction, after the queue")
    ax.set_ylabel("goodput at the receiver (Mbit/s)")
    ax.set_ylim(0, rate * 1.05)
    ax.legend(fontsize=8, loc="lower left")
    rtt = float(runs[0]["rtt_ms"]) if runs else 100.0
    ax.set_title(f"BBR Fig. 8: goodput against random loss, {rate:g} Mbit/s, {rtt:g} ms, "
                 "2-BDP buffer", fontsize=10)
    _notes(fig, [n for n in notes if n.startswith(LOSS)])
    return fig
