"""Whether a number moved between two passes beyond their run-to-run noise, by a stated test.

Two questions, each answered by a test from SciPy (scipy.stats), at the level ALPHA:

- one cell (the same run spec on both sides), its trials: with two or more trials a side,
  Welch's t-test (`ttest_ind`, unequal variances); with one trial on one side and two or
  more on the other, whether that trial falls outside the other side's prediction interval
  for one more trial (Student's t, 1 - ALPHA); with one trial a side there is no spread to
  judge by, and the cell is not judged;
- one metric over an experiment's cells (one value a side per cell, the trials' mean):
  Wilcoxon's signed-rank test on the paired changes (`wilcoxon`), log ratios where every
  value is positive; it tells a pass whose numbers moved together (a slower machine, a
  changed analysis) from cells that scatter around no change, and needs no trials.

Each judgement says which test it made and what it found, in words (`why`).
"""
from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass
from typing import Sequence

ALPHA = 0.01
# Wilcoxon's exact two-sided p cannot go below 2 / 2**n: n cells below this cannot reach ALPHA.
MIN_PAIRED_CELLS = math.floor(math.log2(2 / ALPHA)) + 1
WELCH = "Welch's t-test"
PREDICTION = "prediction interval"
WILCOXON = "Wilcoxon signed-rank"
NOT_JUDGED = "not judged"
TESTS_TEXT = (f"a cell moved beyond noise when, with 2 or more trials a side, {WELCH} "
              f"(unequal variances) gives p < {ALPHA:g}; with one trial on one side, when it "
              f"lies outside the other side's {100 * (1 - ALPHA):g}% {PREDICTION} for one more "
              f"trial (Student's t); with one trial a side a cell is not judged (no spread). "
              f"A metric moved across an experiment when {WILCOXON} on its cells' paired "
              f"changes (log ratios where all values are positive; at least "
              f"{MIN_PAIRED_CELLS} cells) gives p < {ALPHA:g} (scipy.stats)")


@dataclass(frozen=True)
class Judgement:
    test: str  # WELCH, PREDICTION, WILCOXON or NOT_JUDGED
    moved: bool | None  # None: not judged
    p: float | None
    why: str


def _spread(values: Sequence[float]) -> str:
    return (f"{len(values)} trials, {min(values):.4g}..{max(values):.4g}" if len(values) > 1
            else "1 trial")


def _stdev(values: Sequence[float]) -> float:
    """The sample standard deviation; 0 for values alike but for float rounding."""
    sd = statistics.stdev(values)
    return 0.0 if sd <= 1e-9 * max(1.0, max(abs(v) for v in values)) else sd


def judge_cell(a: Sequence[float], b: Sequence[float]) -> Judgement:
    """One cell's trials on side A against side B."""
    from scipy import stats
    if not a or not b:
        return Judgement(NOT_JUDGED, None, None, "no value on one side")
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    sides = f"A {_spread(a)}; B {_spread(b)}"
    if len(a) == 1 and len(b) == 1:
        return Judgement(NOT_JUDGED, None, None,
                         f"one trial a side: no spread to judge by ({sides})")
    if len(a) >= 2 and len(b) >= 2:
        sd_a, sd_b = _stdev(a), _stdev(b)
        if sd_a == 0 and sd_b == 0:
            moved = mean_a != mean_b
            return Judgement(WELCH, moved, 0.0 if moved else 1.0,
                             f"every trial alike on each side ({sides}): "
                             + ("the sides differ" if moved else "the same value"))
        if sd_a == 0 or sd_b == 0:  # Welch's test where one variance is 0: a one-sample test
            alike, other = ("A", b) if sd_a == 0 else ("B", a)
            value = mean_a if sd_a == 0 else mean_b
            p = float(stats.ttest_1samp(other, value).pvalue)
            return Judgement(WELCH, p < ALPHA, p, f"{WELCH} p = {p:.2g} ({alike}'s trials "
                             f"alike: one-sample t-test against its value; {sides})")
        p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
        return Judgement(WELCH, p < ALPHA, p, f"{WELCH} p = {p:.2g} ({sides})")
    one, many = (a[0], b) if len(a) == 1 else (b[0], a)
    lone = "A" if len(a) == 1 else "B"
    mean, sd = statistics.fmean(many), _stdev(many)
    n = len(many)
    half = float(stats.t.ppf(1 - ALPHA / 2, n - 1)) * sd * math.sqrt(1 + 1 / n)
    low, high = mean - half, mean + half
    moved = not low <= one <= high
    # The two-sided p of the same t statistic, for the record.
    p = 0.0 if half == 0 and moved else 1.0 if half == 0 else float(
        2 * stats.t.sf(abs(one - mean) / (sd * math.sqrt(1 + 1 / n)), n - 1))
    return Judgement(PREDICTION, moved, p,
                     f"{lone}'s one trial {one:.4g} {'outside' if moved else 'inside'} the "
                     f"other side's {100 * (1 - ALPHA):g}% {PREDICTION} {low:.4g}..{high:.4g} "
                     f"({sides})")


def judge_metric(a: Sequence[float], b: Sequence[float]) -> Judgement:
    """One metric over an experiment's cells: a[i] and b[i] are cell i's value on each side."""
    from scipy import stats
    pairs = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
    if len(pairs) < MIN_PAIRED_CELLS:
        return Judgement(NOT_JUDGED, None, None,
                         f"{len(pairs)} cells on both sides: {WILCOXON} needs "
                         f"{MIN_PAIRED_CELLS} to reach p < {ALPHA:g}")
    positive = all(x > 0 and y > 0 for x, y in pairs)
    changes = [math.log(y / x) if positive else y - x for x, y in pairs]
    moved = [c for c in changes if c != 0]  # Wilcoxon's test leaves the unchanged cells out
    if not moved:
        return Judgement(WILCOXON, False, 1.0, f"the same value in all {len(pairs)} cells")
    if len(moved) < MIN_PAIRED_CELLS:
        return Judgement(NOT_JUDGED, None, None,
                         f"{len(pairs) - len(moved)} of {len(pairs)} cells unchanged; the "
                         f"{len(moved)} that changed are too few for {WILCOXON} to reach "
                         f"p < {ALPHA:g} (it needs {MIN_PAIRED_CELLS})")
    with warnings.catch_warnings():  # ties make SciPy fall back to its normal approximation
        warnings.simplefilter("ignore", UserWarning)
        p = float(stats.wilcoxon(moved).pvalue)
    median = statistics.median(changes)
    typical = (f"median change {100 * (math.exp(median) - 1):+.1f}%" if positive
               else f"median change {median:+.4g}")
    unchanged = f", {len(pairs) - len(moved)} unchanged" if len(moved) < len(pairs) else ""
    return Judgement(WILCOXON, p < ALPHA, p, f"{WILCOXON} over {len(pairs)} cells"
                     f"{unchanged}: p = {p:.2g}, {typical}")
