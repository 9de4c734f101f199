"""A per-link average that counts only over all of the paper's links.

The Sprout paper's summary table averages over its 8 links (4 networks, both
directions). A mean over the links where both schemes happened to finish is
another number when one is missing, so it is not compared with the paper's:
the claim says NOT RUN and names how many links it had.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from analysis.claims.measures import Measure, PerGroupComparison
from analysis.claims.model import Row

PAPER_LINKS = 8  # Verizon LTE, Verizon 3G, AT&T LTE, T-Mobile 3G; downlink and uplink


@dataclass(frozen=True)
class AllLinks(Measure):
    """`per_link` (a mean of ratios or a ratio of means over links), or no value when
    fewer than `links` links have runs of both schemes."""

    per_link: PerGroupComparison
    links: int = PAPER_LINKS

    @property
    def unit(self) -> str:
        return self.per_link.unit

    def measure(self, rows: Sequence[Row]) -> tuple[float | None, tuple[Row, ...], str]:
        value, used, why = self.per_link.measure(rows)
        if value is None:
            return value, used, why
        covered = {tuple(r.get(g) for g in self.per_link.group_by) for r in used}
        if len(covered) < self.links:
            return None, used, (f"{self.per_link.numerator} and {self.per_link.denominator} "
                                f"both ran on {len(covered)} of the paper's {self.links} "
                                f"links; the paper's average is over all {self.links}")
        return value, used, ""
