"""Every experiment the suite can run, by name, discovered from the paper packages.

A paper is a package under experiments/ whose `__init__.py` exports `EXPERIMENTS`, a
tuple of its Experiment classes: adding a folder adds the paper (docs/adding-a-paper.md).
Packages are read in name order; each paper's experiments in the order it lists them.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from core.errors import UsageError
from core.traces import TraceSet
from experiments.base import Experiment

PAPERS_DIR = Path(__file__).resolve().parent


class UnknownExperiment(UsageError):
    pass


class PaperPackageError(TypeError):
    """A paper package that does not declare its experiments as the registry expects."""


@functools.lru_cache(maxsize=1)
def paper_packages() -> tuple[str, ...]:
    """The paper packages' names (experiments/<name>/), in name order."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules([str(PAPERS_DIR)]) if m.ispkg))


@functools.lru_cache(maxsize=1)
def experiment_classes() -> tuple[type[Experiment], ...]:
    """The experiments' classes: their names and declared options, before any is built."""
    found: list[type[Experiment]] = []
    for package in paper_packages():
        module = importlib.import_module(f"experiments.{package}")
        declared = getattr(module, "EXPERIMENTS", None)
        if not isinstance(declared, tuple) or not all(
                isinstance(c, type) and issubclass(c, Experiment) for c in declared):
            raise PaperPackageError(f"experiments/{package}/__init__.py must export EXPERIMENTS, "
                                    "a tuple of its Experiment classes")
        found.extend(declared)
    names = [c.name for c in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PaperPackageError(f"experiment names declared twice: {', '.join(twice)}")
    return tuple(found)


@dataclass(frozen=True)
class Paper:
    """A paper package: its name as the report shows it, and its experiments' names."""
    package: str
    title: str
    experiments: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def papers() -> tuple[Paper, ...]:
    """Every paper, in name order. Its title is the package's `PAPER` where it declares
    one, else its docstring up to the first colon."""
    found = []
    for package in paper_packages():
        module = importlib.import_module(f"experiments.{package}")
        title = getattr(module, "PAPER", None)
        if not isinstance(title, str) or not title.strip():
            title = " ".join((module.__doc__ or package).split(":")[0].split())
        found.append(Paper(package, title, tuple(c.name for c in module.EXPERIMENTS)))
    return tuple(found)


def all_experiments(traces: TraceSet,
                    options: Mapping[str, Mapping[str, Any]] | None = None) -> list[Experiment]:
    """Every experiment over this trace set; `options` maps a name to its option values."""
    options = options or {}
    return [cls(traces, options.get(cls.name)) for cls in experiment_classes()]


def get_class(name: str) -> type[Experiment]:
    """The experiment class of that name (UnknownExperiment naming the known ones)."""
    for cls in experiment_classes():
        if cls.name == name:
            return cls
    raise UnknownExperiment(f"unknown experiment {name!r}; known: "
                            + ", ".join(cls.name for cls in experiment_classes()))


def get_experiment(name: str, traces: TraceSet,
                   options: Mapping[str, Any] | None = None) -> Experiment:
    return get_class(name)(traces, options)
