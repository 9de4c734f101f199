"""Every experiment the suite can run, by name."""
from __future__ import annotations

from typing import Any, Mapping

from core.errors import UsageError
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.contest import Contest
from experiments.contest_warmup_a import ContestWarmupA
from experiments.contest_figures import CONTEST_FIGURES
from experiments.prr_fig2 import PrrFig2
from experiments.sprout_fig7 import SproutFig7
from experiments.sprout_risk import SproutRisk

EXPERIMENTS: tuple[type[Experiment], ...] = (
    ContestWarmupA, SproutFig7, SproutRisk, PrrFig2, Contest, *CONTEST_FIGURES)


class UnknownExperiment(UsageError):
    pass


def experiment_classes() -> tuple[type[Experiment], ...]:
    """The experiments' classes: their names and declared options, before any is built."""
    return EXPERIMENTS


def all_experiments(traces: TraceSet,
                    options: Mapping[str, Mapping[str, Any]] | None = None) -> list[Experiment]:
    """Every experiment over this trace set; `options` maps a name to its option values."""
    options = options or {}
    return [cls(traces, options.get(cls.name)) for cls in EXPERIMENTS]


def get_experiment(name: str, traces: TraceSet,
                   options: Mapping[str, Any] | None = None) -> Experiment:
    for cls in EXPERIMENTS:
        if cls.name == name:
            return cls(traces, options)
    raise UnknownExperiment(f"unknown experiment {name!r}; known: "
                            + ", ".join(cls.name for cls in EXPERIMENTS))
