"""The checks claims share: what each tests on the rows, and its tolerance in words.

A claim is one of three kinds, named by the check it carries:

- number: `NumberCheck`, a measure (analysis/claims/measures.py) against the paper's
  value, with a tolerance fixed, with its reason, before any data was seen;
- ordering: `ExtremePerGroup` (in each group the subject is the lowest or the highest,
  against the other schemes' means within a relative slack, or against every run of
  every other scheme within an absolute one), `Below` (one setting's column below
  another's), `NeverDominates`, `EveryGroup` (in every cell of a matrix, the medians
  over its trials stand in a relation: two columns, a column and a constant, or one
  column in two settings of the same cell), `RankChanges` (an order by a column not
  kept from one setting to another);
- shape: `Monotone` (a column rises or falls with another, within each group).

A check bound to one paper's mechanism lives in that paper's claims.py (the contest's
`Saturation`, a window against the path's delay-bandwidth product, and `OnFrontier`,
the achievability region's frontier).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from analysis.claims.measures import ColumnMean, Measure
from analysis.claims.model import (FAIL, NOT_RUN, NUMBER, ORDERING, PASS, SHAPE, Check,
                                   ClaimDeclarationError, Outcome, Row, Tolerance, Where, fmt,
                                   select, to_number, value_of, where)


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
        why = "" if ok else f"outside {fmt(lo, unit)}..{fmt(hi, unit)}"
        return Outcome(PASS if ok else FAIL, fmt(value, unit), used, why, value)

    def tolerance_text(self) -> str:
        return self.tolerance.text(self.measure.unit)


LOWEST, HIGHEST = "lowest", "highest"
DIRECTIONS = (LOWEST, HIGHEST)
# What ExtremePerGroup compares the subject's mean with.
OTHER_MEANS = "other schemes' means"  # with a slack relative to the best mean
EVERY_RUN = "every run"  # of every other scheme, with a slack in the column's unit
AGAINST = (OTHER_MEANS, EVERY_RUN)


@dataclass(frozen=True)
class ExtremePerGroup(Check):
    """In each group (a link, a board), `subject`'s mean `column` is the `direction`
    (LOWEST or HIGHEST) there, compared `against`:

    - OTHER_MEANS: the other schemes' means; the subject may miss the best of them by
      `slack`, a fraction of it (0.2: at most 20% above the lowest, or below the
      highest; a negative best counts as 0, as for delays and throughputs);
    - EVERY_RUN: every run of every other scheme; the subject's mean may miss each by
      `slack`, in the column's unit.

    The other schemes are `among` (each needed in a group for it to count, and one never
    run makes the check NOT RUN, naming it) and the `optional` ones where they ran; with
    no `among`, every other scheme in the group, of which one is needed. A group lacking
    what it needs is left out, and said so; none left is NOT RUN. `floor` raises each
    number compared to a log's resolution; `group_name` ("link") names the groups in
    the result."""

    subject: str
    column: str
    group_by: tuple[str, ...]
    direction: str  # LOWEST or HIGHEST
    against: str  # OTHER_MEANS or EVERY_RUN
    slack: float = 0.0
    among: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    group_name: str = ""
    scheme_column: str = "scheme"
    floor: float | None = None
    kind: str = field(default=ORDERING, init=False)

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ClaimDeclarationError(f"direction {self.direction!r} is not one of "
                                        f"{', '.join(DIRECTIONS)}")
        if self.against not in AGAINST:
            raise ClaimDeclarationError(f"against {self.against!r} is not one of "
                                        f"{', '.join(AGAINST)}")
        if self.optional and not self.among:
            raise ClaimDeclarationError("optional schemes go with `among`; without it every "
                                        "other scheme counts")

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        wanted = {self.subject, *self.among, *self.optional}
        groups: dict[tuple, dict[str, list[Row]]] = {}
        for row in rows:
            scheme = row.get(self.scheme_column)
            if (not self.among or scheme in wanted) \
                    and to_number(row.get(self.column)) is not None:
                key = tuple(row.get(g) for g in self.group_by)
                groups.setdefault(key, {}).setdefault(str(scheme), []).append(row)
        required = (self.subject, *self.among) if self.among else ()
        seen = {s for g in groups.values() for s in g}
        absent = [s for s in required if s not in seen]
        if absent:
            return Outcome(NOT_RUN, "-", (), f"no finished run of {', '.join(absent)}")
        complete, partial, used, failures, failed = 0, [], [], [], []
        for key, by_scheme in sorted(groups.items(), key=lambda kv: str(kv[0])):
            name = " ".join(str(k) for k in key)
            lacking = self._lacking(by_scheme)
            if lacking:
                partial.append(f"{name} (no {', '.join(lacking)})")
                continue
            complete += 1
            used += [r for rs in by_scheme.values() for r in rs]
            beaten = (self._beaten_by_a_mean(by_scheme) if self.against == OTHER_MEANS
                      else self._beaten_by_a_run(by_scheme))
            if beaten:
                failures.append(f"{name}: {beaten}")
                failed += [r for rs in by_scheme.values() for r in rs]
        if not complete:
            noun = self.group_name or "/".join(self.group_by)
            needs = ("a run of every scheme" if self.among
                     else f"both {self.subject} and another scheme")
            return Outcome(NOT_RUN, "-", (), f"no {noun} has {needs}: " + "; ".join(partial))
        ours = f"holds on {complete - len(failures)} of {complete}" + (
            f" {self.group_name}s" if self.group_name else "")
        notes = (["fails on " + "; ".join(failures)] if failures else []) + \
            (["left out: " + "; ".join(partial)] if partial else [])
        return Outcome(FAIL if failures else PASS, ours, tuple(used), ". ".join(notes),
                       float(complete - len(failures)), tuple(failed))

    def _lacking(self, by_scheme: Mapping[str, list[Row]]) -> list[str]:
        """What a group needs and has not got."""
        if self.among:
            return [s for s in (self.subject, *self.among) if s not in by_scheme]
        if self.subject not in by_scheme:
            return [self.subject]
        return [] if len(by_scheme) > 1 else ["other scheme"]

    def _number(self, value: float) -> float:
        return max(value, self.floor) if self.floor is not None else value

    def _mean(self, rows: list[Row]) -> float:
        return self._number(statistics.fmean(value_of(r, self.column) for r in rows))

    def _beaten_by_a_mean(self, by_scheme: Mapping[str, list[Row]]) -> str | None:
        """'subject 12.0, best 9.0' when the best mean beats the subject's beyond the
        slack (None: it does not)."""
        means = {s: self._mean(rs) for s, rs in by_scheme.items()}
        pick = min if self.direction == LOWEST else max
        best = pick(means, key=lambda s: means[s])
        mine = means[self.subject]
        if best == self.subject:
            return None
        if self.direction == LOWEST:
            beaten = mine > max(means[best], 0.0) * (1 + self.slack)
        else:
            beaten = mine < max(means[best], 0.0) * (1 - self.slack)
        return f"{self.subject} {fmt(mine)}, {best} {fmt(means[best])}" if beaten else None

    def _beaten_by_a_run(self, by_scheme: Mapping[str, list[Row]]) -> str | None:
        """'subject 1.00, other 1.20' for the run that beats the subject's mean by most
        beyond the slack (None: none does)."""
        mine = self._mean(by_scheme[self.subject])
        runs = [(s, self._number(value_of(r, self.column)))
                for s, rs in by_scheme.items() if s != self.subject for r in rs]
        if self.direction == HIGHEST:
            beyond = [(s, v) for s, v in runs if v > mine + self.slack]
            worst = max(beyond, key=lambda sv: sv[1]) if beyond else None
        else:
            beyond = [(s, v) for s, v in runs if v < mine - self.slack]
            worst = min(beyond, key=lambda sv: sv[1]) if beyond else None
        return None if worst is None else f"{self.subject} {fmt(mine)}, {worst[0]} {fmt(worst[1])}"

    def tolerance_text(self) -> str:
        if self.against == OTHER_MEANS:
            return f"within {self.slack * 100:g}% of the {self.direction}"
        side, give = ("above", "less") if self.direction == HIGHEST else ("below", "plus")
        return (f"at or {side} every other run, {give} {self.slack:g}" if self.slack
                else f"at or {side} every other run (strict)")


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
        return Outcome(PASS if a < b else FAIL, f"{fmt(a)} vs {fmt(b)}", used_a + used_b)


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
        subject = [r for r in select(rows, self.subject)
                   if to_number(r.get(self.more)) is not None
                   and to_number(r.get(self.less)) is not None]
        if ref_more is None or ref_less is None:
            return Outcome(NOT_RUN, "-", (), why or why2)
        if not subject:
            return Outcome(NOT_RUN, "-", (), "no finished run of the subject")
        both = [r for r in subject if value_of(r, self.more) >= ref_more
                and value_of(r, self.less) <= ref_less]
        ours = f"{len(both)} of {len(subject)} settings do both"
        why = "; ".join(f"{r.get('run', '?')}: {fmt(to_number(r[self.more]))} / "
                        f"{fmt(to_number(r[self.less]))}" for r in both)
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
        for row in select(rows, self.where):
            x, y = to_number(row.get(self.x)), to_number(row.get(self.y))
            if x is not None and y is not None:
                key = tuple(row.get(g) for g in self.group_by)
                groups.setdefault(key, {}).setdefault(x, []).append(row)
        if not self.group_by:
            by_x = groups.get((), {})
            if len(by_x) < self.min_points:
                return Outcome(NOT_RUN, "-", (), f"{len(by_x)} values of {self.x} finished, "
                               f"the shape needs {self.min_points}")
            series, dips = self._series(by_x, "")
            ours = (f"{len(series)} points, {fmt(series[0][1])} .. {fmt(series[-1][1])}"
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
        series = [(x, statistics.fmean(value_of(r, self.y) for r in rs))
                  for x, rs in sorted(by_x.items(), reverse=self.falling)]
        dips = [f"{prefix}{self.y} {fmt(b)} at {self.x}={x1:g} after {fmt(a)} at {x0:g}"
                for (x0, a), (x1, b) in zip(series, series[1:]) if not self.slack.allows(a, b)]
        return series, dips

    def tolerance_text(self) -> str:
        return (f"a dip of {self.slack.text()} between neighbours"
                + (f", read from the highest {self.x} down" if self.falling else "")
                + (f", within each {'/'.join(self.group_by)}" if self.group_by else ""))


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
        values = [v for v in (to_number(r.get(column)) for r in rows) if v is not None]
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

    def tolerance_text(self) -> str:
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
        for row in select(rows, self.where):
            groups.setdefault(tuple(row.get(g) for g in self.group_by), []).append(row)
        counted, used, failures, failed, strict = 0, [], [], [], False
        for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
            if self.pair is None:
                sides = (members, members)
            else:
                sides = (select(members, where(**{self.pair.column: self.pair.subject})),
                         select(members, where(**{self.pair.column: self.pair.against})))
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
            compared = f"{fmt(a)} vs {fmt(b)}" + (f" x {scale:.2f}" if scale != 1 else "")
            if not ok:
                name = " ".join(str(k) for k in key) or "all runs"
                failures.append(f"{name}: {compared}")
                failed += members
        if not counted:
            what = " ".join(f"{k}={v}" for k, v in self.where) or "any run"
            return Outcome(NOT_RUN, "-", (), f"no cell with {what} has the values it needs"
                           + (f" ({self.pair.subject} and {self.pair.against} both run)"
                              if self.pair else ""))
        # One group (no group_by): its two values say more than a count.
        ours = (compared if not self.group_by else
                f"holds in {counted - len(failures)} of {counted} cells")
        if failures:
            return Outcome(FAIL, ours, tuple(used), "fails in " + "; ".join(failures),
                           failed_rows=tuple(failed))
        if self.strictly_once and not strict:
            return Outcome(FAIL, ours + ", never >", tuple(used),
                           f"{self.left} is never above in any cell")
        return Outcome(PASS, ours, tuple(used))


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
        used = [r for r in rows if to_number(r.get(first)) is not None
                and to_number(r.get(second)) is not None]
        if len(used) < self.min_protocols:
            return Outcome(NOT_RUN, "-", (), f"{len(used)} protocols on both traces, "
                           f"{self.min_protocols} needed")
        rho = spearman([value_of(r, first) for r in used], [value_of(r, second) for r in used])
        ours = f"Spearman rho {rho:.2f} over {len(used)} protocols"
        ok = rho < self.max_rho
        return Outcome(PASS if ok else FAIL, ours, tuple(used), "" if ok else ours, rho)

    def tolerance_text(self) -> str:
        return (f"Spearman's rho between {self.before} and {self.after} {self.column} below "
                f"{self.max_rho:g} (at least {self.min_protocols} protocols)")
