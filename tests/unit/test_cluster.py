"""The cluster's pieces that need no scheduler: archives, commits, requirements, addresses."""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
from pathlib import Path

import pytest

from app.cluster.backend import (ClusterChoice, parse_cluster, requirements, unservable)
from app.cluster.worker import clean_dead_attempts
from app.cluster.archive import ArchiveError, Committer, RunArchive, files_of, pack, unpack
from core.settings import SettingError
from runkinds.registry import measurement_version
from core.paths import ProjectPaths
from core.results import DONE, experiment_store, read_json, write_json
from core.runspec import RunSpec, make_params
from core.traces import ManifestEntry, TraceSet
from core.worker_resources import CC, CODE, RUNS, trace_resource
from runkinds.registry import SWITCHED_PATH
from runkinds.switched_path.kind import CONTROLLER, OPENFLOW

SPEC = RunSpec(experiment="exp", scheme="fixed-window", data_trace="rate:12",
               ack_trace="rate:12", duration_s=4.0, params=make_params(window=4))


def _run_folder(tmp_path: Path, spec: RunSpec = SPEC, name: str = "built") -> Path:
    """A run folder as a worker's `repro _execute` leaves it."""
    folder = tmp_path / name
    (folder / "logs").mkdir(parents=True)
    write_json(folder / "spec.json", spec.to_dict())
    write_json(folder / "meta.json", {"run_id": spec.run_id(), "spec": spec.to_dict()})
    (folder / "metrics.json").write_text('{"throughput_mbps": 1.5}\n')
    (folder / "logs" / "uplink.log").write_bytes(os.urandom(2048))
    (folder / DONE).write_text("now\n")
    return folder


WORKER = {"host": "w1", "cpus": 4, "kernel": "6.1", "pid": 123}


def test_pack_leaves_done_out_and_unpack_restores_every_file(tmp_path: Path) -> None:
    folder = _run_folder(tmp_path)
    archive = pack(folder)
    assert archive.sha256 == hashlib.sha256(archive.data).hexdigest()
    dest = tmp_path / "dest"
    dest.mkdir()
    unpack(archive, dest)
    assert list(files_of(dest)) == [f for f in files_of(folder) if f != DONE]
    assert (dest / "logs" / "uplink.log").read_bytes() == \
        (folder / "logs" / "uplink.log").read_bytes()


def test_a_damaged_archive_is_refused(tmp_path: Path) -> None:
    archive = pack(_run_folder(tmp_path))
    damaged = RunArchive(archive.data[:-10] + b"0123456789", archive.sha256)
    with pytest.raises(ArchiveError, match="hash"):
        unpack(damaged, tmp_path)


def _archive_of(members: dict[str, bytes], symlink: str | None = None) -> RunArchive:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tar.addfile(info)
    data = buffer.getvalue()
    return RunArchive(data, hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize("members,symlink,what", [
    ({"../escape": b"x"}, None, "not a plain file"),
    ({"/abs": b"x"}, None, "not a plain file"),
    ({"a": b"x"}, "link", "not a plain file"),
    ({DONE: b"x"}, None, "DONE"),
])
def test_unsafe_members_are_refused(tmp_path: Path, members: dict[str, bytes],
                                    symlink: str | None, what: str) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match=what):
        unpack(_archive_of(members, symlink), dest)
    assert not list(dest.iterdir()) and not (tmp_path / "escape").exists()


def test_commit_marks_done_last_records_the_worker_and_links(tmp_path: Path) -> None:
    results = tmp_path / "results"
    committer = Committer(results)
    archive = pack(_run_folder(tmp_path))
    path, duplicate = committer.commit_run("exp", SPEC, archive, WORKER)
    assert not duplicate
    store = experiment_store(results, "exp")
    assert store.is_done(SPEC) and path == store.run_dir(SPEC) and path.is_symlink()
    meta = read_json(store.home(SPEC) / "meta.json")
    assert meta["worker"]["host"] == "w1" and meta["worker"]["cpus"] == 4
    assert meta["worker"]["archive_sha256"] == archive.sha256
    home = store.home(SPEC)
    assert (home / DONE).stat().st_mtime >= (home / "meta.json").stat().st_mtime
    assert not list(store.home(SPEC).parent.glob(".tmp-*"))


def test_a_run_arriving_twice_is_committed_once_and_counted(tmp_path: Path) -> None:
    results = tmp_path / "results"
    committer = Committer(results)
    archive = pack(_run_folder(tmp_path))
    first, _ = committer.commit_run("exp", SPEC, archive, WORKER)
    done = first / DONE
    mtime = done.stat().st_mtime_ns
    second_worker = dict(WORKER, host="w2")
    again, duplicate = committer.commit_run("exp", SPEC, pack(_run_folder(tmp_path, name="b")),
                                            second_worker)
    assert duplicate and again == first
    assert committer.duplicates == [SPEC.label()] and len(committer.committed) == 1
    assert done.stat().st_mtime_ns == mtime
    assert read_json(first / "meta.json")["worker"]["host"] == "w1"
    store = experiment_store(results, "exp")
    assert not store.failed_dir.exists(), "the duplicate superseded the first arrival"


