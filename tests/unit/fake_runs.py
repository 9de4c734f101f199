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
