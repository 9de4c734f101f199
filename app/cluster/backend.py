"""`--cluster`: each run of a matrix goes to a Dask distributed worker, not the local pool.

`--cluster tcp://HOST:8786` (or tls://) connects to a running scheduler whose
workers were started with `./repro worker`; `--cluster local:N` starts a
scheduler and N worker processes on this machine, bound to 127.0.0.1, sharing
this machine's --jobs among them (divided, never multiplied).

Each run is one task asking for the worker resources it needs
(app/cluster/worker.py): one of the worker's `runs`, the client's code version,
its traces by hash, its congestion control. A run no connected worker can serve
fails at once with what is missing. A worker that dies with a run in flight
makes the scheduler give the run to another worker (its `allowed-failures`,
3 by default; one more death ends in KilledWorker and the run fails); this is
not a task retry, which would rerun a run that failed on its own. A finished
run comes home as an archive, verified and committed once by its id
(app/cluster/archive.py). Ctrl-C sets the session's stop event: every worker stops
its runs (their networks torn down) and the client waits for them. A run may
carry what its scheme needs shipped with it (a submitted controller's sources and
their hash: schemes/submission/shipped.py), which its scheme family makes ready on
the worker first, and asks for a worker that can (the family's needs).
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TextIO

from app.cluster.worker import STARTED_TOPIC, STOP_EVENT, RemoteResult, RemoteTask, capabilities
from app.cluster.archive import ArchiveError, Committer
from core.settings import SettingError
from runkinds.registry import explain_need, measurement_version
from core.errors import Unavailable
from core.paths import ProjectPaths
from core.runspec import RunSpec
from core.traces import TraceError, TraceSet
from core.worker_resources import CC, CODE, RUNS, TRACE

log = logging.getLogger(__name__)

LOCAL = "local:"
LOOPBACK = "127.0.0.1"
STOP_WAIT_S = 60.0  # after Ctrl-C: how long the client waits for the runs to tear down
CONNECT_TIMEOUT_S = 30.0


class ClusterUnavailable(Unavailable):
    """The engine is missing, or the scheduler cannot be reached or has no workers."""


@dataclass(frozen=True)
class ClusterChoice:
    local_workers: int | None = None  # local:N
    address: str | None = None  # tcp://HOST:PORT, tls://HOST:PORT

    def describe(self) -> str:
        return f"local:{self.local_workers}" if self.local_workers else str(self.address)


def parse_cluster(text: str) -> ClusterChoice:
    if text.startswith(LOCAL):
        count = text[len(LOCAL):]
        if not count.isdigit() or int(count) < 1:
            raise SettingError(f"--cluster {text}: local:N takes N >= 1 worker processes")
        return ClusterChoice(local_workers=int(count))
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in ("tcp", "tls") or ":" not in rest:
        raise SettingError(f"--cluster {text}: expected tcp://HOST:PORT, tls://HOST:PORT "
                           "(a Dask scheduler) or local:N")
    return ClusterChoice(address=text)


def requirements(spec: RunSpec, traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
    """(the worker resources the run asks for, traces not in the manifest -> their sha256):
    its slots (one, unless its kind says more: core/run_kind.py), this code version, and
    what the run's kind needs.

    Raises TraceError or OSError when such a trace cannot be read here."""
    from runkinds.registry import kind_of
    kind = kind_of(spec)
    needs, files = kind.worker_needs(spec, traces)
    return {RUNS: max(1, kind.slots(spec)), CODE + measurement_version(): 1, **needs}, files


def within_workers(needs: Mapping[str, float],
                   workers: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The needs with the slots asked for capped at the largest worker's: a run that takes
    more slots than a worker has takes a whole worker (it runs alone there)."""
    largest = max((have.get(RUNS, 0) for have in workers.values()), default=0)
    capped = dict(needs)
    if largest > 0:
        capped[RUNS] = min(capped.get(RUNS, 1), largest)
    return capped


