"""Run an experiment's matrix: plan, skip finished runs, run the rest side by side.

Each run executes in its own child process (`repro _execute`), in its own
prefixed network, so a crash or a Ctrl-C in one never corrupts another.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Protocol

from analysis.fidelity import LATE_RULE
from app.run_reasons import invalid_finder
from core.paths import ProjectPaths, display
from core.progress import ProgressReporter, makespan_s
from core.results import ExperimentStore, experiment_store
from core.runspec import RunSpec
from core.traces import TraceSet
from runkinds.registry import kind_of
from experiments.base import Experiment

log = logging.getLogger(__name__)

# Set-up, teardown and analysis around each run's span (measured alone: 1.3 s for a datagram scheme,
# 2.6 s for TCP, whose sender is stopped a second after the span).
PER_RUN_OVERHEAD_S = 3.0
CHILD_EXIT_GRACE_S = 30.0


class RunBackend(Protocol):
    """Somewhere else to run each run (app/cluster/backend.py): run() returns once it is home."""

    def run(self, experiment: str, spec: RunSpec) -> tuple[bool, str, bool]: ...

    def stop(self) -> None: ...


@dataclass
class MatrixResult:
    planned: int
    skipped: int
    succeeded: list[RunSpec] = field(default_factory=list)
    failed: list[tuple[RunSpec, str]] = field(default_factory=list)
    missing: list[tuple[RunSpec, str]] = field(default_factory=list)
    late: list[RunSpec] = field(default_factory=list)  # finished, but the emulator was late
    interrupted: bool = False


def run_estimate_s(spec: RunSpec, traces: TraceSet) -> float:
    """One run's expected seconds: its span plus set-up and teardown."""
    try:
        return kind_of(spec).planned_seconds(spec, traces) + PER_RUN_OVERHEAD_S
    except Exception:  # a missing trace: that run will fail fast
        return PER_RUN_OVERHEAD_S


def run_slots(spec: RunSpec, jobs: int) -> int:
    """How many of a pool of `jobs` slots the run takes (its kind says; all of them at
    most: a run asking for more than the pool has runs alone)."""
    try:
        wanted = kind_of(spec).slots(spec)
    except Exception:  # an unknown kind: that run will fail fast
        wanted = 1
    return min(max(1, int(wanted)), max(1, jobs))


def start_order(item: tuple[float, int]) -> tuple[int, float]:
    """The order the pool starts runs in, as (expected seconds, slots): the runs that take
    several slots first, the most slots first (one that takes the whole pool then runs
    before the pool fills, instead of waiting for a full pool to drain), then longest
    first (a long run started last would hold the pass open alone)."""
    weight, slots = item
    return (-slots, -weight)


def estimate_s(specs: list[RunSpec], traces: TraceSet, jobs: int) -> float:
    """When the last of `specs` should end, run in the pool's order `jobs` side by side."""
    return pass_s([(run_estimate_s(s, traces), run_slots(s, jobs)) for s in specs], jobs)


def pass_s(runs: list[tuple[float, int]], jobs: int) -> float:
    """How long runs of these (expected seconds, slots) take through `jobs` slots, in the
    order the pool starts them in."""
    ordered = sorted(runs, key=start_order)
    return makespan_s([w for w, _ in ordered], jobs, slots=[n for _, n in ordered])


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


