"""metrics.json of a trace-path run: the data direction's link metrics, plus what the run
verified (a switched-path run's come from analysis/prr_run.py).

The scored part of the run starts after its warm-up (meta.json's `span`, written by the
executor; none for runs without one). A run that loads both directions at once also gets the
other direction's metrics, from ack.log, under `reverse`. TCP runs also get their congestion
control's behaviour (analysis/cc_behaviour.py) and the window check of each flow
(analysis/tcp_window_check.py: `window_valid` False makes the run invalid). Every trace-path
run gets its end hosts' own timing and its verdict (analysis/host_timing.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.cc_behaviour import cc_behaviour_metrics
from analysis.fidelity import lateness_ok
from analysis.host_timing import host_timing_metrics
from analysis.metrics import metrics_from_file
from analysis.tcp_window_check import tcp_window_metrics
from core.run_span import both_directions
from core.runspec import RunSpec

REVERSE = "reverse"  # the key of the other direction's metrics in a two-way run


def trace_path_metrics(run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
    """Metrics from data.log (the data direction), with the data path's fixed delay."""
    warmup_ms = int((meta.get("span") or {}).get("warmup_ms", 0))
    metrics: dict[str, Any] = metrics_from_file(run_dir / "data.log", fixed_delay_ms=spec.delay_ms,
                                                from_ms=warmup_ms).to_dict()
    metrics["scored_from_ms"] = warmup_ms
    if both_directions(spec):
        metrics[REVERSE] = metrics_from_file(run_dir / "ack.log", fixed_delay_ms=spec.delay_ms,
                                             from_ms=warmup_ms).to_dict()
    link = meta.get("link") or {}
    lateness = (link.get("a2b") or {}).get("lateness_us") or {}
    data = link.get("a2b") or {}
    ack_lateness = (link.get("b2a") or {}).get("lateness_us") or {}
    metrics.update(lateness_p50_us=lateness.get("p50"), lateness_p99_us=lateness.get("p99"),
                   lateness_max_us=lateness.get("max"),
                   ack_lateness_p99_us=ack_lateness.get("p99"),
                   lateness_ok=lateness_ok(link), cpu_steal_pct=meta.get("cpu_steal_pct"),
                   socket_drops=data.get("socket_drops"),
                   queued_at_end_bytes=data.get("queue_bytes_at_end"),
                   arrivals_after_service=data.get("arrivals_after_service"),
                   sender_end=meta.get("sender_end"),
                   emulator_scheduling=link.get("scheduling"))
    metrics.update(host_timing_metrics(meta))
    verification = meta.get("verification") or {}
    for key in ("cc_requested", "cc_used", "cc_provider", "cc_source_sha256", "window_capped",
                "cc_used_reverse"):
        if key in verification:
            metrics[key] = verification[key]
    if "cc_requested" in verification:
        metrics["tcp_probe_status"] = (verification.get("tcp_probe") or {}).get("status")
        metrics.update(cc_behaviour_metrics(run_dir, verification["cc_requested"]))
        metrics.update(tcp_window_metrics(run_dir, spec, meta))
    return metrics
