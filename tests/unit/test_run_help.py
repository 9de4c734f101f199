"""`repro run EXPERIMENT --help` shows that experiment's own options, and only them."""
from __future__ import annotations

import argparse

import pytest

from app import cli
from experiments.base import Experiment
from experiments.registry import experiment_classes


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", *argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("cls", experiment_classes(), ids=lambda c: c.name)
def test_an_experiments_help_lists_its_options_and_no_others(
        cls: type[Experiment], capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, cls.name)
    assert f"usage: repro run {cls.name}" in text and "--quick" in text
    mine = {o.flag for o in cls.options}
    for other in experiment_classes():
        for option in other.options:
            if option.flag in mine:
                assert option.flag in text
            else:
                assert f"  {option.flag} " not in text, (cls.name, option.flag)


def test_the_general_help_names_every_experiment(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys)
    for cls in experiment_classes():
        assert cls.name in text
    assert "--pattern" not in text  # an experiment's own option: in its own help


def test_an_option_of_another_experiment_is_refused_naming_the_experiment(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "dctcp", "--pattern", "heavy"]) == 2
    err = capsys.readouterr().err
    assert "dctcp does not take --pattern" in err and "repro run dctcp --help" in err


Named = tuple[tuple[str, ...], argparse.ArgumentParser]


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Named]:
    found = [(path, parser)]
    for action in parser._actions:  # argparse keeps its subcommands here only
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _subparsers(sub, (*path, name))
    return found


def test_every_commands_help_renders() -> None:
    # argparse formats help text with %: one literal % in any option's help ("1%") made
    # `repro one --help` raise instead of printing.
    for path, parser in _subparsers(cli.build_parser()):
        assert parser.format_help(), path
