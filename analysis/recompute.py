"""metrics.json from a run's artifacts, stamped with the analysis version that computed it.

The artifacts (logs, the tcp_probe trace, meta.json) are the truth; metrics.json is
derived from them and can be recomputed at any time. A metrics.json whose
`analysis_version` is not the current analysis's (or that is missing, because the
analysis raised when the run finished) is stale. Which metrics a run has is its kind's
(core/run_kind.py): the caller says which kind a spec is, as `kind_of`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from analysis.cpu_probe import cpu_probe_metrics
from core.code_version import analysis_version
from core.run_kind import RunKind
from core.results import SPEC, read_json, write_json
from core.runspec import RunSpec

METRICS = "metrics.json"
META = "meta.json"
VERSION_KEY = "analysis_version"
KindOf = Callable[[RunSpec], RunKind]


def derive(run_dir: Path, spec: RunSpec, meta: dict[str, Any], kind: RunKind) -> dict[str, Any]:
    """The run's metrics from its artifacts: its kind's, and what every run records beside
    (the CPU probe's). The one derivation: a finished run's and verify's."""
    metrics = kind.metrics(run_dir, spec, meta)
    metrics.update(cpu_probe_metrics(run_dir, meta))
    return metrics


def stamped_metrics(run_dir: Path, spec: RunSpec, meta: dict[str, Any],
                    kind_of: KindOf) -> dict[str, Any]:
    """The run's metrics, computed now, with the analysis version that computed them."""
    metrics = derive(run_dir, spec, meta, kind_of(spec))
    metrics[VERSION_KEY] = analysis_version()
    return metrics


def is_stale(run_dir: Path) -> bool:
    """No readable metrics.json, or one computed by another version of the analysis."""
    try:
        return read_json(run_dir / METRICS).get(VERSION_KEY) != analysis_version()
    except (OSError, ValueError, AttributeError):
        return True


def recompute(run_dir: Path, kind_of: KindOf) -> dict[str, Any]:
    """Recompute metrics.json from the run's artifacts (raises what the analysis raises)."""
    spec = RunSpec.from_dict(read_json(run_dir / SPEC))
    meta = read_json(run_dir / META)
    metrics = stamped_metrics(run_dir, spec, meta, kind_of)
    write_json(run_dir / METRICS, metrics)
    return metrics
