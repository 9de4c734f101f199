"""What DCTCP's alpha did in a run, and whether its window reductions followed it.

Reads dctcp-alpha.csv (kernel/dctcp_alpha.py writes it; times CLOCK_MONOTONIC, like
tcp-probe.csv) and the probe trace. Linux's DCTCP, which netrepro's bpf_dctcp follows:

- once per window: alpha <- alpha - max(alpha >> 4, alpha if alpha < 16)
  + (delivered_ce << 6) / delivered, at most 1024 (alpha in 1/1024; g = 1/16);
- entering CWR on ECE: ssthresh = cwnd - (cwnd * alpha) >> 11, at least 2.

So a reduction from cwnd c to ssthresh s says alpha lay in
[2048 (c - s) / c, 2048 (c - s + 1) / c) (1/1024 units), and each window moves alpha by
at most 1024 / 16 = 64.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.tcp_probe import ProbeTrace
from kernel.dctcp_alpha import ALPHA_COLUMNS, ALPHA_FILE, ALPHA_UNITS
from core.tcp_probe_format import CA_CWR, CA_DISORDER, CA_OPEN

SHIFT_G = 4
MAX_ALPHA = ALPHA_UNITS
MAX_STEP = ALPHA_UNITS >> SHIFT_G  # the most one window's update moves alpha


@dataclass(frozen=True, eq=False)
class AlphaTrace:
    """dctcp-alpha.csv as arrays; counters the source does not report are NaN."""

    time_s: np.ndarray
    alpha: np.ndarray  # fraction
    updates: np.ndarray
    delivered: np.ndarray
    delivered_ce: np.ndarray
    reductions: np.ndarray
    losses: np.ndarray

    def __len__(self) -> int:
        return int(self.time_s.size)


@dataclass(frozen=True)
class Reduction:
    """One entry into CWR (an ECN-triggered reduction) as the probe saw it."""

    time_s: float  # the ACK that carried ECE (probed before it was processed)
    cwnd: int  # the window then: what ssthresh() saw
    ssthresh: int  # the first sample in CWR

    def alpha_range(self) -> tuple[float, float]:
        """The alpha (1/1024) that gives this ssthresh: [low, high)."""
        cut = self.cwnd - self.ssthresh
        return 2048 * cut / self.cwnd, 2048 * (cut + 1) / self.cwnd


def read_alpha(run_dir: Path) -> AlphaTrace | None:
    path = run_dir / ALPHA_FILE
    if not path.exists():
        return None
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or tuple(rows[0]) != ALPHA_COLUMNS:
        raise ValueError(f"{path}: header {rows[:1]} is not {list(ALPHA_COLUMNS)}")
    data = np.array([[float(v) if v else np.nan for v in row] for row in rows[1:]],
                    dtype=np.float64).reshape(-1, len(ALPHA_COLUMNS))
    column = {name: data[:, i] for i, name in enumerate(ALPHA_COLUMNS)}
    return AlphaTrace(column["time_s"], column["alpha"], column["updates"],
                      column["delivered"], column["delivered_ce"], column["reductions"],
                      column["losses"])


def flow_alpha_mean(flow_dir: Path, start_mono: float, end_mono: float) -> float | None:
    """The mean of the flow's alpha samples in the window (CLOCK_MONOTONIC s)."""
    trace = read_alpha(flow_dir)
    if trace is None or len(trace) == 0:
        return None
    inside = (trace.time_s >= start_mono) & (trace.time_s < end_mono)
    return float(trace.alpha[inside].mean()) if inside.any() else None


def alpha_timeline(flow_dir: Path, base_s: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(seconds after the base, alpha) of a flow's samples, None without any."""
    trace = read_alpha(flow_dir)
    if trace is None or len(trace) == 0:
        return None
    return trace.time_s - base_s, trace.alpha


def ewma_step(alpha: int, delivered: int, delivered_ce: int) -> int:
    """One window's update, in Linux's integer arithmetic (alpha in 1/1024)."""
    decay = alpha >> SHIFT_G
    alpha -= decay if decay else alpha
    if delivered_ce:
        alpha = min(alpha + (delivered_ce << (10 - SHIFT_G)) // max(delivered, 1), MAX_ALPHA)
    return alpha


def windows_to_zero(alpha: int = MAX_ALPHA) -> int:
    """Windows without a mark that take alpha from `alpha` to 0."""
    windows = 0
    while alpha:
        alpha = ewma_step(alpha, 1, 0)
        windows += 1
    return windows


def cwr_reductions(probe: ProbeTrace) -> list[Reduction]:
    """Every entry from Open/Disorder into CWR, with the window before and ssthresh in it."""
    state = probe.ca_state
    entering = np.flatnonzero((state[1:] == CA_CWR)
                              & np.isin(state[:-1], (CA_OPEN, CA_DISORDER))) + 1
    return [Reduction(float(probe.time_s[i - 1]), int(probe.snd_cwnd[i - 1]),
                      int(probe.ssthresh[i])) for i in entering]


def alpha_bounds_at(trace: AlphaTrace, time_s: float) -> tuple[float, float] | None:
    """What alpha (1/1024) can have been at `time_s`: the last sample before it, widened by
    MAX_STEP for every window update between that sample and the next. None when no sample
    brackets the time."""
    before = np.flatnonzero(trace.time_s <= time_s)
    after = np.flatnonzero(trace.time_s >= time_s)
    if before.size == 0 or after.size == 0:
        return None
    i, j = before[-1], after[0]
    if np.isnan(trace.updates[i]) or np.isnan(trace.updates[j]):
        return None
    alpha = trace.alpha[i] * ALPHA_UNITS
    spread = (trace.updates[j] - trace.updates[i]) * MAX_STEP
    return float(alpha - spread), float(alpha + spread)


def second_half(trace: AlphaTrace) -> np.ndarray:
    if len(trace) == 0:
        return np.zeros(0, dtype=bool)
    mid = (trace.time_s[0] + trace.time_s[-1]) / 2
    return trace.time_s >= mid


def dctcp_metrics(run_dir: Path, probe: ProbeTrace | None) -> dict[str, Any]:
    """Flat metrics for metrics.json (None where the input is missing)."""
    out: dict[str, Any] = {"dctcp_alpha_mean": None, "dctcp_alpha_samples": 0,
                           "ecn_marked_fraction": None, "ecn_reductions": None,
                           "ecn_reduction_ratio_median": None}
    trace = read_alpha(run_dir)
    if trace is not None and len(trace):
        half = second_half(trace)
        out.update(dctcp_alpha_mean=float(trace.alpha[half].mean()),
                   dctcp_alpha_samples=len(trace))
        delivered = trace.delivered[half]
        marked = trace.delivered_ce[half]
        if delivered.size >= 2 and not np.isnan(delivered).any() and \
                not np.isnan(marked).any() and delivered[-1] > delivered[0]:
            out["ecn_marked_fraction"] = float((marked[-1] - marked[0])
                                               / (delivered[-1] - delivered[0]))
    if probe is not None and len(probe):
        reductions = cwr_reductions(probe)
        out["ecn_reductions"] = len(reductions)
        if reductions:
            out["ecn_reduction_ratio_median"] = float(np.median(
                [r.ssthresh / r.cwnd for r in reductions]))
    return out
