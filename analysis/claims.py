"""A paper's claims as data, checked against an experiment's summary rows.

Each experiment declares its claims next to its matrix (a tuple of `Claim`);
this module evaluates them on the experiment's rows (one dict per finished
run, the columns of its summary.csv) and writes claims.json and claims.md.

A claim is one of three kinds, named by the check it carries:

- number: a measured value (`ColumnMean`, `MeanOfRatios`, `RatioOfMeans`,
  `MeanOfDifferences`)
  against the paper's value, with a tolerance fixed, with its reason, before
  any data was seen;
- ordering: `LowestPerGroup` (on each link the subject is the lowest, or
  within a slack of the lowest), `HighestPerGroup` (on each board the subject
  is at or above every other run), `Below` (one setting's column below
  another's), `NeverDominates`, `EveryGroup` (in every cell of a matrix, the
  medians over its trials stand in a relation: two columns, a column and a
  constant, or one column in two settings of the same cell), `OnFrontier` (a
  protocol on the population's throughput-delay frontier), `RankChanges` (an
  order by a column not kept from one setting to another);
- shape: `Monotone` (a column rises or falls with another, within each group),
  `Saturation`.

Verdicts: PASS, FAIL, NOT RUN (the runs it needs are not on record, or the
claim holds for another mode than the one run; the result says why). A claim
is never evaluated on a run it does not name: the rows it used are counted
("runs") and listed, with how many of them had a late emulator and how many had late end
hosts (analysis/host_timing.py: the experiment passes the names of those runs).
"""
from __future__ import annotations

import math
import statistics
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from analysis.frontier import RegionPoint, position
from core.results import write_json

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
VERDICTS = (PASS, FAIL, NOT_RUN)
QUICK, FULL, BOTH = "quick", "full", "both"
MODES = (QUICK, FULL, BOTH)
NUMBER, ORDERING, SHAPE = "number", "ordering", "shape"
CLAIMS_FORMAT = 1

Row = Mapping[str, Any]


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


Where = tuple[tuple[str, Any], ...]


class ClaimDeclarationError(ValueError):
    """A claim declared wrongly (an unknown mode, a tolerance without a reason...)."""


@dataclass(frozen=True)
class OneOf:
    """A filter value that matches any of `values` (`where(recovery=OneOf(("a", "b")))`)."""

    values: tuple[Any, ...]

    def __str__(self) -> str:
        return "|".join(str(v) for v in self.values)


def where(**conditions: Any) -> Where:
    """Row filter as sorted (column, value) pairs, so a check stays a frozen value."""
    return tuple(sorted(conditions.items()))


def _matches(row: Row, conditions: Where) -> bool:
    return all(row.get(k) in v.values if isinstance(v, OneOf) else row.get(k) == v
               for k, v in conditions)


def _select(rows: Iterable[Row], conditions: Where) -> list[Row]:
    return [row for row in rows if _matches(row, conditions)]


