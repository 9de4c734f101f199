"""The report's claims, grouped as a grader reads them: the FAILs first, each with its
measured cause where one is on record, then the PASSes, then the claims not run, one line
per reason ("12 full-run claims: run `./repro run contest-warmup-a`")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from analysis.claims.model import FAIL, NOT_RUN, PASS, ClaimResult

FULL_ONLY = "a full-run claim"
QUICK_ONLY = "a quick-pass claim"
NO_RUNS = "no finished runs"
# How model.evaluate words a measured cause in a FAIL's why, and a failure none covers.
CAUSE_MEASURED = "the cause"  # "The cause, measured: ..." / "The cause where ..., measured:"
NO_CAUSE = "no cause measured"


@dataclass(frozen=True)
class NotRunGroup:
    line: str  # what they share and what runs them, in one line
    claims: tuple[ClaimResult, ...]


@dataclass
class ClaimGroups:
    failed: list[ClaimResult] = field(default_factory=list)
    passed: list[ClaimResult] = field(default_factory=list)
    not_run: list[NotRunGroup] = field(default_factory=list)

    def explained(self) -> int:
        """FAILs whose every failing cell has a measured cause on record."""
        return sum(cause_measured(r) for r in self.failed)


def cause_measured(result: ClaimResult) -> bool:
    """Whether a FAIL's why cites a measured cause for every failing cell."""
    why = result.why.lower()
    return CAUSE_MEASURED in why and "measured:" in why and NO_CAUSE not in why


def _not_run_line(why: str, count: int, experiment: str) -> str:
    claims = "claim" if count == 1 else "claims"
    if why.startswith(FULL_ONLY):
        return f"{count} full-run {claims}: run `./repro run {experiment}`"
    if why.startswith(QUICK_ONLY):
        return f"{count} quick-pass {claims}: run `./repro run {experiment} --quick`"
    if why.startswith(NO_RUNS):
        return f"{count} {claims} with no finished run: run `./repro run {experiment} --quick`"
    return f"{count} {claims}: {why}"


def group_claims(results: Sequence[ClaimResult], experiment: str) -> ClaimGroups:
    groups = ClaimGroups([r for r in results if r.verdict == FAIL],
                         [r for r in results if r.verdict == PASS])
    reasons: dict[str, list[ClaimResult]] = {}
    for r in results:
        if r.verdict == NOT_RUN:
            reasons.setdefault(r.why, []).append(r)
    groups.not_run = [NotRunGroup(_not_run_line(why, len(rs), experiment), tuple(rs))
                      for why, rs in reasons.items()]
    return groups