def test_a_run_committed_by_another_client_meanwhile_is_a_duplicate(tmp_path: Path) -> None:
    results = tmp_path / "results"
    mine = Committer(results)
    other = Committer(results, started=mine.started)
    other.commit_run("exp", SPEC, pack(_run_folder(tmp_path)), WORKER)
    _, duplicate = mine.commit_run("exp", SPEC, pack(_run_folder(tmp_path, name="b")), WORKER)
    assert duplicate and mine.duplicates == [SPEC.label()]


def test_force_replaces_a_run_done_before_the_session(tmp_path: Path) -> None:
    results = tmp_path / "results"
    Committer(results).commit_run("exp", SPEC, pack(_run_folder(tmp_path)), WORKER)
    later = Committer(results, started=time.time() + 5)
    _, duplicate = later.commit_run("exp", SPEC, pack(_run_folder(tmp_path, name="b")),
                                    dict(WORKER, host="w2"))
    assert not duplicate
    store = experiment_store(results, "exp")
    assert read_json(store.run_dir(SPEC) / "meta.json")["worker"]["host"] == "w2"


def test_an_archive_of_another_run_is_not_committed(tmp_path: Path) -> None:
    other = RunSpec(experiment="exp", scheme="fixed-window", data_trace="rate:12",
                    ack_trace="rate:12", duration_s=4.0, params=make_params(window=8))
    committer = Committer(tmp_path / "results")
    with pytest.raises(ArchiveError, match="not"):
        committer.commit_run("exp", SPEC, pack(_run_folder(tmp_path, spec=other)), WORKER)
    store = experiment_store(tmp_path / "results", "exp")
    assert not store.is_done(SPEC) and not list(store.home(SPEC).parent.glob(".tmp-*"))


def test_a_failed_run_lands_in_failed_with_its_worker(tmp_path: Path) -> None:
    folder = _run_folder(tmp_path)
    (folder / DONE).unlink()
    write_json(folder / "FAILED.json", {"reason": "emulator died", "details": "trace"})
    committer = Committer(tmp_path / "results")
    dest = committer.commit_failure("exp", SPEC, pack(folder), WORKER, "emulator died")
    record = read_json(dest / "FAILED.json")
    assert record["reason"] == "emulator died" and record["worker"]["host"] == "w1"
    assert dest.parent == experiment_store(tmp_path / "results", "exp").failed_dir
    assert not experiment_store(tmp_path / "results", "exp").is_done(SPEC)


@pytest.mark.parametrize("text,choice", [
    ("local:2", ClusterChoice(local_workers=2)),
    ("tcp://10.0.0.1:8786", ClusterChoice(address="tcp://10.0.0.1:8786")),
    ("tls://sched.example:8786", ClusterChoice(address="tls://sched.example:8786")),
])
def test_cluster_addresses(text: str, choice: ClusterChoice) -> None:
    assert parse_cluster(text) == choice


@pytest.mark.parametrize("text", ["local:0", "local:x", "10.0.0.1:8786", "http://h:1", "tcp://h"])
def test_bad_cluster_addresses_are_refused(text: str) -> None:
    with pytest.raises(SettingError):
        parse_cluster(text)


def _traces(tmp_path: Path) -> TraceSet:
    manifest = {"T.down": ManifestEntry("T.down", "a" * 40, "u"),
                "T.up": ManifestEntry("T.up", "b" * 40, "u")}
    return TraceSet([tmp_path], tmp_path / "cache", manifest)


def test_requirements_name_code_traces_and_congestion_control(tmp_path: Path) -> None:
    spec = RunSpec(experiment="e", scheme="vegas", data_trace="T.down", ack_trace="T.up",
                   duration_s=5.0, params=make_params(cc_impl="ebpf"))
    needs, files = requirements(spec, _traces(tmp_path))
    assert needs == {RUNS: 1, CODE + measurement_version(): 1,
                     trace_resource("T.down", "a" * 40): 1, trace_resource("T.up", "b" * 40): 1,
                     CC + "vegas": 1, CC + "vegas:ebpf": 1}
    assert files == {}


def test_a_trace_given_by_path_travels_by_its_hash(tmp_path: Path) -> None:
    trace = tmp_path / "mine.trace"
    trace.write_text("1\n")
    spec = RunSpec(experiment="e", scheme="fixed-window", data_trace=str(trace),
                   ack_trace="rate:12", duration_s=5.0, params=make_params(window=3))
    needs, files = requirements(spec, _traces(tmp_path))
    assert files == {str(trace): hashlib.sha256(b"1\n").hexdigest()}
    assert set(needs) == {RUNS, CODE + measurement_version()}


