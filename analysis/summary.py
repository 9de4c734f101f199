"""Collect finished runs of an experiment into rows, and write them as CSV."""
from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from core.results import ExperimentStore, read_json
from core.runspec import RunSpec

log = logging.getLogger(__name__)


INVALID = "invalid run"  # how a finished but invalid run is named where its result would be


def invalid_reason(metrics: Mapping[str, Any]) -> str:
    """Why a finished run is no measurement ("" when it is one): the kernel's window of one
    of its TCP flows was absurd (`window_valid` false: analysis/window_sanity.py), or its
    long flows were held back by their windows, not the path (`window_limited`: the
    receiver's window or the send buffer, runkinds/shared_bottleneck/metrics.py). Such a run
    is left out of figures and claims, and counted and shown with this reason."""
    if metrics.get("window_valid") is False:
        return str(metrics.get("window_verdict") or "absurd kernel window")
    if metrics.get("window_limited"):
        return str(metrics["window_limited"])
    return ""


@dataclass(frozen=True)
class RunRecord:
    spec: RunSpec
    metrics: dict[str, Any]
    meta: dict[str, Any]
    path: Path

    @property
    def invalid(self) -> str:
        """Why this finished run is invalid ("" when it is valid)."""
        return invalid_reason(self.metrics)


def finished_runs(store: ExperimentStore,
                  wanted: Iterable[RunSpec] | None = None) -> list[RunRecord]:
    """Finished runs, optionally only those of a given matrix (current code version).

    A run without metrics.json (its analysis raised; `./repro report` computes it again)
    is left out, with a warning."""
    wanted_dirs = {s.dirname() for s in wanted} if wanted is not None else None
    records = []
    for run_dir in store.done_runs():
        if wanted_dirs is not None and run_dir.name not in wanted_dirs:
            continue
        if not (run_dir / "metrics.json").is_file():
            log.warning("%s: finished without metrics (its analysis failed): left out",
                        run_dir.name)
            continue
        spec = RunSpec.from_dict(read_json(run_dir / "spec.json"))
        records.append(RunRecord(spec, read_json(run_dir / "metrics.json"),
                                 read_json(run_dir / "meta.json"), run_dir))
    return records


def failed_runs(store: ExperimentStore) -> list[tuple[str, str]]:
    """(run folder, reason) for every failure on record."""
    return [(p.name, read_json(p / "FAILED.json").get("reason", "")) for p in store.failures()]


@dataclass(frozen=True)
class FailedRecord:
    spec: RunSpec
    reason: str
    time: float  # when it failed (seconds since the epoch)
    path: Path


def failed_records(store: ExperimentStore) -> list[FailedRecord]:
    """Every failure on record whose spec is readable, oldest first."""
    records = []
    for run_dir in store.failures():
        try:
            spec = RunSpec.from_dict(read_json(run_dir / "spec.json"))
        except (OSError, ValueError, TypeError):
            continue  # a failure from before the spec was written: listed by failed_runs
        failed = read_json(run_dir / "FAILED.json")
        records.append(FailedRecord(spec, str(failed.get("reason", "")),
                                    float(failed.get("time", 0.0)), run_dir))
    return sorted(records, key=lambda r: r.time)


def write_csv(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(row.get(k)) for k in columns})
    return path


def _fmt(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else value


def latest_per_run(records: list[RunRecord]) -> list[RunRecord]:
    """One record per spec ignoring code version: the most recently finished one."""
    best: dict[str, RunRecord] = {}
    for r in records:
        key = r.spec.label()
        if key not in best or finished_at(r) > finished_at(best[key]):
            best[key] = r
    return list(best.values())


def prefer_full_runs(records: list[RunRecord]) -> list[RunRecord]:
    """Full-mode runs (whole trace once) when there are any, else the quick ones."""
    full = [r for r in records if r.spec.once]
    return full if full else records


def finished_at(r: RunRecord) -> float:
    """When the run was marked DONE (seconds since the epoch)."""
    return (r.path / "DONE").stat().st_mtime
