"""What an experiment is: a matrix of runs and the figures made from them.

What an experiment needs from the layers above it comes in by argument: the
trace set (so `--traces-dir` reaches it) and the values of the options it
declares (experiments/options.py).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Mapping

from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from experiments.options import ExperimentOption, resolve


class Experiment(ABC):
    name: str
    title: str
    # What the quick mode promises, for the plan printed before a run.
    quick_note: str = ""
    # Run parameters beyond the scheme's that this experiment takes from the command line.
    options: ClassVar[tuple[ExperimentOption, ...]] = ()

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None) -> None:
        self.traces = traces
        # Every declared option's value (the defaults unless given); they go into every
        # RunSpec's options, so they are part of each run's id.
        self.chosen: dict[str, Any] = resolve(self.options, options or {}, self.name)

    def run_options(self) -> tuple[tuple[str, Any], ...]:
        """The chosen option values as RunSpec.options."""
        return make_params(**self.chosen)

    @abstractmethod
    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        """Every run the figure needs, in the order they should run."""

    @abstractmethod
    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        """Read finished runs only, write summary.csv and plots; return the files written."""