def test_a_run_no_worker_can_serve_says_what_is_missing() -> None:
    needs = {RUNS: 1, CODE + "abc": 1, CC + "vegas": 1}
    workers: dict[str, dict[str, float]] = {
        "tcp://a:1": {RUNS: 4, CODE + "def": 4, CC + "cubic": 4},
        "tcp://b:1": {RUNS: 2, CODE + "abc": 2}}
    why = unservable(needs, workers)
    assert why is not None and "congestion control vegas" in why
    assert "code version" not in why  # worker b has it
    workers["tcp://b:1"][CC + "vegas"] = 2
    assert unservable(needs, workers) is None
    why = unservable({RUNS: 1, CODE + "xyz": 1}, workers)
    assert why is not None and "code version xyz" in why and "abc, def" in why
    assert unservable(needs, {}) == "no worker is connected to the scheduler"


def test_needs_split_across_workers_are_not_served() -> None:
    needs = {RUNS: 1, CODE + "abc": 1, CC + "vegas": 1}
    workers: dict[str, dict[str, float]] = {"a": {RUNS: 1, CODE + "abc": 1},
                                            "b": {RUNS: 1, CC + "vegas": 1}}
    why = unservable(needs, workers)
    assert why is not None and "no single worker" in why


def test_attempt_folders_of_dead_workers_are_removed(tmp_path: Path) -> None:
    paths = ProjectPaths(root=tmp_path)
    base = paths.state_dir / "cluster" / "attempts"
    dead = base / "999999999-abc"  # no such pid
    alive = base / f"{os.getpid()}-def"
    for folder in (dead, alive):
        (folder / "results").mkdir(parents=True)
    assert clean_dead_attempts(paths) == [dead]
    assert alive.is_dir() and not dead.exists()


def test_spec_json_survives_the_trip(tmp_path: Path) -> None:
    dest = tmp_path / "d"
    dest.mkdir()
    unpack(pack(_run_folder(tmp_path)), dest)
    assert RunSpec.from_dict(json.loads((dest / "spec.json").read_text())) == SPEC


def test_a_prr_run_needs_open_vswitch_and_its_planned_controller(tmp_path: Path) -> None:
    spec = RunSpec(experiment="prr-fig2", scheme="cubic", data_trace="rate:10",
                   ack_trace="rate:10", duration_s=None,
                   options=make_params(topology=SWITCHED_PATH.name, controller="pox"))
    needs, _ = requirements(spec, _traces(tmp_path))
    assert needs[OPENFLOW] == 1 and needs[CONTROLLER + "pox"] == 1
    assert CONTROLLER + "os-ken" not in needs
    workers: dict[str, dict[str, float]] = {
        "tcp://a:1": {RUNS: 4, CODE + measurement_version(): 4, CC + "cubic": 4, OPENFLOW: 4,
                      CONTROLLER + "os-ken": 4},
        "tcp://b:1": {RUNS: 4, CODE + measurement_version(): 4, CC + "cubic": 4,
                      CONTROLLER + "pox": 4}}
    why = unservable(needs, workers)
    assert why is not None and "no single worker" in why
    del workers["tcp://b:1"]
    why = unservable(needs, workers)
    assert why is not None and "the OpenFlow controller pox" in why
    workers["tcp://a:1"][CONTROLLER + "pox"] = 4
    assert unservable(needs, workers) is None
    # A trace-path run asks for neither.
    udp = RunSpec(experiment="e", scheme="sprout", data_trace="T.down", ack_trace="T.up",
                  duration_s=5.0)
    assert not {OPENFLOW} & set(requirements(udp, _traces(tmp_path))[0])


def test_a_worker_without_open_vswitch_offers_no_prr_runs(monkeypatch) -> None:
    pytest.importorskip("mininet")  # runkinds.switched_path.network builds on it; a worker has it
    import controllers.launcher
    import controllers.pox_install
    import runkinds.switched_path.network

    def no_ovs() -> None:
        raise runkinds.switched_path.network.OvsUnavailable("Open vSwitch is not running")

    monkeypatch.setattr(runkinds.switched_path.network, "check_ovs", no_ovs)
    monkeypatch.setattr(controllers.pox_install, "installed", lambda *a: None)
    monkeypatch.setattr(controllers.launcher, "osken_available", lambda: None)
    assert SWITCHED_PATH.worker_offers(ProjectPaths()) == [CONTROLLER + "os-ken"]
    monkeypatch.setattr(runkinds.switched_path.network, "check_ovs", lambda: None)
    assert SWITCHED_PATH.worker_offers(ProjectPaths()) == [OPENFLOW, CONTROLLER + "os-ken"]
