"""The client's side through a real (in-process) Dask scheduler, with a stand-in for the run.

No network, no root: the workers are threads of this process and the run itself is
replaced by a function that returns a packed folder. What is tested is Dask's part:
resources, keys, the same run asked for by two clients, a run no worker can serve,
and a run whose workers die under it more often than allowed-failures (KilledWorker:
a worker is closed in-process with the run in flight, which the scheduler handles as
a dead worker).
"""
from __future__ import annotations

import dataclasses
import io
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from app.cluster import worker as cluster_worker
from app.cluster.backend import ClusterBackend, ClusterChoice
from app.cluster.worker import RemoteResult, RemoteTask
from app.cluster.archive import Committer, pack
from app.runner import MatrixRunner
from runkinds.registry import measurement_version
from core.paths import ProjectPaths
from core.results import DONE, experiment_store, read_json, write_json
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from core.worker_resources import CC, CODE, RUNS
from experiments.base import Experiment

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

SPEC = RunSpec(experiment="exp", scheme="fixed-window", data_trace="rate:12",
               ack_trace="rate:12", duration_s=4.0, params=make_params(window=4))
BUILT = Path()
CALLS: list[str] = []


def fake_execute_remote(task: RemoteTask) -> RemoteResult:
    """Stands in for a run on a worker: a folder like `repro _execute`'s, packed."""
    CALLS.append(task.spec["scheme"])
    spec = RunSpec.from_dict(task.spec)
    folder = BUILT / f"run-{len(CALLS)}"
    folder.mkdir(parents=True)
    write_json(folder / "spec.json", spec.to_dict())
    write_json(folder / "meta.json", {"run_id": spec.run_id(), "spec": spec.to_dict()})
    (folder / DONE).write_text("x\n")
    time.sleep(1.0)  # long enough for a second client to ask for the same run meanwhile
    return RemoteResult(True, "", False, pack(folder), {"host": "fake", "pid": 1})


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    global BUILT
    BUILT = tmp_path / "worker"
    CALLS.clear()
    monkeypatch.setattr(cluster_worker, "execute_remote", fake_execute_remote)
    resources = {RUNS: 2.0, CODE + measurement_version(): 2.0, CC + "cubic": 2.0}
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2,
                                  dashboard_address=None, resources=resources) as c:
        yield c


def _backend(cluster: Any, results: Path) -> ClusterBackend:
    return ClusterBackend(distributed.Client(cluster), None, Committer(results),
                          TraceSet([], results / "cache", {}), ClusterChoice(local_workers=1),
                          slots=2)


def test_a_run_comes_home_committed_with_its_worker(cluster: Any, tmp_path: Path) -> None:
    backend = _backend(cluster, tmp_path / "results")
    try:
        assert backend.run("exp", SPEC) == (True, "", False)
        summary = backend.summary()
    finally:
        backend.close()
    store = experiment_store(tmp_path / "results", "exp")
    assert store.is_done(SPEC)
    assert read_json(store.run_dir(SPEC) / "meta.json")["worker"]["host"] == "fake"
    assert summary["committed"] == 1 and summary["duplicates"] == 0


