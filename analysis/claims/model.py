"""What a claim is and how one is judged: rows and their selection, verdicts and modes,
tolerances, the check interface, `Claim`, its result, and the report of an experiment's
claims.

Rows are one dict per finished run (the columns of its summary.csv), or per protocol
where an experiment aggregates runs. A claim is never evaluated on a run it does not
name: the rows it used are counted ("runs") and listed, with how many of them had a
late emulator and how many had late end hosts (analysis/host_timing.py: the
experiment passes the names of those runs).
"""
from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
VERDICTS = (PASS, FAIL, NOT_RUN)
QUICK, FULL, BOTH = "quick", "full", "both"
MODES = (QUICK, FULL, BOTH)
NUMBER, ORDERING, SHAPE = "number", "ordering", "shape"
# The version of claims.json's layout (ClaimReport.to_dict writes it).
CLAIMS_FORMAT = 1

Row = Mapping[str, Any]
Where = tuple[tuple[str, Any], ...]


class ClaimDeclarationError(ValueError):
    """A claim declared wrongly (an unknown mode, a tolerance without a reason...)."""


# --------------------------------------------------------------------- rows


def row_runs(row: Row) -> set[str]:
    """The run folders a row stands on: a run's own row names it in `run`; a row that
    aggregates runs (a protocol's trials, its training and testing sides) lists them,
    space-separated, in `runs` or in columns ending `_runs`."""
    names = {str(row["run"])} if row.get("run") else set()
    for key, value in row.items():
        if (key == "runs" or key.endswith("_runs")) and isinstance(value, str):
            names.update(value.split())
    return names


def late_run_count(rows: Sequence[Row]) -> int:
    """How many of the runs behind `rows` had a late emulator: a run's own row says so in
    `lateness_ok`; a row that aggregates runs counts its late ones in `late_trials`."""
    late = {str(r.get("run")) for r in rows
            if "late_trials" not in r and r.get("lateness_ok") is False}
    return len(late) + sum(int(r.get("late_trials") or 0) for r in rows if "late_trials" in r)


@dataclass(frozen=True)
class OneOf:
    """A filter value that matches any of `values` (`where(recovery=OneOf(("a", "b")))`)."""

    values: tuple[Any, ...]

    def __str__(self) -> str:
        return "|".join(str(v) for v in self.values)


def where(**conditions: Any) -> Where:
    """Row filter as sorted (column, value) pairs, so a check stays a frozen value."""
    return tuple(sorted(conditions.items()))


def matches(row: Row, conditions: Where) -> bool:
    return all(row.get(k) in v.values if isinstance(v, OneOf) else row.get(k) == v
               for k, v in conditions)


def select(rows: Iterable[Row], conditions: Where) -> list[Row]:
    """The rows matching every condition."""
    return [row for row in rows if matches(row, conditions)]


