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
from pathlib import Path

from core.executor import planned_duration_s
from core.paths import ProjectPaths, display
from core.progress import ProgressReporter
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments.base import Experiment

log = logging.getLogger(__name__)

# Set-up, teardown and analysis around each run's emulated time (measured: ~3-6 s).
PER_RUN_OVERHEAD_S = 6.0
CHILD_EXIT_GRACE_S = 30.0


@dataclass
class MatrixResult:
    planned: int
    skipped: int
    succeeded: list[RunSpec] = field(default_factory=list)
    failed: list[tuple[RunSpec, str]] = field(default_factory=list)
    missing: list[tuple[RunSpec, str]] = field(default_factory=list)
    interrupted: bool = False


def estimate_s(specs: list[RunSpec], traces: TraceSet, jobs: int) -> float:
    total = 0.0
    for spec in specs:
        try:
            total += planned_duration_s(spec, traces) + PER_RUN_OVERHEAD_S
        except Exception:  # a missing trace: that run will fail fast
            total += PER_RUN_OVERHEAD_S
    return total / max(1, jobs)


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


class MatrixRunner:
    def __init__(self, paths: ProjectPaths, traces: TraceSet, jobs: int = 1,
                 force: bool = False, out=sys.stdout) -> None:
        self.paths = paths
        self.traces = traces
        self.jobs = max(1, jobs)
        self.force = force
        self.out = out
        self._stop = threading.Event()
        self._children: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()

    def to_run(self, experiment: Experiment, specs: list[RunSpec]) -> list[RunSpec]:
        """The runs still to do: all with --force, else those not finished."""
        store = ExperimentStore(self.paths.results_dir / experiment.name)
        return [s for s in specs if self.force or not store.is_done(s)]

    def run(self, experiment: Experiment, specs: list[RunSpec]) -> MatrixResult:
        store = ExperimentStore(self.paths.results_dir / experiment.name)
        for moved in store.recover():
            print(f"moved a half-written run aside: {display(moved)}",
                  file=self.out)
        todo = self.to_run(experiment, specs)
        result = MatrixResult(planned=len(specs), skipped=len(specs) - len(todo))
        eta = estimate_s(todo, self.traces, self.jobs)
        print(f"plan: {experiment.name}: {len(specs)} runs, {result.skipped} already done, "
              f"{len(todo)} to run with --jobs {self.jobs}; expected {format_duration(eta)}",
              file=self.out, flush=True)
        if not todo:
            return result
        weights = {s: estimate_s([s], self.traces, 1) for s in todo}
        progress = ProgressReporter(total=sum(weights.values()), count=len(todo), out=self.out)
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        pending: dict[Future[tuple[bool, str]], RunSpec] = {}
        queue = list(todo)
        try:
            while queue or pending:
                while queue and len(pending) < self.jobs and not self._stop.is_set():
                    spec = queue.pop(0)
                    pending[pool.submit(self._run_child, experiment.name, spec)] = spec
                if not pending:
                    break
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    spec = pending.pop(future)
                    ok, reason = future.result()
                    if ok:
                        result.succeeded.append(spec)
                    else:
                        result.failed.append((spec, reason))
                    progress.advance(weights[spec], spec.label(), ok, reason)
        except KeyboardInterrupt:
            result.interrupted = True
            self._stop.set()
            print("\ninterrupted: stopping the runs in progress (their networks are torn "
                  "down; a rerun resumes)", file=self.out, flush=True)
            self._wait_children()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            progress.close()
        return result

    def _run_child(self, experiment: str, spec: RunSpec) -> tuple[bool, str]:
        args = [sys.executable, str(self.paths.root / "repro"), "_execute",
                "--experiment", experiment, "--spec-json", json.dumps(spec.to_dict())]
        with self._lock:
            if self._stop.is_set():
                return False, "not started: interrupted"
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
            return False, f"run process exited with status {proc.returncode}: {tail}"
        outcome = json.loads(lines[-1])
        return bool(outcome["ok"]), outcome.get("reason", "")

    def _wait_children(self) -> None:
        """Ask each child to tear down (SIGINT, as a terminal would), then wait for it."""
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


def print_summary(result: MatrixResult, out=sys.stdout) -> None:
    print(f"done: {len(result.succeeded)} ok, {len(result.failed)} failed, "
          f"{result.skipped} skipped (already done)", file=out)
    for spec, reason in result.failed:
        print(f"  FAILED {spec.label()}: {reason}", file=out)
