"""What an experiment is: a matrix of runs and the figures made from them."""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from core.results import ExperimentStore
from core.runspec import RunSpec


class Experiment(ABC):
    name: str
    title: str
    # What the quick mode promises, for the plan printed before a run.
    quick_note: str = ""

    @abstractmethod
    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        """Every run the figure needs, in the order they should run."""

    @abstractmethod
    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        """Read finished runs only, write summary.csv and plots; return the files written."""
