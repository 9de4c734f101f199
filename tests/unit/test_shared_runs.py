"""Identical runs asked for by two experiments are run once, kept in results/runs/ and
linked from each experiment's runs/; resume, --force and old folders keep working."""
from __future__ import annotations

import io
from pathlib import Path

from analysis.summary import finished_runs
from app.runner import MatrixRunner
from core.paths import ProjectPaths
from core.results import DONE, SHARED_RUNS, ExperimentStore, experiment_store, write_json
from core.runspec import RunSpec
from experiments.base import Experiment
from tests.unit.fake_runs import add_done, trace_set, write_trace


class _Asks(Experiment):
    title = "asks for runs"

    def __init__(self, name: str, specs: list[RunSpec]) -> None:
        self.name = name
        self.specs = specs

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return self.specs

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        return []


def _specs(experiment: str, trace: Path, trials: range) -> list[RunSpec]:
    return [RunSpec(experiment=experiment, scheme="fixed-window", data_trace=str(trace),
                    ack_trace=str(trace), duration_s=10.0, trial=t) for t in trials]


class _Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.trace = write_trace(tmp_path / "traces", "t.trace", [1])
        self.paths = ProjectPaths(results_override=tmp_path / "results")
        self.out = io.StringIO()
        self.ran: list[tuple[str, int]] = []

    def runner(self, force: bool = False) -> MatrixRunner:
        runner = MatrixRunner(self.paths, trace_set(self.trace.parent), jobs=2, force=force,
                              out=self.out)
        setattr(runner, "_run_child", self._child)
        return runner

    def _child(self, name: str, spec: RunSpec) -> tuple[bool, str, bool]:
        """What `repro _execute` does to the store: a temp folder, committed."""
        self.ran.append((name, spec.trial))
        store = experiment_store(self.paths.results_dir, name)
        tmp = store.new_temp_dir(spec)
        write_json(tmp / "metrics.json", {"throughput_mbps": 1.0, "ran_for": name})
        write_json(tmp / "meta.json", {})
        store.commit(tmp, spec)
        return True, "", False

    def store(self, name: str) -> ExperimentStore:
        return experiment_store(self.paths.results_dir, name)


def test_a_run_two_experiments_ask_for_in_one_plan_runs_once(tmp_path: Path) -> None:
    s = _Setup(tmp_path)
    a = _Asks("a", _specs("a", s.trace, range(1, 3)))
    b = _Asks("b", _specs("b", s.trace, range(1, 4)))
    results = s.runner().run_plan([(a, a.specs), (b, b.specs)])
    assert sorted(s.ran) == [("a", 1), ("a", 2), ("b", 3)]
    assert "plan: b: 3 runs, 0 already done, 1 to run with --jobs 2; 2 run once for an " \
           "experiment before it" in s.out.getvalue()
    assert len(results["a"].succeeded) == 2 and len(results["b"].succeeded) == 3
    for name, specs in (("a", a.specs), ("b", b.specs)):
        store = s.store(name)
        assert all(store.is_done(spec) for spec in specs)
        assert all(store.run_dir(spec).is_symlink() for spec in specs)
        # Figures read the shared runs through the links, with the spec of the run.
        assert sorted(r.spec.trial for r in finished_runs(store)) == [sp.trial for sp in specs]
    pool = s.paths.results_dir / SHARED_RUNS
    assert sorted(p.name for p in pool.iterdir()) == sorted(sp.dirname() for sp in b.specs)


def test_a_run_finished_for_another_experiment_is_linked_not_rerun(tmp_path: Path) -> None:
    s = _Setup(tmp_path)
    a = _Asks("a", _specs("a", s.trace, range(1, 3)))
    s.runner().run(a, a.specs)
    s.ran.clear()
    b = _Asks("b", _specs("b", s.trace, range(1, 4)))
    result = s.runner().run(b, b.specs)
    assert s.ran == [("b", 3)]
    assert result.skipped == 2
    records = {r.spec.trial: r for r in finished_runs(s.store("b"))}
    assert records[1].metrics["ran_for"] == "a" and records[3].metrics["ran_for"] == "b"
    # Resume: nothing left to do for either.
    s.ran.clear()
    s.runner().run_plan([(a, a.specs), (b, b.specs)])
    assert s.ran == []


def test_force_reruns_a_shared_run_once_and_both_see_the_new_one(tmp_path: Path) -> None:
    s = _Setup(tmp_path)
    a = _Asks("a", _specs("a", s.trace, range(1, 2)))
    b = _Asks("b", _specs("b", s.trace, range(1, 2)))
    s.runner().run_plan([(a, a.specs), (b, b.specs)])
    first_done = (s.store("a").run_dir(a.specs[0]) / DONE).read_text()
    s.ran.clear()
    s.runner(force=True).run_plan([(b, b.specs), (a, a.specs)])
    assert s.ran == [("b", 1)]
    for name in ("a", "b"):
        (record,) = finished_runs(s.store(name))
        assert record.metrics["ran_for"] == "b"
    # The run it replaced is kept under the experiment that replaced it, not lost, and is
    # no failed attempt of either.
    superseded = list(s.store("b").superseded())
    assert len(superseded) == 1 and (superseded[0] / DONE).read_text() == first_done
    assert superseded[0].parent == s.store("b").superseded_dir
    assert not list(s.store("a").failures()) and not list(s.store("b").failures())


def test_folders_from_before_the_pool_are_read_and_resumed(tmp_path: Path) -> None:
    s = _Setup(tmp_path)
    a = _Asks("a", _specs("a", s.trace, range(1, 3)))
    old = add_done(ExperimentStore(s.paths.results_dir / "a"), a.specs[0], throughput_mbps=2.0)
    assert not old.is_symlink()
    s.runner().run(a, a.specs)
    assert s.ran == [("a", 2)]
    assert {r.spec.trial: r.metrics["throughput_mbps"] for r in finished_runs(s.store("a"))} \
        == {1: 2.0, 2: 1.0}


def test_recover_drops_dangling_links_and_moves_half_written_pool_runs(tmp_path: Path) -> None:
    s = _Setup(tmp_path)
    a = _Asks("a", _specs("a", s.trace, range(1, 3)))
    s.runner().run(a, a.specs)
    store = s.store("a")
    home1, home2 = store.home(a.specs[0]), store.home(a.specs[1])
    (home1 / DONE).unlink()  # half-written in the pool
    moved = store.recover()
    assert [p.parent for p in moved] == [store.failed_dir] and not home1.exists()
    assert not store.run_dir(a.specs[0]).is_symlink(), "its link is gone too"
    assert store.is_done(a.specs[1]) and home2.is_dir()


def test_a_store_without_a_pool_keeps_runs_in_its_own_folder(tmp_path: Path) -> None:
    store = ExperimentStore(tmp_path / "one")
    spec = RunSpec(experiment="one", scheme="cubic", data_trace="rate:12", ack_trace="rate:12",
                   duration_s=5)
    tmp = store.new_temp_dir(spec)
    final = store.commit(tmp, spec)
    assert final == tmp_path / "one" / "runs" / spec.dirname() and not final.is_symlink()
    assert store.is_done(spec)
