"""prr-heavy-loss's figures: the kernel's window beside the model's, and the variants.

model-vs-measured: one column per recovery (rate halving, the kernel's PRR), one row per
receiver (this kernel's, whose window grows; one held to 10 segments). In each panel the
kernel's cwnd after every ACK (tcp_probe samples before each ACK, so the value after ACK k is
sample k+1), one thin line per trial, against time from the first data segment; the model
of this kernel (RACK, dashed) and of the paper's (Linux 3: FACK, dotted) over the same
transfer, labelled as models; a cross where each recovery ended.

variants: exit cwnd and transfer time per variant, each trial a dot, the model's prediction
for this kernel a cross, Linux 3's (FACK, with the variant's receiver) a plus, the claim's
bound (cwnd <= 2) as a line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from analysis.plotting import new_grid, save
from runkinds.switched_path.transfer_run import TransferRun
from experiments.prr.transfer_model import TransferResult

RECOVERY_TITLES = {"rate-halving": "rate halving (Linux <= 3.1, eBPF)",
                   "prr-kernel": "PRR (the kernel's)"}
ROWS = (("default", "this kernel's receiver (its window grows)"),
        ("rwnd-10", "receiver window held at 10 segments (Linux < 3.12)"))
COLORS = {"rate-halving": "tab:red", "prr-kernel": "tab:blue"}


def kernel_cwnd(run: TransferRun) -> tuple[np.ndarray, np.ndarray]:
    """(ms from the first data segment, cwnd after each ACK) from tcp_probe."""
    times = run.probe_times()
    if run.probe is None or times.size < 2 or not run.sender.data:
        return np.zeros(0), np.zeros(0)
    start = run.sender.data[0].time_s - run.t0
    t = np.empty(times.size)
    t[0], t[1:] = 0.0, (times[:-1] - start) * 1000
    return t, run.probe.snd_cwnd.astype(float)


def model_cwnd(result: TransferResult, iw: int = 10) -> tuple[list[float], list[int]]:
    return [0.0] + [e.time_ms for e in result.events], [iw] + [e.cwnd for e in result.events]


def plot_model_vs_measured(runs: dict[tuple[str, str], list[TransferRun]],
                           models: dict[tuple[str, str], dict[str, TransferResult]],
                           out_dir: Path) -> list[Path]:
    recoveries = list(RECOVERY_TITLES)
    fig, axes = new_grid(len(ROWS), len(recoveries), panel_width=5.6, panel_height=3.6)
    t_max = 1.0
    for row, (variant, row_title) in enumerate(ROWS):
        for col, recovery in enumerate(recoveries):
            ax = axes[row * len(recoveries) + col]
            measured = runs.get((variant, recovery), [])
            for i, run in enumerate(measured):
                t, cwnd = kernel_cwnd(run)
                if t.size:
                    ax.step(t, cwnd, where="post", color=COLORS[recovery], alpha=0.45,
                            linewidth=1, label="kernel cwnd (tcp_probe), one line per trial"
                            if i == 0 else None)
                    t_max = max(t_max, float(t[-1]))
            model = models.get((variant, recovery), {})
            for key, style, name in (("rack", "--", "model: this kernel (RACK)"),
                                     ("fack", ":", "model: Linux 3 (FACK)")):
                result = model.get(key)
                if result is None:
                    continue
                mt, mc = model_cwnd(result)
                ax.step(mt, mc, where="post", color="black", linestyle=style, linewidth=1.6,
                        label=name)
                end = result.exit
                if end is not None:
                    ax.plot([end.time_ms], [end.cwnd], "x", color="black", markersize=7)
                t_max = max(t_max, mt[-1])
            ax.axhline(2, color="gray", linewidth=0.8, alpha=0.6)
            ax.set_title(f"{RECOVERY_TITLES[recovery]}\n{row_title}: "
                         f"{len(measured)} trial(s)", fontsize=8)
            ax.set_xlabel("ms from the first data segment")
            ax.set_ylabel("cwnd (segments)")
    for ax in axes:
        ax.set_xlim(0, t_max * 1.03)
        ax.set_ylim(0, 11.5)
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7)
    fig.suptitle("PRR heavy loss (drop 1-4, 6-8 of IW10), 32 KB, Cubic, 10 Mbit/s, 40 ms: "
                 "the kernel's cwnd against the transfer model (x: end of recovery; "
                 "grey: cwnd 2)", fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    return save(fig, out_dir, "model-vs-measured", tight=False)


def plot_variants(table: Sequence[dict[str, Any]], order: Sequence[str],
                  out_dir: Path) -> list[Path]:
    fig, axes = new_grid(1, 2, panel_width=7.0, panel_height=4.0)
    x_of = {name: i for i, name in enumerate(order)}
    for ax, (key, model_key, linux3_key, ylabel) in zip(axes, (
            ("cwnd_exit_trials", "model_cwnd_exit", "linux3_cwnd_exit",
             "cwnd at the end of recovery (segments)"),
            ("transfer_ms_trials", "model_transfer_ms", "linux3_transfer_ms",
             "transfer time (ms)"))):
        for shift, recovery in ((-0.15, "rate-halving"), (0.15, "prr-kernel")):
            rows = [r for r in table if r["recovery"] == recovery and r["variant"] in x_of]
            for i, r in enumerate(rows):
                values = [float(v) for v in str(r[key]).split() if v not in ("None", "")]
                x = x_of[r["variant"]] + shift
                first = i == 0 and shift < 0
                ax.plot([x] * len(values), values, "o", color=COLORS[recovery], alpha=0.5,
                        markersize=4, label=RECOVERY_TITLES[recovery] if i == 0 else None)
                if r[model_key] is not None:
                    ax.plot([x], [float(r[model_key])], "x", color="black", markersize=7,
                            label="model: this kernel, as the variant sets it" if first
                            else None)
                if r[linux3_key] is not None:
                    ax.plot([x + 0.07], [float(r[linux3_key])], "+", color="tab:green",
                            markersize=8, label="model: Linux 3 (FACK), the variant's "
                            "receiver" if first else None)
        if key == "cwnd_exit_trials":
            ax.axhline(2, color="gray", linewidth=0.8, label="the claim: cwnd <= 2")
            ax.set_ylim(0, 8)
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels(order, rotation=35, ha="right", fontsize=7)
        ax.set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7)
    fig.suptitle("PRR heavy loss on this kernel: what each variant changes (dots: trials)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    return save(fig, out_dir, "variants", tight=False)
