"""A run two experiments ask for (the id leaves the experiment out) is done once."""
from __future__ import annotations

from pathlib import Path

from app.runner import split_shared_runs
from core.results import ExperimentStore
from core.runspec import RunSpec
from tests.unit.fake_runs import add_done


def _spec(experiment: str, scheme: str = "sprout") -> RunSpec:
    return RunSpec(experiment=experiment, scheme=scheme, data_trace="d", ack_trace="a")


def test_one_pool_runs_a_shared_run_once() -> None:
    a, b, c = _spec("x"), _spec("y"), _spec("y", "cubic")
    todo, followers = split_shared_runs([("x", a), ("y", b), ("y", c)])
    assert todo == [("x", a), ("y", c)]
    assert followers == {b.dirname(): [("y", b)]}


def test_a_store_adopts_a_finished_run(tmp_path: Path) -> None:
    x, y = ExperimentStore(tmp_path / "x"), ExperimentStore(tmp_path / "y")
    spec = _spec("x")
    add_done(x, spec, throughput_mbps=1.0)
    assert not y.is_done(_spec("y"))
    y.adopt(x.run_dir(spec))
    assert y.is_done(_spec("y")) and (y.run_dir(spec) / "metrics.json").is_file()


def test_an_adopted_run_is_a_point_of_the_adopting_experiment(tmp_path: Path) -> None:
    from analysis.coverage import coverage
    x, y = ExperimentStore(tmp_path / "x"), ExperimentStore(tmp_path / "y")
    add_done(x, _spec("x"), throughput_mbps=1.0)
    y.adopt(x.run_dir(_spec("x")))
    cov = coverage(y, lambda quick, trials: [_spec("y")])
    assert [c.done for c in cov.cells] == [True]