def unservable(needs: Mapping[str, float],
               workers: Mapping[str, Mapping[str, float]]) -> str | None:
    """Why no worker can take a run with these needs, or None."""
    if not workers:
        return "no worker is connected to the scheduler"
    if any(all(have.get(k, 0) >= v for k, v in needs.items()) for have in workers.values()):
        return None
    missing = sorted(k for k in needs if not any(k in have for have in workers.values()))
    if not missing:
        return "no single worker has everything it needs: " + ", ".join(sorted(needs))
    parts = []
    for k in missing:
        if k.startswith(CODE):
            versions = sorted({r[len(CODE):] for have in workers.values() for r in have
                               if r.startswith(CODE)})
            parts.append(f"code version {k[len(CODE):]} (the workers have "
                         f"{', '.join(versions) or 'none'}: update their checkouts)")
        elif k.startswith(TRACE):
            parts.append(f"trace {k[len(TRACE):]} (name@hash; run ./setup/install.sh there)")
        elif k.startswith(CC):
            parts.append(f"congestion control {k[len(CC):]} (see ./repro doctor there)")
        else:
            parts.append(explain_need(k) or k)
    return "no worker can serve this run: none has " + "; ".join(parts)


@dataclass(frozen=True)
class RemoteOutcome:
    """One run through the cluster, as the client saw it end."""
    ok: bool
    reason: str  # why it did not finish
    late: bool = False  # finished with the emulator late
    path: Path | None = None  # the committed run, or its artifacts in failed/
    worker: dict[str, Any] = field(default_factory=dict)  # who ran (and built) it
    build_log: str = ""  # what preparing its attachment printed on the worker (a build)


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterUnavailable(
            "--cluster needs Dask distributed: apt-get install python3-distributed "
            "(./setup/install.sh installs it)") from None
    return distributed


