"""The PRR figure: one loss pattern and size, the recoveries side by side.

Top row, a time-sequence plot from the sender's capture: every data segment
sent (segment number = relative sequence / MSS), retransmissions marked, the
planned drops circled, the cumulative ACK and SACK blocks as they arrived.
Bottom row, the congestion window: the kernel's snd_cwnd and ssthresh
(tcp_probe) beside the estimate the headers allow (outstanding data,
snd.nxt - highest ACK). Recovery episodes (tcp_cong_state_set) are shaded in
both rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from analysis.plotting import new_grid, save
from runkinds.switched_path.transfer_run import TransferRun

# tcp_probe's ssthresh before the first loss is "infinite" (0x7fffffff); not drawn, nor
# anything at or above 2^20 segments, which no sender here can reach.
INFINITE = 0x7FFFFFFF
SSTHRESH_INFINITE = 1 << 20


def plot_recoveries(panels: Sequence[tuple[str, TransferRun]], title: str, out_dir: Path,
                    stem: str) -> list[Path]:
    """One column per (label, run); returns the PNG and SVG written."""
    cols = len(panels)
    fig, axes = new_grid(2, cols, panel_width=4.6, panel_height=3.6)
    t_max = max((_span(run) for _, run in panels), default=1.0)
    seg_max = max((run.sender.bytes_sent / max(run.sender.mss, 1) for _, run in panels),
                  default=1.0)
    cwnd_max = 1.0
    for col, (label, run) in enumerate(panels):
        top, bottom = axes[col], axes[cols + col]
        _time_sequence(top, run)
        cwnd_max = max(cwnd_max, _cwnd(bottom, run))
        for ax in (top, bottom):
            _shade(ax, run)
        top.set_title(label, fontsize=8)
        top.set_xlim(0, t_max * 1000)
        bottom.set_xlim(0, t_max * 1000)
        top.set_ylim(-0.5, seg_max + 1)
        bottom.set_xlabel("time since SYN (ms)")
        if col == 0:
            top.set_ylabel("segment (relative seq / MSS)")
            bottom.set_ylabel("window (segments)")
    for col in range(cols):
        axes[cols + col].set_ylim(0, cwnd_max * 1.15 + 1)
    handles, labels = [], []
    for ax in (axes[0], axes[cols]):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    return save(fig, out_dir, stem, tight=False)


def _span(run: TransferRun) -> float:
    """Seconds from the SYN to the last event of the captures or the kernel's recording."""
    times = [d.time_s - run.t0 for d in run.sender.data]
    times += [a.time_s - run.t0 for a in run.sender.acks]
    times += [float(t) for t in run.probe_times()[-1:]]
    return max(times) * 1.02 if times else 1.0


def _time_sequence(ax, run: TransferRun) -> None:
    mss = max(run.sender.mss, 1)
    t0 = run.t0
    orig = [d for d in run.sender.data if not d.retransmission]
    retx = [d for d in run.sender.data if d.retransmission]
    ax.plot([(d.time_s - t0) * 1000 for d in orig], [d.seq / mss for d in orig], "|",
            color="tab:blue", markersize=6, label="segment sent")
    if retx:
        ax.plot([(d.time_s - t0) * 1000 for d in retx], [d.seq / mss for d in retx], "x",
                color="tab:red", markersize=6, label="retransmission")
    planned = set(run.verdict.dropped)
    dropped = [d for d in orig if d.original in planned]
    if dropped:
        ax.plot([(d.time_s - t0) * 1000 for d in dropped], [d.seq / mss for d in dropped], "o",
                markerfacecolor="none", markeredgecolor="black", markersize=7,
                label="dropped by the controller")
    if run.sender.acks:
        times = [(a.time_s - t0) * 1000 for a in run.sender.acks]
        acked = [min(a.ack, run.sender.bytes_sent) / mss for a in run.sender.acks]
        ax.step(times, acked, where="post", color="tab:green", linewidth=1,
                label="cumulative ACK")
        for a in run.sender.acks:
            for start, end in a.sack:
                ax.plot([(a.time_s - t0) * 1000] * 2, [start / mss, end / mss],
                        color="tab:olive", linewidth=2, alpha=0.6)
        ax.plot([], [], color="tab:olive", linewidth=2, alpha=0.6, label="SACK block")


def _cwnd(ax, run: TransferRun) -> float:
    """Draw the windows; return the largest value drawn."""
    top = 1.0
    header = run.sender.header_cwnd()
    if header:
        ht = [(p.time_s - run.t0) * 1000 for p in header]
        hv = [p.outstanding_segments for p in header]
        ax.step(ht, hv, where="post", color="tab:orange", linewidth=1,
                label="outstanding (headers)")
        top = max(top, max(hv))
    t = run.probe_times()
    if run.probe is not None and t.size:
        cwnd = run.probe.snd_cwnd.astype(float)
        ss = run.probe.ssthresh.astype(float)
        off_scale = (cwnd >= SSTHRESH_INFINITE) | ((ss >= SSTHRESH_INFINITE) & (ss != INFINITE))
        if off_scale.any():  # a window no sender can have: say so instead of drawing it
            ax.text(0.5, 0.9, f"kernel values off scale (up to "
                    f"{int(max(cwnd.max(), ss[ss != INFINITE].max(initial=0)))})",
                    transform=ax.transAxes, ha="center", fontsize=7, color="tab:red")
        cwnd = np.where(cwnd >= SSTHRESH_INFINITE, np.nan, cwnd)
        ss = np.where(ss >= SSTHRESH_INFINITE, np.nan, ss)
        ax.step(t * 1000, cwnd, where="post", color="tab:blue", linewidth=1.4,
                label="cwnd (kernel, tcp_probe)")
        ax.step(t * 1000, ss, where="post", color="gray", linestyle="--", linewidth=1,
                label="ssthresh (kernel)")
        if np.isfinite(cwnd).any():
            top = max(top, float(np.nanmax(cwnd)))
    elif run.probe is None:
        ax.text(0.5, 0.9, "no tcp_probe recording", transform=ax.transAxes, ha="center",
                fontsize=7, color="tab:red")
    return top


def _shade(ax, run: TransferRun) -> None:
    end_default = _span(run)
    for i, e in enumerate(run.episodes):
        end = e.end_s if e.end_s is not None else end_default
        ax.axvspan(e.start_s * 1000, end * 1000, color="tab:purple", alpha=0.12,
                   label="recovery (kernel state)" if i == 0 else None)
