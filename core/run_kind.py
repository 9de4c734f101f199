"""A run kind: how one kind of network is measured, and how its runs become metrics.

Every run is of one kind, named by its `topology` option (the trace path when it has
none). A kind answers, for a RunSpec, everything the rest of the suite asks of it:

- `check`: refuse a run it cannot plan, before anything is built (a UsageError);
- `planned_seconds`: how long its measurement is expected to take (plans and ETAs);
- `worker_needs`: what a cluster worker must offer to take it (core/worker_resources.py);
- `slots`: how many of the pool's slots it takes (1 unless it is too heavy to share the
  machine: more than the pool has means all of them, so the run goes alone);
- `measure`: build its network, run its scheme, leave its artifacts (needs root and,
  usually, Mininet; imported only when a run is made);
- `metrics`: the run's metrics from its artifacts alone;
- `missing_artifacts`: what a finished run's folder lacks for its metrics to be derived
  again (`./repro verify`).

The kinds are implemented in runkinds/ and listed in runkinds/registry.py, the only
place that reads the option; docs/adding-a-paper.md says when a paper needs a new one.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from core.errors import UsageError
from core.paths import ProjectPaths
from core.runspec import RunSpec
from core.traces import TraceSet

TOPOLOGY_OPTION = "topology"


class UnknownRunKind(UsageError):
    pass


class RunKind(ABC):
    name: str  # the value of the run's `topology` option

    @abstractmethod
    def check(self, spec: RunSpec, traces: TraceSet) -> None:
        """Refuse (UsageError) a spec this kind cannot plan: a bad trace or fixed rate, an
        option missing."""

    @abstractmethod
    def planned_seconds(self, spec: RunSpec, traces: TraceSet) -> float:
        """The measurement's expected duration."""

    @abstractmethod
    def worker_needs(self, spec: RunSpec,
                     traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
        """(the worker resources the run needs beyond a slot and the code version, traces
        outside the manifest -> their sha256, which the worker checks)."""

    @abstractmethod
    def measure(self, spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                meta: dict[str, Any]) -> None:
        """Measure the run: its artifacts go into `out`, the facts it learns into `meta`."""

    @abstractmethod
    def metrics(self, run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
        """The run's metrics from its artifacts."""

    def slots(self, spec: RunSpec) -> int:
        """How many of the pool's slots the run takes while it runs (app/runner.py). A run
        that would move its own measurement, or the others', if it shared the CPUs with a
        pool's worth of runs asks for more; asking for more than the pool has takes the
        whole pool: the run goes alone."""
        return 1

    def missing_artifacts(self, run_dir: Path) -> str | None:
        """What the folder lacks to derive the metrics again, or None."""
        return None
