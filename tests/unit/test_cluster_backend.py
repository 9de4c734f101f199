"""The client's side through a real (in-process) Dask scheduler, with a stand-in for the run.

No network, no root: the workers are threads of this process and the run itself is
replaced by a function that returns a packed folder. What is tested is Dask's part:
resources, keys, the same run asked for by two clients, a run no worker can serve.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from app import cluster_worker
from app.cluster import ClusterBackend, ClusterChoice
from app.cluster_worker import CC, CODE, RUNS, RemoteResult, RemoteTask
from app.run_archive import Committer, pack
from core.code_version import code_version
from core.results import DONE, experiment_store, read_json, write_json
from core.runspec import RunSpec, make_params
from core.traces import TraceSet

distributed = pytest.importorskip("distributed")

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
    resources = {RUNS: 2.0, CODE + code_version(): 2.0, CC + "cubic": 2.0}
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
