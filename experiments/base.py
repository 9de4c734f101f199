"""What an experiment is: a matrix of runs, the figures made from them, and the
paper's claims checked against them.

What an experiment needs from the layers above it comes in by argument: the
trace set (so `--traces-dir` reaches it) and the values of the options it
declares (experiments/options.py).
"""
from __future__ import annotations

import fnmatch
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Mapping

from analysis.claims.model import FULL, QUICK, Claim, ClaimReport, evaluate_all, measured_texts
from analysis.coverage import Coverage, coverage
from analysis.host_timing import hosts_late
from analysis.summary import RunRecord
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from core.settings import Setting
from experiments.options import resolve


class Experiment(ABC):
    name: str
    title: str
    # What the quick mode promises, for the plan printed before a run.
    quick_note: str = ""
    # Run parameters beyond the scheme's that this experiment takes from the command line.
    options: ClassVar[tuple[Setting, ...]] = ()
    # The paper's claims, as data: each paper declares them in its package's claims.py.
    claims: ClassVar[tuple[Claim, ...]] = ()
    # Row columns `repro compare` sets side by side beyond those the claims read.
    compared_metrics: ClassVar[tuple[str, ...]] = ()
    # The figure the report's first screen shows for the paper (file stems in the results
    # folder, fnmatch patterns, the first that matches a drawn figure), and what it shows.
    headline: ClassVar[tuple[str, ...]] = ()
    headline_caption: ClassVar[str] = ""
    # Python modules one of the paper's own commands needs beyond the suite's, with the
    # command: `repro doctor` checks them and names the paper (setup/install.sh installs them).
    python_modules: ClassVar[tuple[tuple[str, str], ...]] = ()

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

    def resolved_options(self) -> dict[str, Any]:
        """The chosen options with every choice this machine would make decided (PRR's
        `--controller auto` becomes the controller that serves here): built from them, the
        experiment plans the same runs on any machine. `repro run` records them beside the
        results (app/recorded_options.py); verify, report and a bundle checked
        elsewhere judge the runs against that record. An experiment whose matrix depends on
        the machine declares the choice as an option and decides it here."""
        return dict(self.chosen)

    def with_options(self, options: Mapping[str, Any]) -> "Experiment":
        """The same experiment over the same traces with these option values (an
        experiment built with more constructor arguments than (traces, options) gets its
        defaults for them)."""
        return type(self)(self.traces, options)

    def with_traces(self, traces: TraceSet) -> "Experiment":
        """The same experiment, with the same options, reading its traces from `traces`
        (a bundle's, say)."""
        return type(self)(traces, self.chosen)

    def coverage(self, store: ExperimentStore, done: list[RunRecord] | None = None) -> Coverage:
        return coverage(store, lambda quick, trials: self.matrix(quick, trials), done,
                        self.invalid_reason)

    def invalid_reason(self, record: RunRecord) -> str:
        """Why a finished run is no result for this experiment ("" when it is one): the
        platform's rules (analysis/summary.py: an absurd kernel window, flows held back by
        their windows), and whatever the experiment adds. An invalid run is left out of
        figures and claims, and counted and shown with its reason."""
        return record.invalid

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """One row per finished run of the matrix: its metrics, its parameters, its folder."""
        rows = []
        for record in cov.records():
            row = dict(record.metrics)
            row.update(dict(record.spec.options), **dict(record.spec.params),
                       scheme=record.spec.scheme,
                       trial=record.spec.trial, run=record.path.name)
            rows.append(row)
        return rows

    def headline_figure(self, folder: Path) -> tuple[Path, str] | None:
        """The headline figure drawn in this experiment's results folder and what it shows,
        or None."""
        drawn = sorted(folder.glob("*.png"))
        for pattern in self.headline:
            for path in drawn:
                if fnmatch.fnmatchcase(path.stem, pattern):
                    return path, self.headline_caption
        return None

    def metric_columns(self) -> set[str]:
        """The row columns two passes are compared on: those the claims read, and the
        declared `compared_metrics` (only those holding numbers in the rows are used)."""
        return set().union(*(measured_texts(c.check) for c in self.claims),
                           self.compared_metrics)

    def evaluate_claims(self, store: ExperimentStore,
                        done: list[RunRecord] | None = None) -> ClaimReport:
        """Every claim on the runs on record (`done` replaces the store's finished runs)."""
        cov = self.coverage(store, done)
        return self.claims_on(cov, self.claim_rows(cov))

    def claims_on(self, cov: Coverage, rows: list[dict[str, Any]]) -> ClaimReport:
        """Every claim on these rows of the runs covered by `cov` (each counts the runs
        behind it whose end hosts were late)."""
        mode = QUICK if cov.quick else FULL
        host_late = frozenset(r.path.name for r in cov.records() if hosts_late(r.metrics))
        return ClaimReport(self.name, mode, tuple(evaluate_all(self.claims, rows, mode,
                                                               self.name, host_late)))
