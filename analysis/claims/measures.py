"""Numbers computed from the rows, for a number claim (checks.NumberCheck) to compare
with the paper's: a column's mean, or one scheme against another per group (a link, a
trace), aggregated over the groups the way the paper does."""
from __future__ import annotations

import statistics
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

from analysis.claims.model import ClaimDeclarationError, Row, Where, select, to_number, value_of

# How PerGroupComparison turns (numerator, denominator) per group into one number.
MEAN_OF_RATIOS = "mean of ratios"  # Sprout's speed-up: mean over links of n / d
RATIO_OF_MEANS = "ratio of means"  # Sprout's delay reduction: mean of n / mean of d
MEAN_OF_DIFFERENCES = "mean of differences"  # log-scale columns (the contest's score)
AGGREGATIONS = (MEAN_OF_RATIOS, RATIO_OF_MEANS, MEAN_OF_DIFFERENCES)
# A ratio is shown as "1.2x"; a difference is in the column's own unit.
_UNITS = {MEAN_OF_RATIOS: "x", RATIO_OF_MEANS: "x", MEAN_OF_DIFFERENCES: ""}


class Measure(ABC):
    """A number computed from the rows (None with the reason when it cannot be)."""

    @property
    @abstractmethod
    def unit(self) -> str:
        """What follows the number when it is shown (" ms", "x", or nothing)."""

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
        used = [r for r in select(rows, self.where) if to_number(r.get(self.column)) is not None]
        if not used:
            what = " ".join(f"{k}={v}" for k, v in self.where) or "any run"
            return None, (), f"no finished run with {what}"
        return statistics.fmean(value_of(r, self.column) for r in used), tuple(used), ""


@dataclass(frozen=True)
class PerGroupComparison(Measure):
    """One scheme against another: the mean of `column` per (group, scheme) over the rows
    matching `where`, paired per group where both ran, and the pairs aggregated by
    `aggregation`: MEAN_OF_RATIOS (mean over groups of numerator/denominator),
    RATIO_OF_MEANS (mean of the numerators / mean of the denominators) or
    MEAN_OF_DIFFERENCES (mean over groups of numerator - denominator)."""

    column: str
    numerator: str  # a value of `scheme_column`
    denominator: str
    group_by: tuple[str, ...]
    aggregation: str  # one of AGGREGATIONS
    scheme_column: str = "scheme"
    floor: float | None = None  # each mean at least this (a log's resolution)
    where: Where = ()  # only the rows matching this (e.g. one trace)

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ClaimDeclarationError(f"aggregation {self.aggregation!r} is not one of "
                                        f"{', '.join(AGGREGATIONS)}")

    @property
    def unit(self) -> str:
        return _UNITS[self.aggregation]

    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        pairs, used, why = self.pairs(rows)
        if not pairs:
            return None, (), why
        if self.aggregation == MEAN_OF_RATIOS:
            if any(d <= 0 for _, d in pairs):
                return None, used, f"{self.denominator}'s {self.column} is 0 on some link"
            return statistics.fmean(n / d for n, d in pairs), used, ""
        if self.aggregation == RATIO_OF_MEANS:
            den = statistics.fmean(d for _, d in pairs)
            if den <= 0:
                return None, used, f"{self.denominator}'s mean {self.column} is not positive"
            return statistics.fmean(n for n, _ in pairs) / den, used, ""
        return statistics.fmean(n - d for n, d in pairs), used, ""

    def pairs(self, rows: Sequence[Row]) -> tuple[list[tuple[float, float]], tuple[Row, ...], str]:
        """(numerator, denominator) per group where both have runs; the rows used."""
        groups: dict[tuple, dict[str | None, list[Row]]] = {}
        for row in select(rows, self.where):
            if to_number(row.get(self.column)) is None:
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
        value = statistics.fmean(value_of(r, self.column) for r in rows)
        return max(value, self.floor) if self.floor is not None else value
