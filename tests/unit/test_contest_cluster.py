"""`contest submit --cluster`: sources shipped with each trial, built on the worker by hash.

No root, no compiler run, no network: the boxed build is replaced by a stand-in
that writes (or fails to write) the binary, and the scheduler is an in-process
Dask cluster whose run is a stand-in too. What is tested: what a task carries,
where and when a worker builds, what a compile error becomes, and what the client
commits for the leaderboard.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import pickle
from pathlib import Path
from typing import Any, Iterator

import pytest

from app.cluster import worker as cluster_worker
from app.cluster.backend import ClusterBackend, ClusterChoice, requirements, unservable
from schemes.submission import shipped as cluster_submission
from schemes.submission.shipped import (BUILD_RECORD, ShippedSubmission, WorkerBuild,
                                        build_on_worker, compiler_message)
from app.cluster.worker import RemoteResult, RemoteTask, execute_remote
from experiments.contest.commands import submit
from app.cluster.archive import Committer, pack
from core.code_identity import CodeIdentity, run_code
from runkinds.registry import measurement_version
from core.paths import ProjectPaths
from core.results import DONE, ExperimentStore, read_json, write_json
from core.runspec import RunSpec
from core.traces import ManifestEntry, TraceSet
from core.worker_resources import CODE, RUNS, trace_resource
from schemes.submission import box_check
from schemes.submission.scheme import BUILDS as CONTEST_BUILD
from experiments.contest.board import contest_spec
from schemes.submission.box_users import BoxUnavailable
from schemes.submission.build import BINARY, BuildResult, binary_path
from schemes.submission.sources import Sources
from tests.unit.fake_runs import trace_set, write_trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contest"
TODAY = FIXTURES / "sourdough-9880276"
COMPILER_SAID = ("controller.cc: In member function 'unsigned int Controller::window_size()':\n"
                 "controller.cc:31:10: error: 'windw_' was not declared in this scope; did you "
                 "mean 'window_'?")


class FakeBuilder:
    """Stands in for the boxed compile: installs a binary where the scheme looks."""

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.calls: list[str] = []

    def __call__(self, sources: Sources, api: int, paths: ProjectPaths) -> BuildResult:
        self.calls.append(sources.digest)
        log = ("$ g++ -std=gnu++17 -O2 -c controller.cc -o ../out/controller.o\n"
               + (COMPILER_SAID if self.fails else ""))
        if self.fails:
            return BuildResult(False, log, "compile controller.cc failed")
        dest = binary_path(paths, sources.digest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"binary of " + sources.sha256.encode())
        return BuildResult(True, log, binary=dest)


@pytest.fixture
def sources() -> Sources:
    return Sources.collect([TODAY])


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    return ProjectPaths(root=tmp_path / "checkout", results_override=tmp_path / "results")


def test_shipped_sources_carry_their_full_sha256_and_survive_pickling(sources: Sources) -> None:
    shipped = ShippedSubmission.of(sources)
    assert shipped.header == (TODAY / "controller.hh").read_bytes()
    assert shipped.body == (TODAY / "controller.cc").read_bytes()
    assert len(shipped.sha256) == 64 and shipped.sha256.startswith(sources.digest)
    task = RemoteTask("contest", {}, "run-id", "s", {}, shipped)
    again = pickle.loads(pickle.dumps(task))
    assert again.attachment == shipped and again.attachment.sources().sha256 == shipped.sha256


def _trial(digest: str) -> RunSpec:
    return contest_spec("contest", "submission", "Tiny", 1, {"submission": digest})


def test_the_build_is_keyed_by_the_hash_and_done_once(sources: Sources,
                                                      paths: ProjectPaths) -> None:
    builder = FakeBuilder()
    trial = _trial(sources.digest)
    first = build_on_worker(ShippedSubmission.of(sources), trial, paths, builder, "w1")
    assert first.ok and first.facts["built"] == "here" and first.facts["host"] == "w1"
    binary = paths.state_dir / "contest-builds" / sources.digest / BINARY
    assert first.facts["binary"] == str(binary) and binary.is_file()
    record = read_json(binary.parent / BUILD_RECORD)
    assert record["sha256"] == sources.sha256
    assert record["code_version"] == run_code(trial).version
    assert record["api_generation"] == 3 and record["host"] == "w1"

    again = build_on_worker(ShippedSubmission.of(sources), trial, paths, builder, "w1")
    assert again.ok and again.facts["built"] == "reused" and builder.calls == [sources.digest]

    other = Sources(sources.header, sources.body + b"\n// changed\n", "x")
    built = build_on_worker(ShippedSubmission.of(other), _trial(other.digest), paths, builder, "w1")
    assert built.ok and built.facts["built"] == "here"
    assert builder.calls == [sources.digest, other.digest]
    assert binary_path(paths, other.digest).parent != binary.parent


def test_a_binary_from_other_code_or_without_its_record_is_built_again(
        sources: Sources, paths: ProjectPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    builder = FakeBuilder()
    shipped = ShippedSubmission.of(sources)
    build_on_worker(shipped, _trial(sources.digest), paths, builder, "w1")
    monkeypatch.setattr(cluster_submission, "run_code",
                        lambda spec: CodeIdentity({"native/grump/x.cc": "edited"}))
    assert build_on_worker(shipped, _trial(sources.digest), paths, builder,
                           "w1").facts["built"] == "here"
    (binary_path(paths, sources.digest).parent / BUILD_RECORD).unlink()
    assert build_on_worker(shipped, _trial(sources.digest), paths, builder,
                           "w1").facts["built"] == "here"
    assert len(builder.calls) == 3


def test_damaged_or_mismatched_sources_are_not_built(sources: Sources,
                                                     paths: ProjectPaths) -> None:
    builder = FakeBuilder()
    damaged = ShippedSubmission(sources.header, sources.body + b" ", sources.sha256)
    result = build_on_worker(damaged, _trial(sources.digest), paths, builder, "w1")
    assert not result.ok and "damaged on the way" in result.reason
    result = build_on_worker(ShippedSubmission.of(sources), _trial("0" * 16), paths, builder, "w1")
    assert not result.ok and f"shipped are submission {sources.digest}" in result.reason
    bad = Sources(b"class Sender { };", sources.body, "x")
    result = build_on_worker(ShippedSubmission.of(bad), _trial(bad.digest), paths, builder, "w1")
    assert not result.ok and "declares no class Controller" in result.reason
    assert builder.calls == []


def test_a_compile_error_is_reported_with_the_failing_step_and_the_compilers_message(
        sources: Sources, paths: ProjectPaths) -> None:
    result = build_on_worker(ShippedSubmission.of(sources), _trial(sources.digest), paths,
                             FakeBuilder(fails=True), "w1")
    assert not result.ok and result.facts["built"] == "failed"
    assert result.reason.startswith("does not compile on worker w1: compile controller.cc "
                                    "failed; the compiler said: ")
    assert "error: 'windw_' was not declared in this scope" in result.reason
    assert COMPILER_SAID in result.log
    folder = binary_path(paths, sources.digest).parent
    assert not (folder / BINARY).exists() and read_json(folder / BUILD_RECORD)["ok"] is False


def test_a_compile_error_is_remembered_for_the_same_sources_and_code(
        sources: Sources, paths: ProjectPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    builder = FakeBuilder(fails=True)
    shipped = ShippedSubmission.of(sources)
    first = build_on_worker(shipped, _trial(sources.digest), paths, builder, "w1")
    again = build_on_worker(shipped, _trial(sources.digest), paths, builder, "w1")
    assert not again.ok and again.facts["built"] == "failed-before"
    assert again.reason.startswith(first.reason) and "not compiled again" in again.reason
    assert COMPILER_SAID in again.log and len(builder.calls) == 1
    # New code (a fixed compiler flag, a new API header) compiles the sources afresh.
    monkeypatch.setattr(cluster_submission, "run_code",
                        lambda spec: CodeIdentity({"native/grump/x.cc": "edited"}))
    fixed = FakeBuilder()
    assert build_on_worker(shipped, _trial(sources.digest), paths, fixed,
                           "w1").facts["built"] == "here"
    assert fixed.calls == [sources.digest]


def test_the_compilers_message_is_what_the_last_step_printed_and_bounded() -> None:
    log = "$ g++ a\nfine\n$ g++ b\n" + "x" * 5000
    message = compiler_message(log)
    assert "fine" not in message and message.startswith("x" * 100)
    assert "more characters]" in message and len(message) < 4100


def _trial_task(sources: Sources, trace: str = "Tiny") -> RemoteTask:
    spec = contest_spec("contest", "submission", trace, 1, {"submission": sources.digest})
    return RemoteTask("contest", spec.to_dict(), spec.run_id(), "session", {},
                      ShippedSubmission.of(sources))


def test_a_worker_fails_the_trial_on_a_compile_error_and_runs_nothing(
        sources: Sources, paths: ProjectPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_worker, "ProjectPaths", lambda: paths)
    monkeypatch.setattr(cluster_submission, "sandbox_build", FakeBuilder(fails=True))

    def no_run(*args: Any) -> Any:
        raise AssertionError("a trial that did not compile was run")
    monkeypatch.setattr(cluster_worker, "_run_child", no_run)
    result = execute_remote(_trial_task(sources))
    assert not result.ok and result.archive is None
    assert "does not compile on worker" in result.reason and "windw_" in result.reason
    assert result.worker["build"]["built"] == "failed" and COMPILER_SAID in result.build_log


def _finished_folder(results: Path, spec: RunSpec) -> Path:
    folder = results / "contest" / "runs" / spec.dirname()
    folder.mkdir(parents=True)
    write_json(folder / "spec.json", spec.to_dict())
    write_json(folder / "meta.json", {"run_id": spec.run_id(), "spec": spec.to_dict()})
    write_json(folder / "metrics.json", {"score": -3.0, "throughput_mbps": 1.5,
                                         "p95_e2e_delay_ms": 80.0, "p95_signal_delay_ms": 60.0,
                                         "power": 18.75, "utilization": 0.4})
    return folder


def test_a_worker_builds_then_runs_and_the_runs_meta_names_who_built_and_ran_it(
        sources: Sources, paths: ProjectPaths, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    builder = FakeBuilder()
    monkeypatch.setattr(cluster_worker, "ProjectPaths", lambda: paths)
    monkeypatch.setattr(cluster_submission, "sandbox_build", builder)
    seen: list[bool] = []

    def run_child(task: RemoteTask, paths_: ProjectPaths, results: Path,
                  stop: Any) -> tuple[bool, str, bool, Path]:
        seen.append(binary_path(paths_, sources.digest).is_file())  # built before the run
        return True, "", False, _finished_folder(results, RunSpec.from_dict(task.spec))
    monkeypatch.setattr(cluster_worker, "_run_child", run_child)
    task = _trial_task(sources)
    result = execute_remote(task)
    assert result.ok and seen == [True] and builder.calls == [sources.digest]
    assert result.worker["build"]["built"] == "here"
    assert result.worker["build"]["sha256"] == sources.sha256
    assert result.worker["build"]["host"] == result.worker["host"]
    assert execute_remote(task).worker["build"]["built"] == "reused"

    spec = RunSpec.from_dict(task.spec)
    root = tmp_path / "home" / "contest"
    committer = Committer(tmp_path / "home", stores={"contest": ExperimentStore(root)})
    assert result.archive is not None
    path, _ = committer.commit_run("contest", spec, result.archive, result.worker)
    assert path == root / "runs" / spec.dirname() and not path.is_symlink()
    meta = read_json(path / "meta.json")
    assert meta["worker"]["host"] == result.worker["host"]
    assert meta["worker"]["build"]["binary"] == str(binary_path(paths, sources.digest))


def test_a_trial_asks_for_a_worker_that_builds_submissions(sources: Sources,
                                                           tmp_path: Path) -> None:
    write_trace(tmp_path / "traces", "Tiny.down", [1, 2])
    write_trace(tmp_path / "traces", "Tiny.up", [1])
    traces = trace_set(tmp_path / "traces")
    spec = contest_spec("contest", "submission", "Tiny", 1, {"submission": sources.digest})
    needs, files = requirements(spec, traces)
    assert needs[CONTEST_BUILD] == 1
    # Not in the manifest: travels as its name, with the client's sha256.
    assert files == {"Tiny.down": hashlib.sha256(b"1\n2\n").hexdigest(),
                     "Tiny.up": hashlib.sha256(b"1\n").hexdigest()}
    lacking = {"w": {RUNS: 2.0, CODE + measurement_version(): 2.0}}
    why = unservable(needs, lacking)
    assert why is not None and "contest builds" in why
    assert unservable(needs, {"w": dict(lacking["w"], **{CONTEST_BUILD: 2.0})}) is None


def test_a_worker_compares_a_named_trace_with_the_clients_hash(
        sources: Sources, paths: ProjectPaths, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    write_trace(tmp_path / "worker-traces", "Tiny.down", [1, 3])
    (paths.root / "setup").mkdir(parents=True)
    (paths.root / "setup" / "traces.tsv").write_text("name\tgit_blob_sha1\tupstream\n")
    monkeypatch.setenv("NETREPRO_TRACES", str(tmp_path / "worker-traces"))
    monkeypatch.setattr(cluster_worker, "ProjectPaths", lambda: paths)
    task = _trial_task(sources)
    task = RemoteTask(task.experiment, task.spec, task.run_id, task.session,
                      {"Tiny.down": hashlib.sha256(b"1\n2\n").hexdigest()}, task.attachment)
    result = execute_remote(task)
    assert not result.ok and "trace Tiny.down on worker" in result.reason
    assert "differs from the client's" in result.reason and "build" not in result.worker


# ------------------------------------------------------------ the client, end to end

distributed = pytest.importorskip("distributed")
HOME = Path()
ADDRESS = "tcp://scheduler.example:8786"  # never reached: open_cluster is replaced


def fake_execute_remote(task: RemoteTask) -> RemoteResult:
    """A worker's answer: the trial built and run (or its build failed), as the worker
    side above produces it."""
    assert task.attachment is not None
    host = "fake-worker"
    facts = {"host": host, "built": "here", "sha256": task.attachment.sha256}
    built = WorkerBuild(True, "", "$ g++ ...", facts)
    if b"windw_" in task.attachment.body:
        built = WorkerBuild(False, f"does not compile on worker {host}: compile controller.cc "
                            f"failed; the compiler said: {COMPILER_SAID}",
                            "$ g++ ...\n" + COMPILER_SAID, {"host": host, "built": "failed"})
    worker = {"host": host, "pid": 1, "build": built.facts}
    if not built.ok:
        return RemoteResult(False, built.reason, False, None, worker, build_log=built.log)
    spec = RunSpec.from_dict(task.spec)
    folder = _finished_folder(HOME / f"attempt-{spec.trial}", spec)
    write_json(folder / "metrics.json", dict(read_json(folder / "metrics.json"),
                                             score=-3.0 - spec.trial / 10))
    return RemoteResult(True, "", False, pack(folder), worker, build_log=built.log)


@pytest.fixture
def on_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProjectPaths]:
    global HOME
    HOME = tmp_path / "worker"
    monkeypatch.setattr(cluster_worker, "execute_remote", fake_execute_remote)
    resources = {RUNS: 2.0, CODE + measurement_version(): 2.0, CONTEST_BUILD: 2.0}
    paths = ProjectPaths(results_override=tmp_path / "results")
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2,
                                  dashboard_address=None, resources=resources) as cluster:
        def open_cluster(text: str, paths_: ProjectPaths, traces: Any, jobs: int,
                         **kwargs: Any) -> ClusterBackend:
            assert text == ADDRESS
            return ClusterBackend(distributed.Client(cluster), None,
                                  Committer(paths_.results_dir), traces,
                                  ClusterChoice(local_workers=1), slots=2)
        monkeypatch.setattr("app.cluster.backend.open_cluster", open_cluster)
        yield paths


def _args(folder: Path, trials: int = 2) -> argparse.Namespace:
    return argparse.Namespace(sources=[str(folder)], name="team-c", trace="Tiny", trials=trials,
                              force=False, json=True, cluster=ADDRESS)


def test_submit_over_a_cluster_commits_the_trials_where_the_leaderboard_reads_them(
        on_cluster: ProjectPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_trace(tmp_path / "traces", "Tiny.down", [1, 2])
    write_trace(tmp_path / "traces", "Tiny.up", [1])
    traces = trace_set(tmp_path / "traces")
    assert submit(_args(TODAY), on_cluster, traces) == 0
    out = capsys.readouterr().out
    root = on_cluster.results_dir / "contest"
    sub = read_json(next(root.glob("submissions/team-c/*/submission.json")))
    assert sub["status"] == "scored" and sub["cluster"] == ADDRESS
    assert [t["trial"] for t in sub["trials"]] == [1, 2]
    assert all(t["ok"] and t["worker"] == "fake-worker" for t in sub["trials"])
    assert sub["best_trial"] == 1  # score -3.1 beats -3.2
    for t in sub["trials"]:
        run = root / t["run"]
        assert (run / DONE).is_file() and not run.is_symlink()  # as a local trial: no pool
        meta = read_json(run / "meta.json")
        assert meta["worker"]["host"] == "fake-worker"
        assert meta["worker"]["build"]["sha256"] == Sources.collect([TODAY]).sha256
    assert not (on_cluster.results_dir / "runs").exists()
    rows = list(csv.DictReader((root / "leaderboard-Tiny.csv").open()))
    mine = [r for r in rows if r["name"] == "team-c"]
    assert len(mine) == 1 and mine[0]["status"] == "scored" and mine[0]["rank"] == "1"
    assert "(on fake-worker)" in out

    # Submitted again: both trials are done, nothing goes to the cluster.
    assert submit(_args(TODAY), on_cluster, traces) == 0
    again = sorted(root.glob("submissions/team-c/*/submission.json"))[-1]
    assert all(t.get("reused") for t in read_json(again)["trials"])


def test_submit_over_a_cluster_reports_the_workers_compile_error(
        on_cluster: ProjectPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_trace(tmp_path / "traces", "Tiny.down", [1, 2])
    write_trace(tmp_path / "traces", "Tiny.up", [1])
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "controller.hh").write_bytes((TODAY / "controller.hh").read_bytes())
    (folder / "controller.cc").write_bytes((TODAY / "controller.cc").read_bytes()
                                           + b"\n// windw_\n")
    assert submit(_args(folder), on_cluster, trace_set(tmp_path / "traces")) == 1
    err = capsys.readouterr().err
    assert "does not compile on worker fake-worker" in err and "windw_" in err
    root = on_cluster.results_dir / "contest"
    sub_dir = next(root.glob("submissions/team-c/*"))
    sub = read_json(sub_dir / "submission.json")
    assert sub["status"] == "build failed" and "compile controller.cc failed" in sub["reason"]
    assert all(not t["ok"] and "windw_" in t["reason"] for t in sub["trials"])
    assert COMPILER_SAID in (sub_dir / "build.log").read_text()
    assert "# built on worker fake-worker" in (sub_dir / "build.log").read_text()
    assert not (root / "runs").exists() and not (on_cluster.results_dir / "runs").exists()


def test_without_root_local_workers_are_refused_and_a_worker_builds_nothing(
        tmp_path: Path, paths: ProjectPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    write_trace(tmp_path / "traces", "Tiny.down", [1, 2])
    write_trace(tmp_path / "traces", "Tiny.up", [1])
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    args = _args(TODAY)
    args.cluster = "local:2"
    with pytest.raises(BoxUnavailable, match="takes root"):
        submit(args, paths, trace_set(tmp_path / "traces"))
    why = box_check.cannot_build(paths)
    assert why is not None and why.startswith("not root")


def test_the_usual_checks_still_apply_to_a_trial(sources: Sources, paths: ProjectPaths,
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Code version and trace hashes: asked of the scheduler, checked again by the worker
    before anything is built."""
    manifest = {f"Tiny{s}": ManifestEntry(f"Tiny{s}", c * 40, "u")
                for s, c in ((".down", "a"), (".up", "b"))}
    spec = contest_spec("contest", "submission", "Tiny", 1, {"submission": sources.digest})
    needs, files = requirements(spec, TraceSet([tmp_path], tmp_path / "cache", manifest))
    assert needs == {RUNS: 1, CODE + measurement_version(): 1,
                     trace_resource("Tiny.down", "a" * 40): 1,
                     trace_resource("Tiny.up", "b" * 40): 1, CONTEST_BUILD: 1}
    assert files == {}
    builder = FakeBuilder()
    monkeypatch.setattr(cluster_worker, "ProjectPaths", lambda: paths)
    monkeypatch.setattr(cluster_submission, "sandbox_build", builder)
    task = _trial_task(sources)
    stale = RemoteTask(task.experiment, task.spec, "another-id", task.session, {},
                       task.attachment)
    result = execute_remote(stale)
    assert not result.ok and "another version of the code" in result.reason
    assert builder.calls == []
