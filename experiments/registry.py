"""Every experiment the suite can run, by name."""
from __future__ import annotations

from experiments.base import Experiment
from experiments.contest import Contest
from experiments.contest_warmup_a import ContestWarmupA
from experiments.contest_figures import CONTEST_FIGURES
from experiments.sprout_fig7 import SproutFig7
from experiments.sprout_risk import SproutRisk


class UnknownExperiment(ValueError):
    pass


def all_experiments() -> list[Experiment]:
    return [ContestWarmupA(), SproutFig7(), SproutRisk(), Contest(), *CONTEST_FIGURES]


def get_experiment(name: str) -> Experiment:
    for exp in all_experiments():
        if exp.name == name:
            return exp
    raise UnknownExperiment(f"unknown experiment {name!r}; known: "
                            + ", ".join(e.name for e in all_experiments()))