def _number(value: Any) -> float | None:
    """A finite float from a row cell, or None (blank, None, NaN, text)."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _value(row: Row, column: str) -> float:
    """The number in `column` of a row already kept for having one (see _number)."""
    number = _number(row[column])
    if number is None:
        raise ValueError(f"{column} is not a finite number in {dict(row)}")
    return number


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    size = abs(value)
    digits = 3 if size < 1 else 2 if size < 10 else 1 if size < 100 else 0
    return f"{value:.{digits}f}{unit}"


@dataclass(frozen=True)
class Outcome:
    """What a check found: a verdict, our value as text, and the rows it used."""

    verdict: str
    ours: str
    rows: tuple[Row, ...] = ()
    why: str = ""
    value: float | None = None


# --------------------------------------------------------------------- tolerances


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


# --------------------------------------------------------------------- number measures


class Measure(ABC):
    """A number computed from the rows (None with the reason when it cannot be)."""

    unit: str = ""

    @abstractmethod
    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        """(value, rows used, why there is no value)."""


@dataclass(frozen=True)
class ColumnMean(Measure):
    """The mean of `column` over the rows matching `where` (one per trial)."""

    column: str
    where: Where = ()
    unit: str = ""

    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        used = [r for r in _select(rows, self.where) if _number(r.get(self.column)) is not None]
        if not used:
            what = " ".join(f"{k}={v}" for k, v in self.where) or "any run"
            return None, (), f"no finished run with {what}"
        return statistics.fmean(_value(r, self.column) for r in used), tuple(used), ""


@dataclass(frozen=True)
class _PerGroup:
    """Shared by the ratio measures: the mean of `column` per (group, scheme)."""

    column: str
    numerator: str  # a value of `scheme_column`
    denominator: str
    group_by: tuple[str, ...]
    scheme_column: str = "scheme"
    floor: float | None = None  # each value at least this (a log's resolution)
    where: Where = ()  # only the rows matching this (e.g. one trace)

    def pairs(self, rows: Sequence[Row]) -> tuple[list[tuple[float, float]], tuple[Row, ...], str]:
        """(numerator, denominator) per group where both have runs; the rows used."""
        groups: dict[tuple, dict[str | None, list[Row]]] = {}
        for row in _select(rows, self.where):
            if _number(row.get(self.column)) is None:
                continue
            key = tuple(row.get(g) for g in self.group_by)
            groups.setdefault(key, {}).setdefault(row.get(self.scheme_column), []).append(row)
        pairs, used = [], []
        for by_scheme in groups.values():
            num, den = by_scheme.get(self.numerator), by_scheme.get(self.denominator)
            if not num or not den:
                continue
            pairs.append((self._mean(num), self._mean(den)))
            used += [*num, *den]
        if not pairs:
            have = {s for g in groups.values() for s in g}
            absent = [s for s in (self.numerator, self.denominator) if s not in have]
            why = (f"no finished run of {', '.join(absent)}" if absent else
                   f"{self.numerator} and {self.denominator} share no "
                   f"{'/'.join(self.group_by)}")
            return [], (), why
        return pairs, tuple(used), ""

    def _mean(self, rows: list[Row]) -> float:
        value = statistics.fmean(_value(r, self.column) for r in rows)
        return max(value, self.floor) if self.floor is not None else value


@dataclass(frozen=True)
class MeanOfRatios(_PerGroup, Measure):
    """Mean over groups (links) of numerator/denominator: the paper's speed-up."""

    unit: str = "x"

    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        pairs, used, why = self.pairs(rows)
        if not pairs:
            return None, (), why
        if any(d <= 0 for _, d in pairs):
            return None, used, f"{self.denominator}'s {self.column} is 0 on some link"
        return statistics.fmean(n / d for n, d in pairs), used, ""


@dataclass(frozen=True)
class RatioOfMeans(_PerGroup, Measure):
    """(mean over groups of numerator) / (mean of denominator): the paper's delay reduction."""

    unit: str = "x"

    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        pairs, used, why = self.pairs(rows)
        if not pairs:
            return None, (), why
        den = statistics.fmean(d for _, d in pairs)
        if den <= 0:
            return None, used, f"{self.denominator}'s mean {self.column} is not positive"
        return statistics.fmean(n for n, _ in pairs) / den, used, ""


@dataclass(frozen=True)
class MeanOfDifferences(_PerGroup, Measure):
    """Mean over groups of numerator - denominator (for log-scale columns such as the
    contest's score, where a difference is a ratio of the underlying quantities)."""

    unit: str = ""

    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        pairs, used, why = self.pairs(rows)
        if not pairs:
            return None, (), why
        return statistics.fmean(n - d for n, d in pairs), used, ""


# --------------------------------------------------------------------- checks


class Check(ABC):
    kind: str

    @abstractmethod
    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        """PASS/FAIL with our value, or NOT RUN with why."""

    def own_tolerance_text(self) -> str | None:
        """A check that states its tolerance in its own words (None: the claim says it)."""
        return None


