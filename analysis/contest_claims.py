"""The contest paper's claims as plain data, checked on an experiment's summary rows.

A claim has an id, its text, its source, the paper's value as text, a tolerance
fixed with its reason before any data was seen, the mode it holds for (quick,
full, both) and a check. The checks here are the contest's own kinds (a point on
the frontier, a score at least another's, a ranking that changes between
traces, a column that rises or falls with another); each is a frozen dataclass, so a
claim is a value that a general claims mechanism can wrap as it is.

Verdicts: PASS, FAIL, NOT RUN (the rows it needs are not there). `shared_claims`
turns them into claims of the shared mechanism (analysis/claims.py), which
evaluates them per mode and writes claims.json/claims.md with every other
experiment's; the region's and train-test's rows are one per protocol, named.
"""
from __future__ import annotations

import math
import statistics
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from analysis import claims as shared
from analysis.frontier import RegionPoint, position

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
QUICK, FULL, BOTH = "quick", "full", "both"

Row = Mapping[str, Any]


def _num(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


class Check(ABC):
    @abstractmethod
    def evaluate(self, rows: Sequence[Row]) -> tuple[str, str]:
        """(verdict, what we measured, as text)."""


@dataclass(frozen=True)
class OnFrontier(Check):
    """The row named `subject` is a vertex of the population's convex frontier, or its
    throughput falls short of the frontier's at its delay by at most `max_shortfall`."""

    subject: str
    max_shortfall: float
    name_column: str = "name"

    def evaluate(self, rows: Sequence[Row]) -> tuple[str, str]:
        points = [RegionPoint(str(r[self.name_column]), d, t) for r in rows
                  if (d := _num(r.get("p95_e2e_delay_ms"))) is not None and d > 0
                  and (t := _num(r.get("throughput_mbps"))) is not None]
        if not any(p.name == self.subject for p in points):
            return NOT_RUN, f"no finished run of {self.subject}"
        pos = position(points, self.subject)
        where = ("a vertex of the frontier" if pos.vertex else
                 f"{pos.shortfall * 100:.1f}% below the frontier"
                 + ("" if pos.efficient else ", dominated"))
        ok = pos.vertex or pos.shortfall <= self.max_shortfall
        return (PASS if ok else FAIL), f"{where} (population {len(points)})"


@dataclass(frozen=True)
class ScoreAtLeast(Check):
    """The subject's score is at least the reference's minus `margin` (ln units)."""

    subject: str
    reference: str
    margin: float
    name_column: str = "name"

    def evaluate(self, rows: Sequence[Row]) -> tuple[str, str]:
        scores = {str(r[self.name_column]): _num(r.get("score")) for r in rows}
        a, b = scores.get(self.subject), scores.get(self.reference)
        if a is None or b is None:
            absent = [n for n, v in ((self.subject, a), (self.reference, b)) if v is None]
            return NOT_RUN, f"no score for {', '.join(absent)}"
        return (PASS if a >= b - self.margin else FAIL), \
            f"{self.subject} {a:.3f} vs {self.reference} {b:.3f} ({a - b:+.3f})"


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
    """The protocols' order by `column` on the training trace is not kept on the testing
    trace: Spearman's rho between the two is below `max_rho`. Rows carry `train_<col>`
    and `test_<col>`."""

    column: str
    max_rho: float
    min_protocols: int = 5

    def evaluate(self, rows: Sequence[Row]) -> tuple[str, str]:
        pairs = [(a, b) for r in rows if (a := _num(r.get(f"train_{self.column}"))) is not None
                 and (b := _num(r.get(f"test_{self.column}"))) is not None]
        if len(pairs) < self.min_protocols:
            return NOT_RUN, f"{len(pairs)} protocols on both traces, {self.min_protocols} needed"
        rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
        return (PASS if rho < self.max_rho else FAIL), \
            f"Spearman rho {rho:.2f} over {len(pairs)} protocols"


@dataclass(frozen=True)
class Monotone(Check):
    """Within each group, `y` does not move against `rising` as `x` rises, beyond a
    relative slack (rising: never falls by more than slack; falling: never rises)."""

    x: str
    y: str
    group_by: tuple[str, ...]
    slack: float
    rising: bool = True

    def evaluate(self, rows: Sequence[Row]) -> tuple[str, str]:
        groups: dict[tuple, list[tuple[float, float]]] = {}
        for r in rows:
            x, y = _num(r.get(self.x)), _num(r.get(self.y))
            if x is not None and y is not None:
                groups.setdefault(tuple(r.get(g) for g in self.group_by), []).append((x, y))
        groups = {k: sorted(v) for k, v in groups.items() if len({x for x, _ in v}) > 1}
        if not groups:
            return NOT_RUN, f"no group with two values of {self.x}"
        falls = [(k, a, b) for k, pts in groups.items() for a, b in zip(pts, pts[1:])
                 if (b[1] < a[1] * (1 - self.slack) if self.rising
                     else b[1] > a[1] * (1 + self.slack))]
        against = "falls" if self.rising else "rises"
        text = f"{len(groups)} groups; {len(falls)} {against} beyond {self.slack * 100:g}%"
        if falls:
            k, a, b = falls[0]
            text += f" (first: {dict(zip(self.group_by, k))} {self.x} {a[0]:g}->{b[0]:g}: " \
                    f"{a[1]:.4g}->{b[1]:.4g})"
        return (FAIL if falls else PASS), text


@dataclass(frozen=True)
class ContestClaim:
    id: str
    text: str
    source: str
    paper: str
    tolerance: str  # the bound in words; fixed before data
    reason: str  # why that tolerance
    mode: str  # quick, full or both
    check: Check

    def __post_init__(self) -> None:
        if self.mode not in (QUICK, FULL, BOTH):
            raise ValueError(f"claim {self.id}: mode {self.mode!r} is not quick, full or both")
        if not self.reason.strip():
            raise ValueError(f"claim {self.id}: a tolerance needs its reason")


@dataclass(frozen=True)
class SharedCheck(shared.Check):
    """A contest check as a check of the shared claims mechanism (analysis/claims.py), so
    `repro report`, `verify` and `pack` see the contest's claims like every other."""

    inner: Check
    tolerance: str
    kind: str = shared.SHAPE

    def evaluate(self, rows: Sequence[Row]) -> shared.Outcome:
        verdict, ours = self.inner.evaluate(rows)
        if verdict == NOT_RUN:
            return shared.Outcome(NOT_RUN, "-", (), ours)
        return shared.Outcome(verdict, ours, tuple(rows), "" if verdict == PASS else ours)

    def own_tolerance_text(self) -> str:
        return self.tolerance


def shared_claims(claims: Sequence[ContestClaim]) -> tuple[shared.Claim, ...]:
    """The contest's claims in the shared mechanism's form (same checks, tolerances and
    reasons)."""
    return tuple(shared.Claim(id=c.id, text=c.text, source=c.source, paper=c.paper,
                              check=SharedCheck(c.check, c.tolerance), mode=c.mode,
                              reason=c.reason) for c in claims)
