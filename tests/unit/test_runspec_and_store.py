"""RunSpec ids and the results store's resume/failure rules."""
from __future__ import annotations

import dataclasses
import os
import subprocess

from pathlib import Path
from typing import Any

import pytest

from core.results import DONE, FAILED, ExperimentStore, read_json
from core.code_identity import CodeIdentity
from core.runspec import RunSpec, make_params


def spec(**overrides: Any) -> RunSpec:
    base: dict[str, Any] = dict(experiment="x", scheme="fixed-window", data_trace="a.down",
                                ack_trace="a.up", params=make_params(window=10))
    base.update(overrides)
    return RunSpec(**base)


# Another value for every field of a RunSpec that is part of what is measured.
OTHER_VALUES = {
    "scheme": "aimd", "data_trace": "b.down", "ack_trace": "b.up", "delay_ms": 21,
    "queue": "droptail:packets=100", "duration_s": 30.0, "trial": 2,
    "params": make_params(window=11), "options": make_params(one_way=True),
}


def test_run_id_is_stable_and_depends_on_every_measured_field() -> None:
    fields = {f.name for f in dataclasses.fields(RunSpec)}
    assert fields == set(OTHER_VALUES) | {"experiment"}, \
        f"give OTHER_VALUES a value for {fields - set(OTHER_VALUES) - {'experiment'}}"
    assert spec().run_id() == spec().run_id()
    for name, value in OTHER_VALUES.items():
        changed = spec(**{name: value})
        assert changed != spec() and changed.run_id() != spec().run_id(), name
        assert changed.dirname() != spec().dirname(), name


def test_the_asking_experiment_is_not_part_of_the_run() -> None:
    """Two experiments asking for the same run get one run: same id, same folder, equal."""
    mine, theirs = spec(experiment="x"), spec(experiment="y")
    assert mine.run_id() == theirs.run_id() and mine.dirname() == theirs.dirname()
    assert mine == theirs and hash(mine) == hash(theirs)
    assert mine.to_dict()["experiment"] == "x"  # still recorded with the run


def test_run_id_changes_with_the_code_the_run_executes(monkeypatch: pytest.MonkeyPatch) -> None:
    before = spec().run_id()
    monkeypatch.setattr("core.runspec.run_code",
                        lambda s: CodeIdentity({"runkinds/trace_path/measure.py": "edited"}))
    assert spec().run_id() != before


def test_spec_round_trips_through_dict() -> None:
    s = spec(duration_s=12.5, queue="droptail:packets=100")
    assert RunSpec.from_dict(s.to_dict()) == s
    assert s.dirname().startswith("fixed-window-window10-a.down-t1-")


def test_once_means_no_duration() -> None:
    assert spec().once and not spec(duration_s=3).once


@pytest.mark.parametrize("pooled", [False, True])
def test_commit_writes_done_last_and_is_resumable(tmp_path, monkeypatch, pooled: bool) -> None:
    store = ExperimentStore(tmp_path / "exp", pool=tmp_path / "runs" if pooled else None)
    s = spec()
    tmp = store.new_temp_dir(s)
    (tmp / "data.log").write_text("# base timestamp: 0\n")
    assert not store.is_done(s)
    # Watch the folder's rename into place: its artifacts are there, DONE is not yet.
    renames: list[Path] = []
    real_replace = os.replace

    def watched_replace(src, dst) -> None:
        real_replace(src, dst)
        if Path(src) == tmp:
            assert (Path(dst) / "data.log").is_file() and not (Path(dst) / DONE).exists()
            assert not store.is_done(s)
            renames.append(Path(dst))

    monkeypatch.setattr("core.results.os.replace", watched_replace)
    final = store.commit(tmp, s)
    assert renames == [store.home(s)], "the folder is renamed into place once"
    assert (final / DONE).is_file() and (final / "data.log").is_file()
    assert store.is_done(s)
    assert not tmp.exists()


def test_failed_run_keeps_artifacts_and_reason(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "exp")
    s = spec()
    tmp = store.new_temp_dir(s)
    (tmp / "partial.log").write_text("partial")
    dest = store.fail(tmp, s, "emulator died")
    assert (dest / "partial.log").read_text() == "partial"
    assert read_json(dest / FAILED)["reason"] == "emulator died"
    assert not store.is_done(s)


@pytest.mark.parametrize("pooled", [False, True])
def test_a_run_redone_with_force_is_superseded_not_failed(tmp_path, pooled: bool) -> None:
    """`repro run --force` commits a second run of a finished spec: the first is kept under
    superseded/, and is no failed attempt."""
    store = ExperimentStore(tmp_path / "exp", pool=tmp_path / "runs" if pooled else None)
    s = spec()
    first = store.new_temp_dir(s)
    (first / "data.log").write_text("first\n")
    store.commit(first, s)
    again = store.new_temp_dir(s)
    (again / "data.log").write_text("again\n")
    store.commit(again, s)
    assert (store.run_dir(s) / "data.log").read_text() == "again\n"
    assert list(store.failures()) == []
    kept = list(store.superseded())
    assert len(kept) == 1 and (kept[0] / "data.log").read_text() == "first\n"
    assert kept[0].parent == store.superseded_dir and not (kept[0] / FAILED).exists()


def test_a_superseded_run_filed_under_failed_by_older_code_is_no_failure(tmp_path) -> None:
    """Older code moved the replaced run into failed/ with a FAILED.json: its DONE says it
    finished, so it is listed as superseded, not as a failed attempt."""
    store = ExperimentStore(tmp_path / "exp")
    old = store.failed_dir / f"{spec().dirname()}-superseded-1700000000"
    old.mkdir(parents=True)
    (old / DONE).write_text("2026-01-01\n")
    (old / FAILED).write_text('{"reason": "superseded: found without a DONE marker"}')
    real = store.failed_dir / f"{spec().dirname()}-20260101-000000-1"
    real.mkdir()
    (real / FAILED).write_text('{"reason": "emulator died"}')
    assert list(store.failures()) == [real]
    assert list(store.superseded()) == [old]


def test_recover_moves_half_written_runs_aside(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "exp")
    s = spec()
    half = store.run_dir(s)
    half.mkdir(parents=True)
    (half / "metrics.json").write_text("{")
    moved = store.recover()
    assert len(moved) == 1 and not half.exists()
    assert read_json(moved[0] / FAILED)["reason"].startswith("half-written")


def test_recover_leaves_live_temp_dirs_and_moves_dead_ones(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "exp")
    live = store.runs_dir / f".tmp-run-{os.getpid()}"
    live.mkdir(parents=True)
    dead_pid = _dead_pid()
    dead = store.runs_dir / f".tmp-run-{dead_pid}"
    dead.mkdir()
    store.recover()
    assert live.exists() and not dead.exists()
    assert any(p.name.startswith("tmp-run") for p in store.failed_dir.iterdir())


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("text", ["", "fifo", "droptail", "droptail:packets=0",
                                  "droptail:pkts=3", "droptail:packets=3,packets=4"])
def test_bad_queue_specs_are_rejected(text: str) -> None:
    from core.queue_spec import QueueSpecError, parse_queue
    with pytest.raises(QueueSpecError):
        parse_queue(text)


def test_queue_specs_parse() -> None:
    from core.queue_spec import parse_queue
    assert parse_queue("infinite").kind == "infinite"
    q = parse_queue("droptail:packets=100,bytes=150000")
    assert (q.kind, q.packets, q.bytes) == ("droptail", 100, 150000)
