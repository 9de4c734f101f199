"""metrics.json of a trace-path run: the data direction's link metrics, plus what the run
verified (a switched-path run's come from runkinds/switched_path/transfer_run.py).

The scored part of the run starts after its warm-up (meta.json's `span`, written by the
executor; none for runs without one). A run that loads both directions at once also gets the
other direction's metrics, from ack.log, under `reverse`. A full run's metrics are also kept
under each other rule for where scoring ends (analysis/scored_span.py: `scored_spans`). TCP
runs also get their congestion control's behaviour (analysis/cc_behaviour.py) and the window
check of each flow (analysis/tcp_window_check.py: `window_valid` False makes the run
invalid). Every trace-path
run gets its end hosts' own timing and its verdict (analysis/host_timing.py).

A run with a per-packet queue log (asked for, or kept because the link had random loss) gets
the link's fidelity from it over the scored part: the share of gaps between backlogged
departures within 10% of the gaps their schedule asked for, the queue's drops and the
random losses. A TCP run whose sender's sockets were sampled (socket-samples.csv) gets its
data connection's window limits (analysis/window_limits.py: `window_limited` makes the run
invalid).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.cc_behaviour import cc_behaviour_metrics
from analysis.fidelity import gaps_within_10pct, lateness_ok
from analysis.host_timing import host_timing_metrics
from analysis.mahimahi_log import parse_log
from analysis.metrics import link_metrics
from analysis.queue_log import fidelity_metrics, parse_queue_log
from analysis.socket_samples import data_connection, window_limits
from analysis.window_limits import window_limit_metrics
from analysis.scored_span import REVERSE, SPANS_KEY, span_blocks
from analysis.tcp_window_check import tcp_window_metrics
from core.run_span import both_directions
from core.runspec import RunSpec
from kernel.socket_samples import FILE as SOCKET_SAMPLES
from topologies.queue_log import DATA_FILE as DATA_QUEUE_LOG

__all__ = ["REVERSE", "trace_path_metrics"]  # REVERSE: the other direction's key


def trace_path_metrics(run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
    """Metrics from data.log (the data direction), with the data path's fixed delay."""
    span = meta.get("span") or {}
    warmup_ms = int(span.get("warmup_ms", 0))
    logs = {"data": parse_log(run_dir / "data.log")}
    if both_directions(spec):
        logs[REVERSE] = parse_log(run_dir / "ack.log")
    metrics: dict[str, Any] = link_metrics(logs["data"], spec.delay_ms, warmup_ms).to_dict()
    metrics["scored_from_ms"] = warmup_ms
    if REVERSE in logs:
        metrics[REVERSE] = link_metrics(logs[REVERSE], spec.delay_ms, warmup_ms).to_dict()
    if spec.duration_s is None and "span_ms" in span:
        metrics[SPANS_KEY] = span_blocks(logs, span, spec.delay_ms, warmup_ms)
    link = meta.get("link") or {}
    lateness = (link.get("a2b") or {}).get("lateness_us") or {}
    data = link.get("a2b") or {}
    ack_lateness = (link.get("b2a") or {}).get("lateness_us") or {}
    metrics.update(lateness_p50_us=lateness.get("p50"), lateness_p99_us=lateness.get("p99"),
                   lateness_max_us=lateness.get("max"),
                   ack_lateness_p99_us=ack_lateness.get("p99"),
                   lateness_ok=lateness_ok(link),
                   emulator_gaps_within_10pct=gaps_within_10pct(link),
                   cpu_steal_pct=meta.get("cpu_steal_pct"),
                   socket_drops=data.get("socket_drops"),
                   queued_at_end_bytes=data.get("queue_bytes_at_end"),
                   arrivals_after_service=data.get("arrivals_after_service"),
                   sender_end=meta.get("sender_end"),
                   emulator_scheduling=link.get("scheduling"))
    metrics.update(host_timing_metrics(meta))
    if (run_dir / DATA_QUEUE_LOG).is_file():
        metrics.update(fidelity_metrics(parse_queue_log(run_dir / DATA_QUEUE_LOG),
                                        warmup_ms / 1000.0))
    verification = meta.get("verification") or {}
    if (run_dir / SOCKET_SAMPLES).is_file():
        connection = data_connection(run_dir, verification.get("data_port"))
        metrics.update(window_limit_metrics(
            [window_limits(connection) if connection is not None else None]))
    for key in ("cc_requested", "cc_used", "cc_provider", "cc_source_sha256", "window_capped",
                "cc_used_reverse"):
        if key in verification:
            metrics[key] = verification[key]
    if "cc_requested" in verification:
        metrics["tcp_probe_status"] = (verification.get("tcp_probe") or {}).get("status")
        metrics.update(cc_behaviour_metrics(run_dir, verification["cc_requested"]))
        metrics.update(tcp_window_metrics(run_dir, spec, meta))
    return metrics
