"""Which runs of an experiment's matrix have a result, which failed and why, which
never ran: figures draw only finished runs (DONE) and list everything else. A finished run
that is invalid (analysis/summary.py `invalid_reason`: an absurd kernel window) is no result:
its cell has none, and says why.

The mode shown is the full one when any full-mode run that the quick pass does
not also plan has finished, else the quick one; trials go up to the highest trial on record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from analysis.summary import (INVALID, FailedRecord, RunRecord, failed_records,
                              finished_at, finished_runs)
from core.results import ExperimentStore
from core.runspec import RunSpec

NOT_RUN = "not run yet"
REASON_WIDTH = 90

# experiment.matrix(quick, trials)
MatrixFn = Callable[[bool, int], list[RunSpec]]


@dataclass(frozen=True)
class Cell:
    """One planned run: its finished record, or why it has none."""

    spec: RunSpec
    record: RunRecord | None
    reason: str = ""  # "" when done; else the latest failure's reason, or NOT_RUN
    # Not done, but finished: its latest invalid run (left out of figures, still this plan's).
    invalid_record: RunRecord | None = None

    @property
    def done(self) -> bool:
        return self.record is not None


@dataclass(frozen=True)
class Coverage:
    quick: bool
    trials: int
    cells: tuple[Cell, ...]

    def records(self) -> list[RunRecord]:
        return [c.record for c in self.cells if c.record is not None]

    def runs_on_record(self) -> list[RunRecord]:
        """Each cell's run: its valid one, else its latest invalid one (runs of the plan that
        are neither are another mode's, other options' or redone since)."""
        return [r for c in self.cells if (r := c.record or c.invalid_record) is not None]

    def missing(self) -> list[Cell]:
        return [c for c in self.cells if not c.done]

    def absent(self, key: Callable[[RunSpec], str] = lambda s: s.scheme) -> dict[str, list[str]]:
        """Groups (schemes by default) with no finished run at all -> their distinct reasons."""
        groups: dict[str, list[Cell]] = {}
        for cell in self.cells:
            groups.setdefault(key(cell.spec), []).append(cell)
        return {name: _distinct(c.reason for c in cells)
                for name, cells in groups.items() if not any(c.done for c in cells)}


def short_reason(reason: str, width: int = REASON_WIDTH) -> str:
    """The first line of a failure reason, cut to `width` characters."""
    first = reason.strip().splitlines()[0] if reason.strip() else "unknown reason"
    return first if len(first) <= width else first[:width - 3] + "..."


def _distinct(reasons: Iterable[str]) -> list[str]:
    out: list[str] = []
    for reason in reasons:
        if reason not in out:
            out.append(reason)
    return out


# Why a finished run is no result ("" when it is one): RunRecord.invalid unless the
# experiment adds rules of its own (Experiment.invalid_reason).
Validity = Callable[[RunRecord], str]


def match_plan(plan: list[RunSpec], done: list[RunRecord], failed: list[FailedRecord],
               quick: bool, trials: int, invalid: Validity | None = None) -> Coverage:
    """Pair each planned spec with its latest valid finished run, else its latest failure or
    invalid run (whichever is later), with the reason.

    Specs are matched as run ids are computed, without the experiment that asked for them
    (RunSpec equality leaves it out): a
    run another experiment did (and this store adopted) is this experiment's run too.
    """
    why = invalid or (lambda r: r.invalid)
    latest: dict[RunSpec, RunRecord] = {}
    latest_invalid: dict[RunSpec, RunRecord] = {}
    for record in done:
        key = record.spec
        into = latest_invalid if why(record) else latest
        if key not in into or finished_at(record) > finished_at(into[key]):
            into[key] = record
    events = [(f.time, f.spec, f.reason) for f in failed]
    events += [(finished_at(r), r.spec, f"{INVALID}: {why(r)}") for r in done if why(r)]
    reasons = {spec: reason for _, spec, reason in sorted(events, key=lambda e: e[0])}
    cells = tuple(Cell(spec, latest.get(spec),
                       "" if spec in latest
                       else reasons.get(spec, NOT_RUN),
                       None if spec in latest else latest_invalid.get(spec)) for spec in plan)
    return Coverage(quick=quick, trials=trials, cells=cells)


def coverage(store: ExperimentStore, matrix: MatrixFn,
             done: list[RunRecord] | None = None, invalid: Validity | None = None) -> Coverage:
    """The coverage of the mode on record: full when a run only the full matrix plans is
    done and the full matrix has at least as many finished runs as the quick one.

    `done` replaces the store's finished runs (e.g. the same runs with their metrics
    re-derived from the raw artifacts)."""
    done = finished_runs(store) if done is None else done
    failed = failed_records(store)
    trials = max([r.spec.trial for r in done] + [f.spec.trial for f in failed], default=1)
    full = match_plan(matrix(False, trials), done, failed, quick=False, trials=trials,
                      invalid=invalid)
    quick = match_plan(matrix(True, trials), done, failed, quick=True, trials=trials,
                       invalid=invalid)
    # A run the quick pass also plans (an experiment whose quick matrix is a subset of
    # the full one) does not make the record a full one.
    # A run another experiment shared (a leaderboard's whole-trace baseline run is in the
    # training-vs-testing full matrix) does not make a finished quick pass a full one either.
    in_quick = {c.spec for c in quick.cells}
    full_done, quick_done = sum(c.done for c in full.cells), sum(c.done for c in quick.cells)
    if any(c.done and c.spec not in in_quick for c in full.cells) and full_done >= quick_done:
        return full
    if any(c.done for c in quick.cells):
        return quick
    # Nothing valid in either: full only when a run only the full matrix plans was tried.
    tried_full = any(c.reason != NOT_RUN and c.spec not in in_quick for c in full.cells)
    return full if tried_full else quick


def missing_notes(cells: Iterable[Cell], group: Callable[[RunSpec], str]) -> list[str]:
    """One line per group (e.g. per scheme) with runs missing: how many, and why."""
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(group(cell.spec), []).append(cell)
    notes = []
    for name, members in groups.items():
        missing = [c for c in members if not c.done]
        if not missing:
            continue
        what = ("no result" if len(missing) == len(members)
                else f"{len(missing)} of {len(members)} runs missing")
        reasons = "; ".join(short_reason(r) for r in _distinct(c.reason for c in missing))
        notes.append(f"{name}: {what} ({reasons})")
    return notes
