"""What experiments get from the command line: the trace set of `--traces-dir`, and the
values of the options they declare (one flag each on `repro run`, validated, listed)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from core.errors import EXIT_OK, EXIT_USAGE
from app import cli
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments import registry
from experiments.base import Experiment
from core.settings import Setting, SettingError


class _Stop(Exception):
    """Raised where `run` would start the runs: everything before it has happened."""


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, TraceSet]]:
    """Every experiment the CLI builds, with the trace set it was given."""
    seen: list[tuple[str, TraceSet]] = []
    original = Experiment.__init__

    def recording(self: Experiment, traces: TraceSet, *args: Any, **kwargs: Any) -> None:
        seen.append((self.name, traces))
        original(self, traces, *args, **kwargs)

    monkeypatch.setattr(Experiment, "__init__", recording)
    return seen


def _stop_before_running(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    plans: list[Any] = []

    def run_plan(self: Any, plan: Any) -> Any:
        plans.append(plan)
        raise _Stop

    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    monkeypatch.setattr("app.runner.MatrixRunner.run_plan", run_plan)
    monkeypatch.setattr("app.commands.run.jobs_of", lambda args, paths: 1)
    return plans


@pytest.mark.parametrize("command", [["list"], ["report"], ["run", "all"], ["_required-traces"],
                                     *[["run", cls.name] for cls in registry.experiment_classes()]])
def test_traces_dir_reaches_every_experiment(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        built: list[tuple[str, TraceSet]], capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "my-traces"
    mine.mkdir()
    (mine / "Only-Here.down").write_text("1\n")
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("NETREPRO_TRACES", raising=False)
    _stop_before_running(monkeypatch)
    try:
        cli.main(["--traces-dir", str(mine), *command])
    except _Stop:
        pass
    names = {name for name, _ in built}
    wanted = {cls.name for cls in registry.experiment_classes()} if command[-1] in (
        "list", "report", "all", "_required-traces") else {command[-1]}
    assert wanted <= names
    for name, traces in built:
        assert traces.locate("Only-Here.down") == mine / "Only-Here.down", name


def test_the_flag_changes_what_an_experiment_plans(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """sprout-fig7 uses Verizon-LTE-driving when the given directory has it."""
    mine = tmp_path / "my-traces"
    mine.mkdir()
    for end in ("down", "up"):
        (mine / f"Verizon-LTE-driving.{end}").write_text("1\n2\n")
    assert cli.main(["--traces-dir", str(mine), "_required-traces"]) == EXIT_OK
    assert "Verizon-LTE-driving.down" in capsys.readouterr().out.split()


# ------------------------------------------------------------------- options

class _WithOptions(Experiment):
    name = "with-options"
    title = "declares options"
    options: ClassVar[tuple[Setting, ...]] = (
        Setting("one_way", bool, "one-way delay", default=False),
        Setting("warmup_skip_s", float, "seconds skipped", default=0.0, minimum=0,
                maximum=60),
        Setting("pattern", str, "drop pattern", default="none", choices=("none", "burst")),
    )

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return [RunSpec(experiment=self.name, scheme="cubic", data_trace="rate:12",
                        ack_trace="rate:12", duration_s=5.0, options=self.run_options())]

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        return []


class _WithoutOptions(_WithOptions):
    name = "without-options"
    options: ClassVar[tuple[Setting, ...]] = ()


@pytest.fixture
def with_options(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    monkeypatch.setattr(registry, "experiment_classes", lambda: (_WithOptions, _WithoutOptions))
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    return _stop_before_running(monkeypatch)


def test_declared_options_become_run_flags_and_spec_options(with_options: list[Any]) -> None:
    with pytest.raises(_Stop):
        cli.main(["run", "with-options", "--one-way", "--warmup-skip-s", "2.5",
                  "--pattern", "burst"])
    ((exp, specs),) = with_options[0]
    assert exp.chosen == {"one_way": True, "warmup_skip_s": 2.5, "pattern": "burst"}
    assert specs[0].option("one_way") is True and specs[0].option("warmup_skip_s") == 2.5


def test_options_not_given_take_their_defaults(with_options: list[Any]) -> None:
    with pytest.raises(_Stop):
        cli.main(["run", "with-options"])
    ((exp, specs),) = with_options[0]
    assert dict(specs[0].options) == {"one_way": False, "warmup_skip_s": 0.0, "pattern": "none"}


@pytest.mark.parametrize("argv,message", [
    (["--warmup-skip-s", "-1"], "--warmup-skip-s: -1.0 is out of range: a number from 0 to 60"),
    (["--warmup-skip-s", "61"], "--warmup-skip-s: 61.0 is out of range"),
    (["--warmup-skip-s", "soon"], "--warmup-skip-s: 'soon' is not a number"),
    (["--pattern", "random"], "--pattern: 'random' is not one of none, burst"),
])
def test_bad_option_values_are_refused_with_the_flag_and_range(
        with_options: list[Any], argv: list[str], message: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "with-options", *argv])
    assert e.value.code == EXIT_USAGE
    assert message in capsys.readouterr().err
    assert with_options == []


def test_an_option_the_experiment_does_not_declare_is_refused(
        with_options: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "without-options", "--one-way"]) == EXIT_USAGE
    assert "without-options does not take --one-way; it takes no options" in \
        capsys.readouterr().err
    assert with_options == []


def test_run_all_gives_each_experiment_the_options_it_declares(with_options: list[Any]) -> None:
    with pytest.raises(_Stop):
        cli.main(["run", "all", "--one-way"])
    chosen = {exp.name: exp.chosen for exp, _ in with_options[0]}
    assert chosen == {"with-options": {"one_way": True, "warmup_skip_s": 0.0, "pattern": "none"},
                      "without-options": {}}


def test_list_shows_the_options(with_options: list[Any],
                                capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "option --warmup-skip-s: seconds skipped (a number from 0 to 60; default 0.0)" in out
    assert "option --pattern: drop pattern (one of none, burst; default 'none')" in out


def test_a_declaration_whose_default_is_out_of_range_is_refused() -> None:
    with pytest.raises(SettingError, match="--delay: 500 is out of range"):
        Setting("delay", int, "a delay", default=500, minimum=0, maximum=100)
