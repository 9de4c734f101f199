"""Bring an experiment's results up to date from the artifacts, before its figures.

- Runs another experiment finished that this one's matrix asks for are linked in
  (identical runs are shared, results/runs/).
- metrics.json computed by another version of analysis/ (or missing, because the
  analysis raised when the run finished) is computed again from the run's logs:
  a change to analysis/ never needs an emulation rerun.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from runkinds.metrics import is_stale, recompute
from core.results import SPEC, ExperimentStore, read_json
from core.runspec import RunSpec
from experiments.base import Experiment

log = logging.getLogger(__name__)


@dataclass
class Refreshed:
    linked: int = 0
    recomputed: int = 0
    failed: list[tuple[Path, str]] = field(default_factory=list)

    def lines(self, name: str) -> list[str]:
        out = []
        if self.linked:
            out.append(f"{name}: {self.linked} runs shared with another experiment linked in")
        if self.recomputed:
            out.append(f"{name}: recomputed the metrics of {self.recomputed} runs from their "
                       "logs (the analysis changed since they were computed)")
        for path, error in self.failed:
            out.append(f"{name}: {path.name}: metrics could not be computed: {error}")
        return out


def link_shared(store: ExperimentStore, experiment: Experiment) -> int:
    """Link the pool's finished runs that the experiment's matrix (either mode) asks for."""
    if store.pool is None or not store.pool.is_dir():
        return 0
    pooled: list[RunSpec] = []
    for run_dir in store.pool.iterdir():
        if run_dir.name.startswith("."):
            continue
        try:
            pooled.append(RunSpec.from_dict(read_json(run_dir / SPEC)))
        except (OSError, ValueError, TypeError):
            continue
    if not pooled:
        return 0
    trials = max(s.trial for s in pooled)
    wanted = set(experiment.matrix(False, trials)) | set(experiment.matrix(True, trials))
    linked = 0
    for spec in pooled:
        if spec in wanted and store.done_elsewhere(spec):
            store.link(spec)
            linked += 1
    return linked


def recompute_stale(store: ExperimentStore) -> Refreshed:
    result = Refreshed()
    for run_dir in store.done_runs():
        if not is_stale(run_dir):
            continue
        try:
            recompute(run_dir)
            result.recomputed += 1
        except Exception as e:  # an old run the analysis cannot read: keep what it has
            log.debug("recomputing %s failed", run_dir, exc_info=True)
            result.failed.append((run_dir, f"{type(e).__name__}: {e}"))
    return result


def refresh(store: ExperimentStore, experiment: Experiment) -> Refreshed:
    linked = link_shared(store, experiment)
    result = recompute_stale(store)
    result.linked = linked
    return result