class MatrixRunner:
    def __init__(self, paths: ProjectPaths, traces: TraceSet, jobs: int = 1,
                 force: bool = False, redo_late: bool = False, out=sys.stdout,
                 backend: RunBackend | None = None, redo_invalid: bool = False) -> None:
        self.paths = paths
        self.traces = traces
        self.jobs = max(1, jobs)
        self.force = force
        self.redo_late = redo_late
        self.redo_invalid = redo_invalid
        self.out = out
        self.backend = backend  # None: the local pool of child processes
        self._stop = threading.Event()
        self._children: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()

    def _slots(self, spec: RunSpec) -> int:
        """The slots a run takes here. On a cluster the scheduler places each run by the
        resources it asks for (app/cluster/backend.py asks for its slots there), and this
        runner only bounds how many are in flight: one each."""
        return 1 if self.backend is not None else run_slots(spec, self.jobs)

    def store(self, experiment: str) -> ExperimentStore:
        return experiment_store(self.paths.results_dir, experiment)

    def to_run(self, experiment: Experiment, specs: list[RunSpec]) -> list[RunSpec]:
        """The runs still to do: all with --force, else those not finished (and, with
        --redo-late, those that finished with the emulator late; with --redo-invalid, those
        the experiment leaves out as invalid)."""
        store = self.store(experiment.name)
        invalid = invalid_finder(experiment.invalid_reason, store) if self.redo_invalid else None
        return [s for s in specs if self.force or not store.is_done(s)
                or (self.redo_late and store.was_late(s))
                or (invalid is not None and invalid(s) != "")]

    def run(self, experiment: Experiment, specs: list[RunSpec]) -> MatrixResult:
        return self.run_plan([(experiment, specs)])[experiment.name]

    def run_plan(self, plan: list[tuple[Experiment, list[RunSpec]]]) -> dict[str, MatrixResult]:
        """Several experiments' runs through one pool, so one's tail overlaps the next's start.

        A run another experiment already finished is linked, not rerun; a run two
        experiments of the plan ask for is run once, for both."""
        results: dict[str, MatrixResult] = {}
        queue: list[tuple[str, RunSpec]] = []
        # The experiments waiting for each queued run (the first one runs it).
        self._owners: dict[RunSpec, list[str]] = {}
        # Each run's expected seconds, once (a --once run reads its trace for them): the
        # plan lines and the progress bar's weights all come from these.
        weights: dict[tuple[str, RunSpec], float] = {}
        slots: dict[tuple[str, RunSpec], int] = {}
        for experiment, specs in plan:
            store = self.store(experiment.name)
            for moved in store.recover():
                print(f"moved a half-written run aside: {display(moved)}", file=self.out)
            if not self.force:
                for spec in specs:
                    if store.done_elsewhere(spec):
                        store.link(spec)  # done for another experiment: shared
            todo = self.to_run(experiment, specs)
            results[experiment.name] = MatrixResult(planned=len(specs),
                                                    skipped=len(specs) - len(todo))
            mine: dict[tuple[str, RunSpec], float] = {}
            joined = 0
            for spec in todo:
                if spec in self._owners:
                    self._owners[spec].append(experiment.name)
                    joined += 1
                else:
                    self._owners[spec] = [experiment.name]
                    mine[(experiment.name, spec)] = run_estimate_s(spec, self.traces)
                    slots[(experiment.name, spec)] = self._slots(spec)
            shared = f"; {joined} run once for an experiment before it" if joined else ""
            alone = pass_s([(w, slots[item]) for item, w in mine.items()], self.jobs)
            heavy = [slots[item] for item in mine if slots[item] > 1]
            if heavy:
                shared += (f"; {len(heavy)} alone (each takes the whole pool)"
                           if all(n == self.jobs for n in heavy) else
                           f"; {len(heavy)} taking {min(heavy)}-{max(heavy)} slots each")
            print(f"plan: {experiment.name}: {len(specs)} runs, {len(specs) - len(todo)} "
                  f"already done, {len(todo) - joined} to run with --jobs {self.jobs}"
                  f"{shared}; expected {format_duration(alone)}", file=self.out, flush=True)
            weights.update(mine)
            queue += list(mine)
        # Longest first: a long run started last would hold the pass open alone. The plan
        # lines simulate the slots in this order (a full pass of 36 trace runs at 13 side by side:
        # 50 min 31 s measured in matrix order, 50 min 17 s simulated, where the sum of its
        # runs over 13 slots said 36 min; longest first, 48 min 56 s). Runs that take
        # several slots go before the rest (start_order).
        queue.sort(key=lambda item: start_order((weights[item], slots[item])))
        if len(plan) > 1:
            total = makespan_s([weights[item] for item in queue], self.jobs,
                               slots=[slots[item] for item in queue])
            print(f"plan: in all, {len(queue)} runs through one pool of {self.jobs} side by "
                  f"side; expected {format_duration(total)}", file=self.out, flush=True)
        if not queue:
            return results
        progress = ProgressReporter([weights[item] for item in queue], jobs=self.jobs,
                                    out=self.out, slots=[slots[item] for item in queue])
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        pending: dict[Future[tuple[bool, str, bool]], tuple[str, RunSpec]] = {}
        try:
            while queue or pending:
                # In order: the next run starts once it has its slots free, and the runs
                # behind it wait for it (a run that takes the whole pool runs alone).
                while queue and not self._stop.is_set() and \
                        sum(slots[p] for p in pending.values()) + slots[queue[0]] <= self.jobs:
                    item = queue.pop(0)
                    pending[pool.submit(self._run_child, *item)] = item
                    progress.start(item, weights[item], slots[item])
                if not pending:
                    break
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                progress.tick()
                for future in done:
                    name, spec = item = pending.pop(future)
                    ok, reason, late = future.result()
                    for owner in self._owners[spec]:
                        if ok and owner != name:
                            self.store(owner).link(spec)
                        if ok:
                            results[owner].succeeded.append(spec)
                            if late:
                                results[owner].late.append(spec)
                        else:
                            results[owner].failed.append((spec, reason))
                    if ok and late:
                        reason = f"the emulator was late ({LATE_RULE})"
                    label = spec.label() if len(results) == 1 else f"{name}: {spec.label()}"
                    progress.advance(weights[item], label, ok, reason, key=item)
        except KeyboardInterrupt:
            for result in results.values():
                result.interrupted = True
            self._stop.set()
            print("\ninterrupted: stopping the runs in progress (their networks are torn "
                  "down; a rerun resumes)", file=self.out, flush=True)
            self._wait_children()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            progress.close()
        return results

    def _run_child(self, experiment: str, spec: RunSpec) -> tuple[bool, str, bool]:
        """(finished, the reason it did not, finished with the emulator late)."""
        if self.backend is not None:
            return self.backend.run(experiment, spec)
        args = [sys.executable, str(self.paths.root / "repro"), "_execute",
                "--experiment", experiment, "--spec-json", json.dumps(spec.to_dict())]
        with self._lock:
            if self._stop.is_set():
                return False, "not started: interrupted", False
            # The child writes where this runner reads, whatever the caller's environment.
            env = dict(os.environ, NETREPRO_RESULTS=str(self.paths.results_dir))
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env)
            self._children.add(proc)
        stdout, stderr = proc.communicate()
        with self._lock:
            self._children.discard(proc)
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        if not lines:
            tail = " | ".join(stderr.strip().splitlines()[-3:])
            return False, f"run process exited with status {proc.returncode}: {tail}", False
        outcome = json.loads(lines[-1])
        return (bool(outcome["ok"]), outcome.get("reason", ""),
                outcome.get("lateness_ok") is False)

    def _wait_children(self) -> None:
        """Ask each child to tear down (SIGINT, as a terminal would), then wait for it."""
        if self.backend is not None:
            self.backend.stop()
            return
        with self._lock:
            for proc in self._children:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + CHILD_EXIT_GRACE_S
        while time.monotonic() < deadline:
            with self._lock:
                if not any(p.poll() is None for p in self._children):
                    return
            time.sleep(0.2)
        with self._lock:
            for proc in self._children:
                if proc.poll() is None:
                    proc.kill()


def print_summary(result: MatrixResult, title: str = "done", out=sys.stdout) -> None:
    print(f"{title}: {len(result.succeeded)} ok, {len(result.failed)} failed, "
          f"{result.skipped} skipped (already done)", file=out)
    for spec, reason in result.failed:
        print(f"  FAILED {spec.label()}: {reason}", file=out)
    if result.late:
        print(f"  {len(result.late)} finished with the emulator late ({LATE_RULE}; drawn "
              "hollow): the machine stalled it; `--redo-late` reruns them", file=out)
