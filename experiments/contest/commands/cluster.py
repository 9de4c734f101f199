"""`contest submit --cluster`: a submission's trials on Dask workers, built there.

The client checks the submission as a local submit does (files, API generation,
name, trace) but compiles and runs nothing: each trial not done before goes to
a worker that can build contest submissions, with the sources and their sha256
(schemes/submission/shipped.py). The trials run side by side, up to the cluster's
slots. Each comes home as an archive and is committed into
results/contest/runs/ as a local trial is, its meta.json naming the worker that
built and ran it, so the leaderboard reads it as any other. A trial whose build
failed on its worker fails with the compiler's message; its build log is kept
in the submission's build.log.
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from app.cluster.backend import ClusterBackend, RemoteOutcome
from schemes.submission.shipped import ShippedSubmission
from core.results import ExperimentStore, read_json
from core.runspec import RunSpec
from schemes.submission.sources import Sources

Entry = dict[str, Any]


@dataclass
class ClusterTrials:
    entries: list[Entry]  # one per trial, in trial order
    build_logs: dict[str, str] = field(default_factory=dict)  # worker host -> its build log
    build_failed: list[str] = field(default_factory=list)  # reasons of trials whose build failed


def trial_entry(trial: int, root: Path, outcome: RemoteOutcome,
                summary: Callable[[dict[str, Any]], Entry]) -> Entry:
    """A trial's line in submission.json, as a local trial's (plus the worker's host)."""
    entry: Entry = {"trial": trial, "ok": outcome.ok,
                    "worker": outcome.worker.get("host")}
    if outcome.path is not None:
        entry["run"] = os.path.relpath(outcome.path, root)
    if outcome.ok and outcome.path is not None:
        try:
            entry.update(summary(read_json(outcome.path / "metrics.json")))
        except (OSError, ValueError) as e:
            entry.update(ok=False, reason=f"its metrics.json is unreadable: {e}")
    elif not outcome.ok:
        entry["reason"] = outcome.reason
    return entry


def built_on_worker_failed(outcome: RemoteOutcome) -> bool:
    return not outcome.ok and outcome.worker.get("build", {}).get("built") == "failed"


def run_trials(backend: ClusterBackend, store: ExperimentStore, sources: Sources,
               specs: list[RunSpec], summary: Callable[[dict[str, Any]], Entry],
               show: Callable[[Entry], None], out: TextIO = sys.stdout) -> ClusterTrials:
    """Each spec (a trial to run) on the cluster; `show` prints each as it ends."""
    backend.committer.stores[store.root.name] = store
    shipped = ShippedSubmission.of(sources)
    result = ClusterTrials(entries=[])
    if not specs:
        return result
    pool = ThreadPoolExecutor(max_workers=max(1, min(backend.slots, len(specs))))
    pending: dict[Future[RemoteOutcome], RunSpec] = {
        pool.submit(backend.run_remote, store.root.name, spec, shipped): spec
        for spec in specs}
    try:
        while pending:
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                spec = pending.pop(future)
                outcome = future.result()
                entry = trial_entry(spec.trial, store.root, outcome, summary)
                host = str(outcome.worker.get("host", "?"))
                if outcome.build_log and host not in result.build_logs:
                    result.build_logs[host] = outcome.build_log
                if built_on_worker_failed(outcome):
                    result.build_failed.append(outcome.reason)
                result.entries.append(entry)
                show(entry)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the trials on their workers", file=out, flush=True)
        backend.stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    result.entries.sort(key=lambda e: int(e["trial"]))
    return result


def build_log_text(trials: ClusterTrials, reused: int) -> str:
    """The submission's build.log: each worker's build as it printed."""
    if not trials.build_logs:
        return ("not built here: the trials were built on their workers"
                + (f"; {reused} trial(s) were done before" if reused else "")
                + " (a worker that built these sources before reuses its binary)")
    return "\n".join(f"# built on worker {host}\n{text}"
                     for host, text in sorted(trials.build_logs.items()))