def to_number(value: Any) -> float | None:
    """A finite float from a row cell, or None (blank, None, NaN, text)."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def value_of(row: Row, column: str) -> float:
    """The number in `column` of a row already kept for having one (see to_number)."""
    number = to_number(row[column])
    if number is None:
        raise ValueError(f"{column} is not a finite number in {dict(row)}")
    return number


def fmt(value: float | None, unit: str = "") -> str:
    """A value as a claim shows it: three significant digits or so, '-' for none."""
    if value is None:
        return "-"
    size = abs(value)
    digits = 3 if size < 1 else 2 if size < 10 else 1 if size < 100 else 0
    return f"{value:.{digits}f}{unit}"


# --------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Outcome:
    """What a check found: a verdict, our value as text, and the rows it used."""

    verdict: str
    ours: str
    rows: tuple[Row, ...] = ()
    why: str = ""
    value: float | None = None
    # The rows of the groups that failed, for a check that judges groups one by one; empty
    # when the check judges the rows as a whole.
    failed_rows: tuple[Row, ...] = ()


# Fields of the checks that name the rows and cells a check looks at, not what it measures.
SELECTING_FIELDS = frozenset({"group_by", "where", "lower", "upper", "subject", "reference",
                              "pair", "scale_by", "positive", "x", "among", "optional",
                              "scheme_column"})


def measured_texts(value: Any) -> set[str]:
    """Every text held in a check's fields that say what it measures, nested values
    included (the fields that select rows and cells left out): the row columns a check
    compares are among them (`repro compare` sets those side by side)."""
    if isinstance(value, str):
        return {value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(measured_texts(getattr(value, f.name))
                             for f in dataclasses.fields(value)
                             if f.name not in SELECTING_FIELDS))
    if isinstance(value, (tuple, list, frozenset, set)):
        return set().union(*(measured_texts(v) for v in value))
    return set()


class Check(ABC):
    """What a claim tests on the rows (analysis/claims/checks.py holds the shared ones)."""

    kind: str  # NUMBER, ORDERING or SHAPE

    @abstractmethod
    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        """PASS/FAIL with our value, or NOT RUN with why."""

    def tolerance_text(self) -> str:
        """How far ours may be from the paper, in words, for the claims table."""
        return "none (strict)"


@dataclass(frozen=True)
class Tolerance:
    """How far ours may be from the paper's value. The widest of the given bounds
    applies: `relative` (a fraction of the paper's value), `absolute` (in the
    claim's unit), `factor` (ours within paper/factor .. paper*factor)."""

    reason: str
    relative: float | None = None
    absolute: float | None = None
    factor: float | None = None

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise ClaimDeclarationError("a tolerance needs its reason, written before the data")
        if self.relative is None and self.absolute is None and self.factor is None:
            raise ClaimDeclarationError("a tolerance needs relative, absolute or factor")
        if self.factor is not None and self.factor < 1:
            raise ClaimDeclarationError(f"a factor tolerance is 1 or more, not {self.factor}")

    def bounds(self, paper: float) -> tuple[float, float]:
        lo, hi = paper, paper
        if self.relative is not None:
            spread = abs(paper) * self.relative
            lo, hi = min(lo, paper - spread), max(hi, paper + spread)
        if self.absolute is not None:
            lo, hi = min(lo, paper - self.absolute), max(hi, paper + self.absolute)
        if self.factor is not None:
            lo, hi = min(lo, paper / self.factor), max(hi, paper * self.factor)
        return lo, hi

    def text(self, unit: str = "") -> str:
        parts = []
        if self.relative is not None:
            parts.append(f"±{self.relative * 100:g}%")
        if self.absolute is not None:
            parts.append(f"±{self.absolute:g}{unit}")
        if self.factor is not None:
            parts.append(f"within a factor of {self.factor:g}")
        return " or ".join(parts) + (" (the wider)" if len(parts) > 1 else "")


# --------------------------------------------------------------------- claims


@dataclass(frozen=True)
class Cause:
    """A docs section where an experiment isolates the cause of a claim's failure, and the
    failing cells it covers (a row filter; empty: every failure of the claim)."""

    section: str
    where: Where = ()


@dataclass(frozen=True)
class Claim:
    """One claim of a paper (or of a reference measurement), with its check."""

    id: str
    text: str
    source: str
    paper: str  # the paper's value as it states it
    check: Check
    mode: str  # QUICK, FULL or BOTH: which runs the claim holds for
    reason: str  # why the tolerance / slack is what it is, fixed before the data
    # Where experiments that isolate the causes of this claim's failures are written up:
    # added to a FAIL's why, for the failing cells each covers, so claims.md points to them.
    # The verdict is the check's alone.
    causes: tuple[Cause, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ClaimDeclarationError(f"claim {self.id}: mode {self.mode!r} is not one of "
                                        f"{', '.join(MODES)}")
        if not self.reason.strip():
            raise ClaimDeclarationError(f"claim {self.id}: give the reason for its tolerance")

    @property
    def kind(self) -> str:
        return self.check.kind

    def tolerance_text(self) -> str:
        return self.check.tolerance_text()


@dataclass(frozen=True)
class ClaimResult:
    id: str
    text: str
    source: str
    kind: str
    mode: str
    paper: str
    ours: str
    tolerance: str
    reason: str
    verdict: str
    why: str
    runs: tuple[str, ...]  # the run folders that back it
    late_runs: int  # of those, runs whose emulator was late
    host_late_runs: int = 0  # of those, runs whose end hosts were late

    def runs_text(self) -> str:
        """'12', or '12 (2 late, 3 hosts late)': how many runs, and how many were late."""
        notes = [f"{self.late_runs} late"] if self.late_runs else []
        notes += [f"{self.host_late_runs} hosts late"] if self.host_late_runs else []
        return f"{len(self.runs)}" + (f" ({', '.join(notes)})" if notes else "")

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["runs"] = list(self.runs)
        d["run_count"] = len(self.runs)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ClaimResult":
        values = {k: d.get(k, "") for k in cls.__dataclass_fields__}
        values["runs"] = tuple(d.get("runs") or ())
        values["late_runs"] = int(d.get("late_runs") or 0)
        values["host_late_runs"] = int(d.get("host_late_runs") or 0)
        return cls(**values)


def _applies(claim: Claim, mode: str) -> bool:
    return claim.mode == BOTH or claim.mode == mode


def evaluate(claim: Claim, rows: Sequence[Row], mode: str, experiment: str = "",
             host_late: frozenset[str] = frozenset()) -> ClaimResult:
    """One claim on the rows of the runs on record, which were run in `mode`; `host_late`
    names the runs whose end hosts were late."""
    if not _applies(claim, mode):
        if claim.mode == FULL:
            why = "a full-run claim; the runs on record are the quick pass" + (
                f" (./repro run {experiment})" if experiment else "")
        else:
            why = "a quick-pass claim; the runs on record are the full run"
        outcome = Outcome(NOT_RUN, "-", (), why)
    elif not rows:
        outcome = Outcome(NOT_RUN, "-", (), "no finished runs")
    else:
        outcome = claim.check.evaluate(rows)
    why = outcome.why
    cause = _cause(claim, outcome)
    if cause:
        why = f"{why}. {cause[0].upper()}{cause[1:]}" if why else cause
    runs = tuple(sorted(set().union(*(row_runs(r) for r in outcome.rows))))
    late = late_run_count(outcome.rows)
    return ClaimResult(id=claim.id, text=claim.text, source=claim.source, kind=claim.kind,
                       mode=claim.mode, paper=claim.paper, ours=outcome.ours,
                       tolerance=claim.tolerance_text(), reason=claim.reason,
                       verdict=outcome.verdict, why=why, runs=runs, late_runs=late,
                       host_late_runs=len(host_late.intersection(runs)))


def _cause(claim: Claim, outcome: Outcome) -> str:
    """What a FAIL's why says of its measured causes: each write-up that covers a failing
    cell ("where ..." when it covers only some), and that no cause is measured for a failing
    cell none covers (a study of one link says nothing of another's failure). A check that
    judges its rows as a whole has no failing cells: every write-up applies."""
    if outcome.verdict != FAIL or not claim.causes:
        return ""
    failed = outcome.failed_rows
    cited: list[str] = []
    covered: set[int] = set()
    for cause in claim.causes:
        hits = {i for i, row in enumerate(failed) if matches(row, cause.where)}
        if failed and not hits:
            continue
        covered |= hits
        scope = "" if len(hits) == len(failed) else f" where {_describe(cause.where)}"
        cited.append(f"the cause{scope}, measured: {cause.section}")
    if not cited:
        scopes = "; ".join(_describe(c.where) for c in claim.causes)
        return f"no cause measured for this failure (the ones on record cover {scopes} only)"
    rest = "; no cause measured for the other failures" if len(covered) < len(failed) else ""
    return "; ".join(cited) + rest


def _describe(conditions: Where) -> str:
    return ", ".join(f"{k}={v}" for k, v in conditions) or "every failure"


def evaluate_all(claims: Sequence[Claim], rows: Sequence[Row], mode: str,
                 experiment: str = "",
                 host_late: frozenset[str] = frozenset()) -> list[ClaimResult]:
    ids = [c.id for c in claims]
    if len(ids) != len(set(ids)):
        raise ClaimDeclarationError(f"{experiment}: claim ids repeat: {ids}")
    return [evaluate(c, rows, mode, experiment, host_late) for c in claims]


@dataclass(frozen=True)
class ClaimReport:
    """Every claim of one experiment on the runs on record (claims.json holds its dict;
    analysis/claims/report.py writes it and claims.md)."""

    experiment: str
    mode: str  # the mode of the runs on record
    results: tuple[ClaimResult, ...]

    def counts(self) -> dict[str, int]:
        return {v: sum(r.verdict == v for r in self.results) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {"format": CLAIMS_FORMAT, "experiment": self.experiment, "mode": self.mode,
                "counts": self.counts(), "claims": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ClaimReport":
        return cls(str(d.get("experiment", "")), str(d.get("mode", "")),
                   tuple(ClaimResult.from_dict(c) for c in d.get("claims") or ()))
