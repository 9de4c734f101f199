"""What a flow's congestion control keeps beyond its window, for the run kinds that serve any
variant: they ask here, not the module of one variant.

Today that is DCTCP's alpha (analysis/dctcp_alpha.py), read from what the run recorded for
the flow; a flow whose variant recorded nothing gets None values, so every run's metrics
have the same keys.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.dctcp_alpha import dctcp_metrics, flow_alpha_mean
from analysis.tcp_probe import ProbeTrace


def variant_state_metrics(flow_dir: Path, probe: ProbeTrace | None) -> dict[str, Any]:
    """The variant's own state and its window reductions (DCTCP's alpha)."""
    return dctcp_metrics(flow_dir, probe)


def congestion_extent_mean(flow_dir: Path, start_mono: float, end_mono: float) -> float | None:
    """The mean, over the window (CLOCK_MONOTONIC s), of the flow's own estimate of how much
    of its traffic met congestion, where its variant keeps one (DCTCP's alpha); else None."""
    return flow_alpha_mean(flow_dir, start_mono, end_mono)