def test_the_same_run_from_two_clients_runs_once_and_is_committed_once(
        cluster: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    backends = [_backend(cluster, results), _backend(cluster, results)]
    outcomes: list[tuple[bool, str, bool]] = []
    threads = [threading.Thread(target=lambda b=b: outcomes.append(b.run("exp", SPEC)))
               for b in backends]
    try:
        for t in threads:
            t.start()
            time.sleep(0.2)
        for t in threads:
            t.join(30)
        committed = sum(len(b.committer.committed) for b in backends)
        duplicates = sum(len(b.committer.duplicates) for b in backends)
    finally:
        for b in backends:
            b.close()
    assert outcomes == [(True, "", False)] * 2
    assert len(CALLS) == 1, "the scheduler ran the run twice"
    assert committed == 1 and duplicates == 1
    pool = [p for p in (results / "runs").iterdir() if p.is_dir()]
    assert len(pool) == 1 and not (results / "exp" / "failed").exists()


def test_a_run_no_worker_can_serve_fails_with_the_reason(cluster: Any, tmp_path: Path) -> None:
    vegas = RunSpec(experiment="exp", scheme="vegas", data_trace="rate:12",
                    ack_trace="rate:12", duration_s=4.0)
    backend = _backend(cluster, tmp_path / "results")
    try:
        ok, reason, _ = backend.run("exp", vegas)
    finally:
        backend.close()
    assert not ok and "congestion control vegas" in reason
    assert not CALLS


# ------------------------------------------------------------ KilledWorker

DOOMED = RunSpec(experiment="exp", scheme="fixed-window", data_trace="rate:12",
                 ack_trace="rate:12", duration_s=4.0, params=make_params(window=9))
STARTS: list[str] = []  # the workers that started an attempt of DOOMED, in order
RELEASE = threading.Event()  # lets the attempts stuck on closed workers end


def doomed_execute_remote(task: RemoteTask) -> RemoteResult:
    """DOOMED never ends on its own: its worker is closed under it (a dead worker, to the
    scheduler). Every other run comes home as fake_execute_remote's."""
    if RunSpec.from_dict(task.spec) == DOOMED:
        STARTS.append(distributed.get_worker().address)
        RELEASE.wait(60)
        raise RuntimeError("an attempt on a closed worker reached its client")
    return fake_execute_remote(task)


class Matrix(Experiment):
    name = "exp"
    title = "DOOMED and two runs that finish"

    def __init__(self) -> None:
        pass

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return [DOOMED] + [dataclasses.replace(SPEC, params=make_params(window=w))
                           for w in (4, 5)]

    def make_figures(self, store: Any, out_dir: Path) -> list[Path]:
        return []


def _close_the_worker_of_attempt(cluster: Any, attempt: int) -> None:
    deadline = time.monotonic() + 30
    while len(STARTS) < attempt:
        assert time.monotonic() < deadline, f"attempt {attempt} of the doomed run never started"
        time.sleep(0.05)
    worker = next(w for w in cluster.workers.values() if w.address == STARTS[attempt - 1])
    # Its stream to the scheduler ends with the run in flight: to the scheduler, a worker
    # that died with the run (not a graceful retirement).
    cluster.sync(worker.close, executor_wait=False)


def test_a_run_whose_workers_die_beyond_allowed_failures_fails_and_the_rest_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    global BUILT
    BUILT = tmp_path / "worker"
    CALLS.clear()
    STARTS.clear()
    RELEASE.clear()
    monkeypatch.setattr(cluster_worker, "execute_remote", doomed_execute_remote)
    results = tmp_path / "results"
    resources = {RUNS: 1.0, CODE + measurement_version(): 1.0}
    exp = Matrix()
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=3, processes=False, threads_per_worker=1,
                                     dashboard_address=None, resources=resources) as cluster:
        backend = _backend(cluster, results)

        def kill_twice() -> None:
            for attempt in (1, 2):
                _close_the_worker_of_attempt(cluster, attempt)
        killer = threading.Thread(target=kill_twice)
        killer.start()
        try:
            runner = MatrixRunner(ProjectPaths(results_override=results),
                                  TraceSet([], results / "cache", {}), jobs=3,
                                  backend=backend, out=io.StringIO())
            result = runner.run(exp, exp.matrix(quick=True))
            killer.join(30)
            summary = backend.summary()
        finally:
            RELEASE.set()
            backend.close()
    assert len(STARTS) == 2 and STARTS[0] != STARTS[1], STARTS
    assert [spec for spec, _ in result.failed] == [DOOMED]
    reason = result.failed[0][1]
    assert "KilledWorker" in reason and "allowed-failures (1)" in reason, reason
    assert "2 time(s)" in reason and "nothing came home" in reason, reason
    assert sorted(s.run_id() for s in result.succeeded) == \
        sorted(s.run_id() for s in exp.matrix(quick=True)[1:])
    assert summary["killed_worker"] == 1 and summary["committed"] == 2
    store = experiment_store(results, "exp")
    assert not store.is_done(DOOMED)
    assert not [p for p in results.rglob("*") if DOOMED.run_id() in p.name], \
        "the run that kept killing its workers left a folder in results/"
    assert not list(results.rglob(".tmp-*")) and not store.failed_dir.exists()
    assert len([p for p in (results / "runs").iterdir() if p.is_dir()]) == 2
