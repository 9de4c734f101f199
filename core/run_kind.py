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
  again (`./repro verify`);
- `worker_offers`: what this machine offers the kind's runs on a cluster (a switch that
  runs, say), as worker resources;
- `doctor_checks`: what `./repro doctor` checks for the kind's runs.

Each kind is a package, runkinds/<kind>/, and names the two modules a run executes:
`measure_module` (its measurement: whatever it imports, the run's id hashes,
core/code_identity.py) and `metrics_module` (its metrics: whatever that imports, the
version stamped into metrics.json). runkinds/registry.py lists the kinds and is the only
place that reads the option; docs/adding-a-paper.md says when a paper needs a new one.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from core.checks import Check
from core.code_identity import EVERY_RUN_NATIVE, CodeRoots
from core.errors import UsageError
from core.paths import ProjectPaths
from core.runspec import RunSpec
from core.traces import TraceSet

TOPOLOGY_OPTION = "topology"
# More slots than any pool has: a run asking for it takes the whole pool and goes alone.
WHOLE_POOL = 1 << 16
# A spec option: the run takes the whole pool whatever its kind would give it (a kind's
# `slots` honours it), where an experiment measured that sharing makes the run late.
ALONE_OPTION = "alone"


class UnknownRunKind(UsageError):
    pass


class RunKind(ABC):
    name: str  # the value of the run's `topology` option
    measure_module: str  # e.g. "runkinds.trace_path.measure": the code a run executes
    metrics_module: str  # e.g. "runkinds.trace_path.metrics": the code its metrics come from

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

    def code_roots(self, spec: RunSpec | None) -> CodeRoots:
        """Where the code a run of this kind executes starts (core/code_identity.py hashes
        it into the run's id); with no spec, every run of the kind (every scheme it runs)."""
        return CodeRoots((self.measure_module,), native=EVERY_RUN_NATIVE)

    def slots(self, spec: RunSpec) -> int:
        """How many of the pool's slots the run takes while it runs (app/runner.py). A run
        that would move its own measurement, or the others', if it shared the CPUs with a
        pool's worth of runs asks for more; asking for more than the pool has takes the
        whole pool: the run goes alone."""
        return 1

    def missing_artifacts(self, run_dir: Path) -> str | None:
        """What the folder lacks to derive the metrics again, or None."""
        return None

    # True: whether a run measured what it should is read from its metrics (`invalid`), so a
    # run whose metrics cannot be derived is no measurement either, and fails.
    judged_by_metrics: bool = False

    def invalid(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str | None:
        """Why a run that finished measured something else than its spec asks (its metrics
        say so), or None; the executor fails such a run with this reason."""
        return None

    def worker_offers(self, paths: ProjectPaths) -> list[str]:
        """The worker resources this machine offers the kind's runs (core/worker_resources.py)
        beyond a slot, traces and congestion controls."""
        return []

    def explain_need(self, resource: str) -> str | None:
        """What a worker lacks that lacks `resource`, one of this kind's needs, and the fix
        (None: not this kind's)."""
        return None

    def doctor_checks(self, paths: ProjectPaths) -> list[Check]:
        """What `./repro doctor` checks for this kind's runs (nothing beyond the machine's
        common checks here)."""
        return []
