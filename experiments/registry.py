"""Every experiment the suite can run, by name."""
from __future__ import annotations

from experiments.base import Experiment
from experiments.contest_warmup_a import ContestWarmupA
from experiments.sprout_fig7 import SproutFig7
from experiments.sprout_risk import SproutRisk


class UnknownExperiment(ValueError):
    pass


def all_experiments() -> list[Experiment]:
    return [ContestWarmupA(), SproutFig7(), SproutRisk()]


def get_experiment(name: str) -> Experiment:
    for exp in all_experiments():
        if exp.name == name:
            return exp
    raise UnknownExperiment(f"unknown experiment {name!r}; known: "
                            + ", ".join(e.name for e in all_experiments()))


def one_way_variant(exp: Experiment) -> Experiment:
    """The experiment with one direction loaded per run (`repro run --one-way`)."""
    make = getattr(exp, "one_way_variant", None)
    if make is None:
        raise UnknownExperiment(f"{exp.name} has no one-way variant (--one-way is for "
                                "sprout-fig7 and sprout-risk)")
    return make()
