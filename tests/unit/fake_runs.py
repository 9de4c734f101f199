"""Hand-made run folders and traces, so experiments' figures can be tested without Mininet."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from core.results import DONE, FAILED, SPEC, ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceSet


def add_done(store: ExperimentStore, spec: RunSpec, **metrics: Any) -> Path:
    """A finished run with these metrics (throughput_mbps, p95_e2e_delay_ms, ...)."""
    run_dir = store.runs_dir / spec.dirname()
    run_dir.mkdir(parents=True)
    (run_dir / SPEC).write_text(json.dumps(spec.to_dict()))
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    (run_dir / "meta.json").write_text(json.dumps({"duration_s": spec.duration_s}))
    (run_dir / DONE).write_text("done\n")
    return run_dir


def add_failed(store: ExperimentStore, spec: RunSpec, reason: str, when: float = 1.0) -> Path:
    run_dir = store.failed_dir / f"{spec.dirname()}-{when:g}"
    run_dir.mkdir(parents=True)
    (run_dir / SPEC).write_text(json.dumps(spec.to_dict()))
    (run_dir / FAILED).write_text(json.dumps({"reason": reason, "time": when}))
    return run_dir


def write_trace(directory: Path, name: str, times: Iterable[int]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("".join(f"{t}\n" for t in times))
    return path


def trace_set(directory: Path) -> TraceSet:
    """Traces found by file name in `directory` (no manifest, so no hash check)."""
    return TraceSet([directory], directory / "cache", manifest={})


def write_link_log(path: Path, every_ms: int, delay_ms: int, span_ms: int = 4000) -> Path:
    """A mahimahi-format log of a 12 Mbit/s link (an opportunity each ms) on which one
    1504-byte packet departs every `every_ms` ms after `delay_ms` ms in the queue:
    utilization 1/every_ms, p95 signal delay about `delay_ms`."""
    lines = ["# base timestamp: 0", "# queue: infinite"]
    for t in range(span_ms):
        lines.append(f"{t} # 1504")
        if t % every_ms == 0:
            lines.append(f"{t} + 1504")
        sent = t - delay_ms
        if sent >= 0 and sent % every_ms == 0:
            lines.append(f"{t} - 1504 {delay_ms}")
    path.write_text("\n".join(lines) + "\n")
    return path


def add_logged_run(store: ExperimentStore, spec: RunSpec, every_ms: int, delay_ms: int,
                   lateness_p99_us: int = 100, stamp_version: bool = True,
                   extra_metrics: dict[str, Any] | None = None,
                   sender_reaction_p99_us: int | None = None) -> Path:
    """A finished run with real artifacts (data.log, link-stats.json, meta.json) and the
    metrics.json the analysis makes of them, written before DONE as a real run's are; with
    `sender_reaction_p99_us`, its sender's stats hold that ACK-to-data p99 (5000 samples)."""
    from runkinds.metrics import VERSION_KEY, derive
    from runkinds.registry import analysis_version_of
    import os
    run_dir = store.runs_dir / spec.dirname()
    run_dir.mkdir(parents=True)
    (run_dir / SPEC).write_text(json.dumps(spec.to_dict()))
    write_link_log(run_dir / "data.log", every_ms, delay_ms)
    link = {"a2b": {"lateness_us": {"p50": 10, "p99": lateness_p99_us, "max": 900}},
            "b2a": {"lateness_us": {"p50": 10, "p99": 50, "max": 300}}}
    (run_dir / "link-stats.json").write_text(json.dumps(link))
    meta = {"spec": spec.to_dict(), "duration_s": spec.duration_s, "cpu_steal_pct": 0.5,
            "environment": {"kernel": "6.1-test", "distribution": "Test Linux",
                            "code_version": "test"}, "link": link}
    if sender_reaction_p99_us is not None:
        reaction = {"p50": 50, "p90": 90, "p99": sender_reaction_p99_us,
                    "max": sender_reaction_p99_us, "count": 5000}
        meta["verification"] = {"sender": {"host_timing": {
            "arrival_to_send_us": reaction, "arrival_to_send": "ACK -> data",
            "wakeup_lateness_us": {"p50": 0, "p90": 0, "p99": 0, "max": 0, "count": 0}}}}
    (run_dir / "meta.json").write_text(json.dumps(meta))
    metrics = derive(run_dir, spec, meta)  # as a real run's are derived
    if stamp_version:
        metrics[VERSION_KEY] = analysis_version_of(spec)
    metrics.update(extra_metrics or {})
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    (run_dir / DONE).write_text("done\n")
    # DONE is written after metrics.json: make its time strictly later, as on a real run.
    done_time = (run_dir / "metrics.json").stat().st_mtime + 1
    os.utime(run_dir / DONE, (done_time, done_time))
    return run_dir