class ClusterBackend:
    """The runner's way to a cluster: one call per run, returning when it is home."""

    def __init__(self, client: Any, cluster: Any, committer: Committer, traces: TraceSet,
                 choice: ClusterChoice, slots: int, out: TextIO = sys.stdout) -> None:
        distributed = _import_distributed()
        self.client = client
        self.cluster = cluster
        self.committer = committer
        self.traces = traces
        self.choice = choice
        self.slots = slots
        self.out = out
        self.session = uuid.uuid4().hex[:12]
        self._stop_event = distributed.Event(STOP_EVENT + self.session, client=client)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._futures: dict[str, Any] = {}  # key -> future, runs in flight
        self.workers_used: Counter[str] = Counter()
        self.killed: list[str] = []

    def workers(self) -> dict[str, dict[str, float]]:
        info = self.client.scheduler_info()["workers"]
        return {addr: dict(w.get("resources", {})) for addr, w in info.items()}

    def run(self, experiment: str, spec: RunSpec) -> tuple[bool, str, bool]:
        """(finished, the reason it did not, finished with the emulator late)."""
        outcome = self.run_remote(experiment, spec)
        return outcome.ok, outcome.reason, outcome.late

    def run_remote(self, experiment: str, spec: RunSpec,
                   attachment: Any = None) -> RemoteOutcome:
        """One run on a worker (with what its scheme needs shipped beside it), home."""
        from distributed.scheduler import KilledWorker
        if self._stopping.is_set():
            return RemoteOutcome(False, "not started: interrupted")
        try:
            needs, files = requirements(spec, self.traces)
        except OSError as e:
            return RemoteOutcome(False, f"trace {e.filename}: {e.strerror}")
        except TraceError as e:
            return RemoteOutcome(False, str(e))
        workers = self.workers()
        needs = within_workers(needs, workers)
        why = unservable(needs, workers)
        if why:
            return RemoteOutcome(False, why)
        task = RemoteTask(experiment, spec.to_dict(), spec.run_id(), self.session, files,
                          attachment)
        key = f"netrepro-run-{spec.run_id()}"
        from app.cluster.worker import execute_remote
        with self._lock:
            if self._stopping.is_set():
                return RemoteOutcome(False, "not started: interrupted")
            future = self.client.submit(execute_remote, task, key=key, resources=needs,
                                        pure=False, retries=0)
            self._futures[key] = future
        try:
            result: RemoteResult = future.result()
        except KilledWorker as e:
            self.killed.append(spec.label())
            allowed = getattr(e, "allowed_failures", None)
            how = (f"{allowed + 1} time(s), more than the scheduler's allowed-failures "
                   f"({allowed})" if isinstance(allowed, int) else
                   "more often than the scheduler's allowed-failures")
            return RemoteOutcome(False, f"its workers died with it {how} permits; nothing "
                                 f"came home (KilledWorker: {e})")
        except CancelledError:
            return RemoteOutcome(False, "interrupted by the user (Ctrl-C): cancelled")
        except Exception as e:
            return RemoteOutcome(False, f"the cluster failed the run: {type(e).__name__}: {e}")
        finally:
            with self._lock:
                self._futures.pop(key, None)
        return self._take_home(experiment, spec, result)

    def _take_home(self, experiment: str, spec: RunSpec, result: RemoteResult) -> RemoteOutcome:
        host = str(result.worker.get("host", "?"))
        where: dict[str, Any] = {"worker": result.worker, "build_log": result.build_log}
        if result.ok and result.archive is not None:
            try:
                path, _ = self.committer.commit_run(experiment, spec, result.archive,
                                                    result.worker)
            except (ArchiveError, OSError, ValueError) as e:
                return RemoteOutcome(False, f"came home from {host} unusable, not committed: "
                                     f"{e}", **where)
            self.workers_used[host] += 1
            return RemoteOutcome(True, result.reason, result.late, path, **where)
        if result.ok:
            return RemoteOutcome(False, f"finished on {host} but its folder did not come home",
                                 **where)
        failed = None
        if result.archive is not None:
            try:
                failed = self.committer.commit_failure(experiment, spec, result.archive,
                                                       result.worker, result.reason)
            except (ArchiveError, OSError, ValueError) as e:
                log.warning("the failed run's artifacts from %s were not kept: %s", host, e)
        return RemoteOutcome(False, f"{result.reason} (on {host})", False, failed, **where)

    def stop(self) -> None:
        """Ctrl-C: the workers stop the runs in flight (their networks torn down); wait."""
        with self._lock:
            self._stopping.set()
            in_flight = list(self._futures.values())
        try:
            self._stop_event.set()
        except Exception as e:
            log.warning("could not set the stop event: %s", e)
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline and not all(f.done() for f in in_flight):
            time.sleep(0.2)
        left = [f for f in in_flight if not f.done()]
        if left:
            print(f"cluster: {len(left)} runs did not stop within {STOP_WAIT_S:.0f} s; "
                  "cancelled (`./repro clean` on their workers removes leftovers)",
                  file=self.out, flush=True)
            self.client.cancel(left)

    def rescheduled(self) -> int:
        """Attempts started beyond one per run: runs given to another worker after theirs
        died (from the workers' start events)."""
        try:
            events = self.client.get_events(STARTED_TOPIC)
        except Exception:
            return 0
        starts = Counter(msg.get("key") for _, msg in events
                         if isinstance(msg, dict) and "key" in msg)
        return sum(n - 1 for n in starts.values() if n > 1)

    def summary(self) -> dict[str, Any]:
        return {"cluster": self.choice.describe(), "slots": self.slots,
                "committed": len(self.committer.committed),
                "duplicates": len(self.committer.duplicates),
                "rescheduled": self.rescheduled(), "killed_worker": len(self.killed),
                "by_host": dict(self.workers_used)}

    def close(self) -> list[str]:
        lines = []
        try:
            s = self.summary()
            lines.append(f"cluster {s['cluster']}: {s['committed']} runs came home "
                         f"({', '.join(f'{h}: {n}' for h, n in s['by_host'].items()) or '-'}); "
                         f"{s['rescheduled']} given to another worker after theirs died; "
                         f"{s['duplicates']} arrived twice (committed once)"
                         + (f"; {s['killed_worker']} failed with KilledWorker (their workers "
                            "died beyond allowed-failures)" if s["killed_worker"] else ""))
            for label in self.committer.duplicates:
                lines.append(f"  arrived twice, committed once: {label}")
        finally:
            try:
                self.client.close()
            finally:
                if self.cluster is not None:
                    self.cluster.close()
        return lines