@dataclass(frozen=True)
class NumberCheck(Check):
    """Our `measure` within `tolerance` of the paper's `paper` value."""

    measure: Measure
    paper: float
    tolerance: Tolerance
    kind: str = field(default=NUMBER, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        value, used, why = self.measure.measure(rows)
        if value is None:
            return Outcome(NOT_RUN, "-", used, why)
        lo, hi = self.tolerance.bounds(self.paper)
        unit = self.measure.unit
        ok = lo <= value <= hi
        why = "" if ok else f"outside {_fmt(lo, unit)}..{_fmt(hi, unit)}"
        return Outcome(PASS if ok else FAIL, _fmt(value, unit), used, why, value)


@dataclass(frozen=True)
class LowestPerGroup(Check):
    """In each group (a link), `subject`'s `column` is the lowest among `among`
    (plus `optional` schemes where they ran), or within `slack` of the lowest."""

    subject: str
    among: tuple[str, ...]
    column: str
    group_by: tuple[str, ...]
    slack: float  # 0.2: at most 20% above the lowest
    optional: tuple[str, ...] = ()
    scheme_column: str = "scheme"
    floor: float | None = None  # each mean at least this (a log's resolution)
    kind: str = field(default=ORDERING, init=False)

    def _mean(self, rows: list[Row]) -> float:
        value = statistics.fmean(_value(r, self.column) for r in rows)
        return max(value, self.floor) if self.floor is not None else value

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        wanted = {self.subject, *self.among, *self.optional}
        groups: dict[tuple, dict[str, list[Row]]] = {}
        for row in rows:
            scheme = row.get(self.scheme_column)
            if scheme in wanted and _number(row.get(self.column)) is not None:
                key = tuple(row.get(g) for g in self.group_by)
                groups.setdefault(key, {}).setdefault(scheme, []).append(row)
        required = (self.subject, *self.among)
        seen = {s for g in groups.values() for s in g}
        absent = [s for s in required if s not in seen]
        if absent:
            return Outcome(NOT_RUN, "-", (), f"no finished run of {', '.join(absent)}")
        complete, partial, used, failures = 0, [], [], []
        for key, by_scheme in sorted(groups.items(), key=lambda kv: str(kv[0])):
            name = " ".join(str(k) for k in key)
            lacking = [s for s in required if s not in by_scheme]
            if lacking:
                partial.append(f"{name} (no {', '.join(lacking)})")
                continue
            complete += 1
            means = {s: self._mean(rs) for s, rs in by_scheme.items()}
            used += [r for rs in by_scheme.values() for r in rs]
            best = min(means, key=lambda s: means[s])
            mine = means[self.subject]
            if mine > max(means[best], 0.0) * (1 + self.slack) and best != self.subject:
                failures.append(f"{name}: {self.subject} {_fmt(mine)}, {best} {_fmt(means[best])}")
        if not complete:
            return Outcome(NOT_RUN, "-", (), "no link has a run of every scheme: "
                           + "; ".join(partial))
        ours = f"holds on {complete - len(failures)} of {complete} links"
        notes = []
        if failures:
            notes.append("fails on " + "; ".join(failures))
        if partial:
            notes.append("left out: " + "; ".join(partial))
        return Outcome(FAIL if failures else PASS, ours, tuple(used), ". ".join(notes),
                       float(complete - len(failures)))


@dataclass(frozen=True)
class Below(Check):
    """The mean `column` of the rows matching `lower` is below that of `upper`."""

    lower: Where
    upper: Where
    column: str
    kind: str = field(default=ORDERING, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        a, used_a, why_a = ColumnMean(self.column, self.lower).measure(rows)
        b, used_b, why_b = ColumnMean(self.column, self.upper).measure(rows)
        if a is None or b is None:
            return Outcome(NOT_RUN, "-", (), why_a or why_b)
        return Outcome(PASS if a < b else FAIL, f"{_fmt(a)} vs {_fmt(b)}", used_a + used_b)


@dataclass(frozen=True)
class NeverDominates(Check):
    """No row matching `subject` has both `more` at least and `less` at most the
    mean of the rows matching `reference` (e.g. more throughput and less delay)."""

    subject: Where
    reference: Where
    more: str  # higher is better (throughput)
    less: str  # lower is better (delay)
    kind: str = field(default=ORDERING, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        ref_more, ref_rows, why = ColumnMean(self.more, self.reference).measure(rows)
        ref_less, _, why2 = ColumnMean(self.less, self.reference).measure(rows)
        subject = [r for r in _select(rows, self.subject)
                   if _number(r.get(self.more)) is not None
                   and _number(r.get(self.less)) is not None]
        if ref_more is None or ref_less is None:
            return Outcome(NOT_RUN, "-", (), why or why2)
        if not subject:
            return Outcome(NOT_RUN, "-", (), "no finished run of the subject")
        both = [r for r in subject if _value(r, self.more) >= ref_more
                and _value(r, self.less) <= ref_less]
        ours = f"{len(both)} of {len(subject)} settings do both"
        why = "; ".join(f"{r.get('run', '?')}: {_fmt(_number(r[self.more]))} / "
                        f"{_fmt(_number(r[self.less]))}" for r in both)
        return Outcome(FAIL if both else PASS, ours, tuple(subject) + ref_rows, why)


@dataclass(frozen=True)
class Slack:
    """How much a rising series may dip from one point to the next: the wider of
    a fraction of the previous value and an absolute amount. With `of_lower_value`
    the fraction is of the value it dips to (a dip of 10% of the lower value is a
    rise of 10% over it, read the other way)."""

    relative: float = 0.0
    absolute: float = 0.0
    unit: str = ""
    of_lower_value: bool = False

    def allows(self, previous: float, current: float) -> bool:
        base = current if self.of_lower_value else previous
        return current >= previous - max(abs(base) * self.relative, self.absolute)

    def text(self) -> str:
        parts = [f"{self.relative * 100:g}%"
                 + (" of the lower value" if self.of_lower_value else "")] \
            if self.relative else []
        parts += [f"{self.absolute:g}{self.unit}"] if self.absolute else []
        return " or ".join(parts) or "none"


@dataclass(frozen=True)
class Monotone(Check):
    """`y` does not fall as `x` rises (each point at least the previous minus the slack),
    over the rows matching `where`, averaged per x; needs at least `min_points`. With
    `falling`, `y` does not rise as `x` rises (read from the highest x down, it does not
    fall). With `group_by`, the series is each group's own (e.g. one per value of another
    parameter): a group with fewer than `min_points` values of x is left out, and every
    other must hold."""

    x: str
    y: str
    slack: Slack
    where: Where = ()
    min_points: int = 3
    falling: bool = False
    group_by: tuple[str, ...] = ()
    kind: str = field(default=SHAPE, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        groups: dict[tuple, dict[float, list[Row]]] = {}
        for row in _select(rows, self.where):
            x, y = _number(row.get(self.x)), _number(row.get(self.y))
            if x is not None and y is not None:
                key = tuple(row.get(g) for g in self.group_by)
                groups.setdefault(key, {}).setdefault(x, []).append(row)
        if not self.group_by:
            by_x = groups.get((), {})
            if len(by_x) < self.min_points:
                return Outcome(NOT_RUN, "-", (), f"{len(by_x)} values of {self.x} finished, "
                               f"the shape needs {self.min_points}")
            series, dips = self._series(by_x, "")
            ours = (f"{len(series)} points, {_fmt(series[0][1])} .. {_fmt(series[-1][1])}"
                    + (f", {len(dips)} dip(s)" if dips else ", no dip"))
            return Outcome(FAIL if dips else PASS, ours,
                           tuple(r for rs in by_x.values() for r in rs), "; ".join(dips))
        counted: list[tuple[str, dict[float, list[Row]]]] = []
        short: list[tuple[str, dict[float, list[Row]]]] = []
        for key, by_x in sorted(groups.items(), key=lambda kv: str(kv[0])):
            name = " ".join(f"{g}={v}" for g, v in zip(self.group_by, key))
            (counted if len(by_x) >= self.min_points else short).append((name, by_x))
        if not counted:
            return Outcome(NOT_RUN, "-", (), f"no {'/'.join(self.group_by)} has "
                           f"{self.min_points} values of {self.x} finished")
        failures: list[str] = []
        used: list[Row] = []
        for name, by_x in counted:
            failures += self._series(by_x, f"{name}: ")[1]
            used += [r for rs in by_x.values() for r in rs]
        ours = f"{len(counted)} groups" + (f", {len(failures)} dip(s)" if failures
                                           else ", no dip")
        notes = ([f"fails on {'; '.join(failures)}"] if failures else []) + \
            ([f"left out: {'; '.join(n for n, _ in short)}"] if short else [])
        return Outcome(FAIL if failures else PASS, ours, tuple(used), ". ".join(notes))

    def _series(self, by_x: Mapping[float, list[Row]], prefix: str
                ) -> tuple[list[tuple[float, float]], list[str]]:
        """The mean of y per x in reading order, and its dips beyond the slack."""
        series = [(x, statistics.fmean(_value(r, self.y) for r in rs))
                  for x, rs in sorted(by_x.items(), reverse=self.falling)]
        dips = [f"{prefix}{self.y} {_fmt(b)} at {self.x}={x1:g} after {_fmt(a)} at {x0:g}"
                for (x0, a), (x1, b) in zip(series, series[1:]) if not self.slack.allows(a, b)]
        return series, dips


@dataclass(frozen=True)
class Saturation(Check):
    """Every run whose window is at least `bdp_multiple` delay-bandwidth products
    reaches `at_least` of the capacity. The BDP is each run's own mean capacity
    (`capacity_mbps`) times `rtt_ms`, in packets of `packet_bytes`."""

    window: str
    utilization: str
    at_least: float
    bdp_multiple: float
    rtt_ms: float
    packet_bytes: int
    capacity: str = "capacity_mbps"
    kind: str = field(default=SHAPE, init=False)

    def bdp_packets(self, row: Row) -> float | None:
        capacity = _number(row.get(self.capacity))
        if capacity is None:
            return None
        return capacity * 1e6 * self.rtt_ms / 1000.0 / (8 * self.packet_bytes)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        large = []
        for row in rows:
            window, bdp = _number(row.get(self.window)), self.bdp_packets(row)
            if window is not None and bdp is not None and _number(row.get(self.utilization)) \
                    is not None and window >= self.bdp_multiple * bdp:
                large.append(row)
        if not large:
            return Outcome(NOT_RUN, "-", (), f"no finished run with a window of "
                           f"{self.bdp_multiple:g} BDPs or more")
        low = [r for r in large if _value(r, self.utilization) < self.at_least]
        worst = min(_value(r, self.utilization) for r in large)
        ours = f"lowest {worst * 100:.1f}% over {len(large)} runs"
        why = "; ".join(f"{self.window}={r.get(self.window)}: "
                        f"{_value(r, self.utilization) * 100:.1f}%" for r in low)
        return Outcome(FAIL if low else PASS, ours, tuple(large), why)


@dataclass(frozen=True)
class HighestPerGroup(Check):
    """In each group (a board, a trace), `subject`'s mean `column` is at or above every
    run of every other scheme there, less `slack` (in the column's unit)."""

    subject: str
    column: str
    group_by: tuple[str, ...]
    slack: float = 0.0
    scheme_column: str = "scheme"
    kind: str = field(default=ORDERING, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        groups: dict[tuple, dict[str, list[tuple[float, Row]]]] = {}
        for row in rows:
            value = _number(row.get(self.column))
            if value is not None:
                key = tuple(row.get(g) for g in self.group_by)
                scheme = str(row.get(self.scheme_column))
                groups.setdefault(key, {}).setdefault(scheme, []).append((value, row))
        complete, partial, used, failures = 0, [], [], []
        for key, by_scheme in sorted(groups.items(), key=lambda kv: str(kv[0])):
            name = " ".join(str(k) for k in key)
            others = {s: vs for s, vs in by_scheme.items() if s != self.subject}
            if self.subject not in by_scheme or not others:
                partial.append(f"{name} (no {self.subject if others else 'other scheme'})")
                continue
            complete += 1
            ours = statistics.fmean(v for v, _ in by_scheme[self.subject])
            used += [r for vs in by_scheme.values() for _, r in vs]
            above = [(s, v) for s, vs in others.items() for v, _ in vs if v > ours + self.slack]
            if above:
                scheme, value = max(above, key=lambda sv: sv[1])
                failures.append(f"{name}: {self.subject} {_fmt(ours)}, {scheme} {_fmt(value)}")
        if not complete:
            return Outcome(NOT_RUN, "-", (), f"no {'/'.join(self.group_by)} has both "
                           f"{self.subject} and another scheme: " + "; ".join(partial))
        notes = (["fails on " + "; ".join(failures)] if failures else []) + \
            (["left out: " + "; ".join(partial)] if partial else [])
        return Outcome(FAIL if failures else PASS,
                       f"holds on {complete - len(failures)} of {complete}", tuple(used),
                       ". ".join(notes), float(complete - len(failures)))


@dataclass(frozen=True)
class OnFrontier(Check):
    """The row whose `name_column` is `subject` is a vertex of the population's frontier
    (analysis/frontier.py: the upper-left convex hull of throughput against log delay), or
    its throughput falls short of the frontier's at its delay by at most `max_shortfall`."""

    subject: str
    max_shortfall: float
    name_column: str = "name"
    delay: str = "p95_e2e_delay_ms"
    throughput: str = "throughput_mbps"
    kind: str = field(default=ORDERING, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        used = [r for r in rows if (d := _number(r.get(self.delay))) is not None and d > 0
                and _number(r.get(self.throughput)) is not None]
        points = [RegionPoint(str(r[self.name_column]), _value(r, self.delay),
                              _value(r, self.throughput)) for r in used]
        if not any(p.name == self.subject for p in points):
            return Outcome(NOT_RUN, "-", (), f"no finished run of {self.subject}")
        pos = position(points, self.subject)
        where = ("a vertex of the frontier" if pos.vertex else
                 f"{pos.shortfall * 100:.1f}% below the frontier"
                 + ("" if pos.efficient else ", dominated"))
        ours = f"{where} (population {len(points)})"
        ok = pos.vertex or pos.shortfall <= self.max_shortfall
        return Outcome(PASS if ok else FAIL, ours, tuple(used), "" if ok else ours)

    def own_tolerance_text(self) -> str:
        return (f"a vertex of the convex frontier, or at most {self.max_shortfall * 100:g}% "
                f"below the frontier's {self.throughput} at its {self.delay}")


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    def ranks(values: Sequence[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2.0
            i = j + 1
        return out
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return cov / den if den else 1.0


@dataclass(frozen=True)
class RankChanges(Check):
    """The rows' order by `column` in one setting is not kept in another: Spearman's rho
    between `<before>_<column>` and `<after>_<column>` (e.g. train_score and test_score, one
    row per protocol) is below `max_rho`, over at least `min_protocols` rows with both."""

    column: str
    max_rho: float
    min_protocols: int = 5
    before: str = "train"
    after: str = "test"
    kind: str = field(default=ORDERING, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        first, second = f"{self.before}_{self.column}", f"{self.after}_{self.column}"
        used = [r for r in rows if _number(r.get(first)) is not None
                and _number(r.get(second)) is not None]
        if len(used) < self.min_protocols:
            return Outcome(NOT_RUN, "-", (), f"{len(used)} protocols on both traces, "
                           f"{self.min_protocols} needed")
        rho = spearman([_value(r, first) for r in used], [_value(r, second) for r in used])
        ours = f"Spearman rho {rho:.2f} over {len(used)} protocols"
        ok = rho < self.max_rho
        return Outcome(PASS if ok else FAIL, ours, tuple(used), "" if ok else ours, rho)

    def own_tolerance_text(self) -> str:
        return (f"Spearman's rho between {self.before} and {self.after} {self.column} below "
                f"{self.max_rho:g} (at least {self.min_protocols} protocols)")


RELATIONS = ("<=", "<", ">=", ">", "~")


@dataclass(frozen=True)
class Pair:
    """Two settings of one cell: rows whose `column` is `subject` against those whose
    `column` is `against` (e.g. recovery=rfc3517 against recovery=prr-kernel)."""

    column: str
    subject: Any
    against: Any


@dataclass(frozen=True)
class EveryGroup(Check):
    """In every group of the rows matching `where` (a cell of the matrix, grouped by
    `group_by`; its rows are the cell's trials), the medians over the group's rows
    stand in a relation:

        median(left) OP scale x median(right) + slack       (OP one of <=, <, >=, >)
        |median(left) - scale x median(right)| <= slack      (OP "~")

    `right` is a column or a constant. With `pair`, left is taken from the cell's
    `pair.subject` rows and right from its `pair.against` rows (`group_by` then leaves
    `pair.column` out). `scale_by` gives the scale per value of a column (groups with
    another value are left out); `positive` names columns whose median must be above 0
    on every side for a group to count (otherwise there is nothing to compare); with
    `strictly_once`, ">=" must also hold as ">" in at least one group. A group whose
    values are missing does not count; none counting is NOT RUN."""

    left: str
    op: str
    right: str | float
    group_by: tuple[str, ...]
    where: Where = ()
    pair: Pair | None = None
    scale: float = 1.0
    scale_by: tuple[str, tuple[tuple[Any, float], ...]] | None = None
    slack: float = 0.0
    positive: tuple[str, ...] = ()
    strictly_once: bool = False
    kind: str = field(default=ORDERING, init=False)

    def __post_init__(self) -> None:
        if self.op not in RELATIONS:
            raise ClaimDeclarationError(f"relation {self.op!r} is not one of {RELATIONS}")
        if self.strictly_once and self.op != ">=":
            raise ClaimDeclarationError("strictly_once goes with >=")

    @staticmethod
    def _median(rows: Sequence[Row], column: str) -> float | None:
        values = [v for v in (_number(r.get(column)) for r in rows) if v is not None]
        return statistics.median(values) if values else None

    def _scale(self, members: Sequence[Row]) -> float | None:
        """The scale for this group (None: its rows disagree on the column, or the
        value has no factor declared)."""
        if self.scale_by is None:
            return self.scale
        column, factors = self.scale_by
        values = {row.get(column) for row in members}
        return dict(factors).get(values.pop()) if len(values) == 1 else None

    def _holds(self, a: float, b: float) -> bool:
        if self.op == "~":
            return abs(a - b) <= self.slack
        b += self.slack
        return {"<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b}[self.op]

    def describe(self) -> str:
        right = self.right if isinstance(self.right, str) else f"{self.right:g}"
        if self.pair is not None:
            left = f"{self.left}[{self.pair.subject}]"
            right = f"{right}[{self.pair.against}]"
        else:
            left = self.left
        if self.scale_by is not None:
            factors = ", ".join(f"{v}: {f:.2f}" for v, f in self.scale_by[1])
            right = f"beta x {right} (beta by {self.scale_by[0]}: {factors})"
        elif self.scale != 1:
            right = f"{self.scale:g} x {right}"
        if self.op == "~":
            text = f"|{left} - {right}| <= {self.slack:g}"
        else:
            sign = ("" if not self.slack else
                    f" {'+' if self.slack > 0 else '-'} {abs(self.slack):g}")
            text = f"{left} {self.op} {right}{sign}"
        text += " in every cell (medians over trials)" if self.group_by else " (medians)"
        if self.strictly_once:
            text += ", and > in at least one"
        return text

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        groups: dict[tuple, list[Row]] = {}
        for row in _select(rows, self.where):
            groups.setdefault(tuple(row.get(g) for g in self.group_by), []).append(row)
        counted, used, failures, strict = 0, [], [], False
        for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
            if self.pair is None:
                sides = (members, members)
            else:
                sides = (_select(members, where(**{self.pair.column: self.pair.subject})),
                         _select(members, where(**{self.pair.column: self.pair.against})))
            if not sides[0] or not sides[1]:
                continue
            if any(not ((self._median(side, c) or 0) > 0) for c in self.positive
                   for side in sides):
                continue
            scale = self._scale(members)
            a = self._median(sides[0], self.left)
            b = (self._median(sides[1], self.right) if isinstance(self.right, str)
                 else float(self.right))
            if a is None or b is None or scale is None:
                continue
            counted += 1
            used += list(sides[0]) + [r for r in sides[1] if r not in sides[0]]
            ok = self._holds(a, scale * b)
            strict = strict or a > scale * b
            compared = f"{_fmt(a)} vs {_fmt(b)}" + (f" x {scale:.2f}" if scale != 1 else "")
            if not ok:
                name = " ".join(str(k) for k in key) or "all runs"
                failures.append(f"{name}: {compared}")
        if not counted:
            what = " ".join(f"{k}={v}" for k, v in self.where) or "any run"
            return Outcome(NOT_RUN, "-", (), f"no cell with {what} has the values it needs"
                           + (f" ({self.pair.subject} and {self.pair.against} both run)"
                              if self.pair else ""))
        # One group (no group_by): its two values say more than a count.
        ours = (compared if not self.group_by else
                f"holds in {counted - len(failures)} of {counted} cells")
        if failures:
            return Outcome(FAIL, ours, tuple(used), "fails in " + "; ".join(failures))
        if self.strictly_once and not strict:
            return Outcome(FAIL, ours + ", never >", tuple(used),
                           f"{self.left} is never above in any cell")
        return Outcome(PASS, ours, tuple(used))


# --------------------------------------------------------------------- claims


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
    # Where a failure of this claim is explained (a section of the docs); said after FAIL.
    explained: str = ""

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
        check = self.check
        own = check.own_tolerance_text()
        if own is not None:
            return own
        if isinstance(check, NumberCheck):
            return check.tolerance.text(check.measure.unit)
        if isinstance(check, LowestPerGroup):
            return f"within {check.slack * 100:g}% of the lowest"
        if isinstance(check, Monotone):
            return (f"a dip of {check.slack.text()} between neighbours"
                    + (f", read from the highest {check.x} down" if check.falling else "")
                    + (f", within each {'/'.join(check.group_by)}" if check.group_by else ""))
        if isinstance(check, HighestPerGroup):
            return (f"at or above every other run, less {check.slack:g}" if check.slack
                    else "at or above every other run (strict)")
        if isinstance(check, EveryGroup):
            return check.describe()
        if isinstance(check, Saturation):
            return (f"≥ {check.at_least * 100:g}% of capacity from "
                    f"{check.bdp_multiple:g} BDPs on")
        return "none (strict)"


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
    if outcome.verdict == FAIL and claim.explained:
        why = f"{why}; explained in {claim.explained}" if why else \
            f"explained in {claim.explained}"
    runs = tuple(sorted(set().union(*(row_runs(r) for r in outcome.rows))))
    late = late_run_count(outcome.rows)
    return ClaimResult(id=claim.id, text=claim.text, source=claim.source, kind=claim.kind,
                       mode=claim.mode, paper=claim.paper, ours=outcome.ours,
                       tolerance=claim.tolerance_text(), reason=claim.reason,
                       verdict=outcome.verdict, why=why, runs=runs, late_runs=late,
                       host_late_runs=len(host_late.intersection(runs)))


def evaluate_all(claims: Sequence[Claim], rows: Sequence[Row], mode: str,
                 experiment: str = "",
                 host_late: frozenset[str] = frozenset()) -> list[ClaimResult]:
    ids = [c.id for c in claims]
    if len(ids) != len(set(ids)):
        raise ClaimDeclarationError(f"{experiment}: claim ids repeat: {ids}")
    return [evaluate(c, rows, mode, experiment, host_late) for c in claims]


# --------------------------------------------------------------------- reports


@dataclass(frozen=True)
class ClaimReport:
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


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_markdown(report: ClaimReport) -> str:
    counts = report.counts()
    lines = [f"# Claims: {report.experiment}", "",
             f"Runs on record: the {report.mode} mode. {counts[PASS]} pass, {counts[FAIL]} fail, "
             f"{counts[NOT_RUN]} not run.", "",
             "| claim | source | paper | ours | tolerance | verdict | runs |",
             "|---|---|---:|---:|---|---|---:|"]
    for r in report.results:
        verdict = r.verdict + (f": {r.why}" if r.why else "")
        runs = r.runs_text()
        lines.append(f"| **{_cell(r.id)}** {_cell(r.text)} | {_cell(r.source)} | "
                     f"{_cell(r.paper)} | {_cell(r.ours)} | {_cell(r.tolerance)} | "
                     f"{_cell(verdict)} | {runs} |")
    lines += ["", "Why each tolerance is what it is (fixed before any run):", ""]
    lines += [f"- **{r.id}** ({r.kind}, holds for: {r.mode}): {r.reason}" for r in report.results]
    return "\n".join(lines) + "\n"


def write_claims(report: ClaimReport, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "claims.json", out_dir / "claims.md"
    write_json(json_path, report.to_dict())
    md_path.write_text(claims_markdown(report))
    return [json_path, md_path]
