"""A finished run's metrics, from its artifacts: the one derivation for a run that just
finished, `./repro report` (stale metrics recomputed) and `./repro verify` (re-derived and
compared).

metrics.json carries `analysis_version`, the version of the code its numbers came from:
the run's kind's metrics module and what it imports (runkinds/registry.py). A metrics.json
of another version is stale and is recomputed from the artifacts; editing a module that no
kind's metrics import (a figure, the report) leaves every run's metrics as they are.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.cpu_probe import cpu_probe_metrics
from analysis.rederive import ArtifactsUnreadable, MetricsCheck, UNREADABLE, compare
from core.results import SPEC, read_json, write_json
from core.runspec import RunSpec
from runkinds.registry import analysis_version_of, kind_of

METRICS = "metrics.json"
META = "meta.json"
VERSION_KEY = "analysis_version"


def derive(run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
    """The run's metrics from its artifacts: its kind's, and what every run records beside
    (the CPU probe's)."""
    metrics = kind_of(spec).metrics(run_dir, spec, meta)
    metrics.update(cpu_probe_metrics(run_dir, meta))
    return metrics


def stamped_metrics(run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
    """The run's metrics, computed now, with the version of the code that computed them."""
    metrics = derive(run_dir, spec, meta)
    metrics[VERSION_KEY] = analysis_version_of(spec)
    return metrics


def is_stale(run_dir: Path) -> bool:
    """No readable metrics.json, or one computed by another version of its metrics' code."""
    try:
        spec = RunSpec.from_dict(read_json(run_dir / SPEC))
        return read_json(run_dir / METRICS).get(VERSION_KEY) != analysis_version_of(spec)
    except (OSError, ValueError, AttributeError, TypeError):
        return True


def recompute(run_dir: Path) -> dict[str, Any]:
    """Recompute metrics.json from the run's artifacts (raises what the analysis raises)."""
    spec = RunSpec.from_dict(read_json(run_dir / SPEC))
    meta = read_json(run_dir / META)
    metrics = stamped_metrics(run_dir, spec, meta)
    write_json(run_dir / METRICS, metrics)
    return metrics


def rederive(run_dir: Path) -> tuple[RunSpec, dict[str, Any], dict[str, Any]]:
    """(spec, meta, metrics re-derived from the raw artifacts) of one finished run."""
    try:
        spec = RunSpec.from_dict(read_json(run_dir / SPEC))
        meta = read_json(run_dir / META)
    except (OSError, ValueError, TypeError) as e:
        raise ArtifactsUnreadable(f"{run_dir.name}: spec.json/meta.json unreadable: {e}") from e
    stats = run_dir / "link-stats.json"
    if stats.is_file():  # the emulator's own record, rather than meta.json's copy of it
        try:
            meta = dict(meta, link=read_json(stats))
        except (OSError, ValueError) as e:
            raise ArtifactsUnreadable(f"{run_dir.name}: link-stats.json unreadable: {e}") from e
    try:
        kind = kind_of(spec)
    except ValueError as e:
        raise ArtifactsUnreadable(f"{run_dir.name}: {e}") from e
    missing = kind.missing_artifacts(run_dir)
    if missing:
        raise ArtifactsUnreadable(f"{run_dir.name}: {missing}")
    try:
        return spec, meta, derive(run_dir, spec, meta)
    except Exception as e:  # any parse error: the artifacts do not give the metrics
        raise ArtifactsUnreadable(f"{run_dir.name}: {type(e).__name__}: {e}") from e


def check_run(run_dir: Path) -> tuple[
        MetricsCheck, RunSpec | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(the check, spec, meta, re-derived metrics) of one finished run folder."""
    try:
        spec, meta, derived = rederive(run_dir)
    except ArtifactsUnreadable as e:
        return MetricsCheck(UNREADABLE, detail=str(e)), None, None, None
    try:
        stored = read_json(run_dir / METRICS)
    except (OSError, ValueError) as e:
        return (MetricsCheck(UNREADABLE, detail=f"{run_dir.name}: metrics.json unreadable: {e}"),
                spec, meta, derived)
    return (compare(run_dir, stored, derived, VERSION_KEY, analysis_version_of(spec)),
            spec, meta, derived)