def open_cluster(text: str, paths: ProjectPaths, traces: TraceSet, jobs: int,
                 jobs_given: bool = False, dashboard: str | None = None,
                 out: TextIO = sys.stdout) -> ClusterBackend:
    """Connect to (or start, for local:N) the cluster and say what it holds."""
    choice = parse_cluster(text)
    # Dask's own chatter only when it matters, here and in local workers (read when
    # distributed is imported; a user's own setting wins).
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
    distributed = _import_distributed()
    cluster = None
    if choice.local_workers:
        n = choice.local_workers
        per = jobs // n
        if per < 1:
            raise SettingError(f"--cluster local:{n} shares --jobs {jobs} among {n} workers: "
                               f"give --jobs {n} or more, or fewer workers")
        resources = capabilities(paths, traces, per)
        (paths.state_dir / "cluster").mkdir(parents=True, exist_ok=True)
        # Dask's small HTTP servers (health, metrics; the dashboard only when asked for)
        # listen on loopback too, not on every interface as by default.
        from app.cluster.worker import loopback_nanny
        http = {"dashboard": False, "dashboard_address": f"{LOOPBACK}:0"} if not dashboard else {}
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=per, processes=True, host=LOOPBACK,
            dashboard_address=dashboard, scheduler_kwargs=http, worker_class=loopback_nanny(),
            resources=resources, preload=["app.cluster.worker"],
            silence_logs=logging.ERROR, local_directory=str(paths.state_dir / "cluster"))
        client = distributed.Client(cluster, timeout=CONNECT_TIMEOUT_S)
        slots = per * n
        print(f"cluster local:{n}: {n} workers on 127.0.0.1, {per} runs side by side each "
              f"({slots} of --jobs {jobs}); dashboard "
              f"{'at ' + str(cluster.dashboard_link) if dashboard else 'off'}",
              file=out, flush=True)
    else:
        try:
            client = distributed.Client(choice.address, timeout=CONNECT_TIMEOUT_S)
        except OSError as e:
            raise ClusterUnavailable(f"cannot reach the scheduler at {choice.address}: {e}")
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
        except Exception:
            client.close()
            raise ClusterUnavailable(f"no worker joined the scheduler at {choice.address} "
                                     f"within {CONNECT_TIMEOUT_S:.0f} s: start them with "
                                     "`./repro worker --scheduler ADDRESS` (docs/cluster.md)")
        info = client.scheduler_info()["workers"]
        total = int(sum(w.get("resources", {}).get(RUNS, 0) for w in info.values()))
        slots = min(total, jobs) if jobs_given else total
        hosts = sorted({w.get("host", "?") for w in info.values()})
        print(f"cluster {choice.address}: {len(info)} workers on {len(hosts)} machines, "
              f"{total} runs side by side in all"
              + (f" (at most {slots} at once: --jobs)" if slots < total else ""),
              file=out, flush=True)
    try:
        # A lambda travels by value: the scheduler need not have netrepro's code.
        allowed = client.run_on_scheduler(
            lambda dask_scheduler: int(dask_scheduler.allowed_failures))
    except Exception:
        allowed = "?"
    print(f"cluster: a run whose worker dies goes to another worker, up to {allowed} times "
          "(the scheduler's allowed-failures), then fails with KilledWorker",
          file=out, flush=True)
    return ClusterBackend(client, cluster, Committer(paths.results_dir), traces, choice,
                          max(1, slots), out)
