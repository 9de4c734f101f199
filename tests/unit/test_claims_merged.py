"""The parameterised measure and check that replaced five classes give what those classes
gave. PerGroupComparison replaced MeanOfRatios, RatioOfMeans and MeanOfDifferences;
ExtremePerGroup replaced LowestPerGroup (LOWEST against OTHER_MEANS) and HighestPerGroup
(HIGHEST against EVERY_RUN). Each expectation below is what the former class returned on
the same hand-made rows (verdict, our value as text, why, the value, the runs used),
frozen when they were merged; the two new pairings (HIGHEST against OTHER_MEANS, LOWEST
against EVERY_RUN) are checked against values worked out by hand."""
from __future__ import annotations

from typing import Any

import pytest

from analysis.claims.checks import (EVERY_RUN, HIGHEST, LOWEST, OTHER_MEANS, ExtremePerGroup,
                                    NumberCheck)
from analysis.claims.measures import (MEAN_OF_DIFFERENCES, MEAN_OF_RATIOS, RATIO_OF_MEANS,
                                      PerGroupComparison)
from analysis.claims.model import (FAIL, NOT_RUN, PASS, ClaimDeclarationError, Outcome, Row,
                                   Tolerance, where)


def frozen(outcome: Outcome) -> tuple[Any, ...]:
    return (outcome.verdict, outcome.ours, outcome.why, outcome.value,
            tuple(r["run"] for r in outcome.rows))


def run(trace: str, scheme: str, column: str, value: float, name: str) -> Row:
    return {"trace": trace, "scheme": scheme, column: value, "run": name}


# ------------------------------------------------------------ LowestPerGroup's behaviour

DELAYS = [run("A", "sprout", "d", 110, "a1"), run("A", "ewma", "d", 100, "a2"),
          run("A", "vegas", "d", 300, "a3"), run("B", "sprout", "d", 130, "b1"),
          run("B", "ewma", "d", 100, "b2"), run("B", "vegas", "d", 90, "b3"),
          run("B", "codel", "d", 80, "b4"), run("C", "ewma", "d", 5, "c1"),
          run("A", "cubic", "d", 1, "a4")]  # cubic is not among the schemes compared


def lowest(**given: Any) -> ExtremePerGroup:
    """LowestPerGroup("sprout", ("ewma", "vegas"), "d", ("trace",), slack=0.2,
    optional=("codel",)) as it is declared now."""
    declared: dict[str, Any] = dict(slack=0.2, among=("ewma", "vegas"), optional=("codel",),
                                    group_name="link")
    declared.update(given)
    return ExtremePerGroup("sprout", "d", ("trace",), LOWEST, OTHER_MEANS, **declared)


def test_lowest_against_the_other_means_is_the_former_lowest_per_group() -> None:
    assert frozen(lowest().evaluate(DELAYS)) == (
        FAIL, "holds on 1 of 2 links",
        "fails on B: sprout 130, codel 80.0. left out: C (no sprout, vegas)", 1.0,
        ("a1", "a2", "a3", "b1", "b2", "b3", "b4"))
    no_codel = [r for r in DELAYS if r["scheme"] != "codel"]
    assert frozen(lowest().evaluate(no_codel)) == (
        FAIL, "holds on 1 of 2 links",
        "fails on B: sprout 130, vegas 90.0. left out: C (no sprout, vegas)", 1.0,
        ("a1", "a2", "a3", "b1", "b2", "b3"))
    floored = lowest(slack=0.0, among=("ewma",), optional=(), floor=120.0)
    assert frozen(floored.evaluate(DELAYS)) == (
        FAIL, "holds on 1 of 2 links", "fails on B: sprout 130, ewma 120. left out: C (no sprout)",
        1.0, ("a1", "a2", "b1", "b2"))
    # A best mean below 0 counts as 0: -1 is within 20% of it.
    below_zero = [run("E", "sprout", "d", -1.0, "e1"), run("E", "ewma", "d", -2.0, "e2"),
                  run("E", "vegas", "d", 3.0, "e3")]
    assert frozen(lowest().evaluate(below_zero)) == (
        PASS, "holds on 1 of 1 links", "", 1.0, ("e1", "e2", "e3"))
    assert lowest().tolerance_text() == "within 20% of the lowest"


def test_lowest_against_the_other_means_says_not_run_as_before() -> None:
    no_vegas = [r for r in DELAYS if r["scheme"] != "vegas"]
    assert frozen(lowest().evaluate(no_vegas)) == (
        NOT_RUN, "-", "no finished run of vegas", None, ())
    incomplete = [r for r in DELAYS if r["run"] not in ("a3", "b1")]
    assert frozen(lowest().evaluate(incomplete)) == (
        NOT_RUN, "-", "no link has a run of every scheme: A (no vegas); B (no sprout); "
        "C (no sprout, vegas)", None, ())


# ------------------------------------------------------------ HighestPerGroup's behaviour

SCORES = [run("A", "omni", "s", 1.0, "a1"), run("A", "x", "s", 0.5, "a2"),
          run("A", "x", "s", 0.9, "a3"), run("B", "x", "s", 0.2, "b1"),
          run("C", "omni", "s", 1.0, "c1"), run("D", "omni", "s", 1.0, "d1"),
          run("D", "y", "s", 1.2, "d2"), run("D", "x", "s", 1.1, "d3")]


def highest(slack: float = 0.0) -> ExtremePerGroup:
    """HighestPerGroup("omni", "s", ("trace",), slack) as it is declared now."""
    return ExtremePerGroup("omni", "s", ("trace",), HIGHEST, EVERY_RUN, slack=slack)


def test_highest_against_every_run_is_the_former_highest_per_group() -> None:
    left_out = "left out: B (no omni); C (no other scheme)"
    used = ("a1", "a2", "a3", "d1", "d2", "d3")
    assert frozen(highest().evaluate(SCORES)) == (
        FAIL, "holds on 1 of 2", f"fails on D: omni 1.00, y 1.20. {left_out}", 1.0, used)
    assert frozen(highest(0.3).evaluate(SCORES)) == (PASS, "holds on 2 of 2", left_out, 2.0, used)
    no_omni = [r for r in SCORES if r["scheme"] != "omni"]
    assert frozen(highest().evaluate(no_omni)) == (
        NOT_RUN, "-", "no trace has both omni and another scheme: A (no omni); B (no omni); "
        "D (no omni)", None, ())
    assert highest().tolerance_text() == "at or above every other run (strict)"
    assert highest(0.3).tolerance_text() == "at or above every other run, less 0.3"


# ------------------------------------------------------------ the two new pairings

THROUGHPUTS = [run("A", "s", "t", 9.0, "a1"), run("A", "x", "t", 10.0, "a2"),
               run("A", "y", "t", 5.0, "a3"), run("B", "s", "t", 7.0, "b1"),
               run("B", "x", "t", 10.0, "b2")]


def test_highest_against_the_other_means_allows_a_fraction_below_the_best() -> None:
    check = ExtremePerGroup("s", "t", ("trace",), HIGHEST, OTHER_MEANS, slack=0.2,
                            among=("x",), optional=("y",), group_name="link")
    # A: 9 is within 20% of 10; B: 7 is below 8.
    assert frozen(check.evaluate(THROUGHPUTS)) == (
        FAIL, "holds on 1 of 2 links", "fails on B: s 7.00, x 10.0", 1.0,
        ("a1", "a2", "a3", "b1", "b2"))
    assert check.tolerance_text() == "within 20% of the highest"
    assert check.evaluate([r for r in THROUGHPUTS if r["run"] != "b1"]).verdict == PASS


def test_lowest_against_every_run_allows_an_amount_below_the_subject() -> None:
    rows = [run("A", "s", "d", 100, "a1"), run("A", "x", "d", 120, "a2"),
            run("A", "x", "d", 150, "a3"), run("B", "s", "d", 100, "b1"),
            run("B", "s", "d", 140, "b2"), run("B", "x", "d", 110, "b3")]
    strict = ExtremePerGroup("s", "d", ("trace",), LOWEST, EVERY_RUN)
    # B: the subject's mean is 120 and one run of x is 110.
    assert frozen(strict.evaluate(rows)) == (
        FAIL, "holds on 1 of 2", "fails on B: s 120, x 110", 1.0,
        ("a1", "a2", "a3", "b1", "b2", "b3"))
    assert strict.tolerance_text() == "at or below every other run (strict)"
    loose = ExtremePerGroup("s", "d", ("trace",), LOWEST, EVERY_RUN, slack=15)
    assert loose.evaluate(rows).verdict == PASS
    assert loose.tolerance_text() == "at or below every other run, plus 15"


def test_a_wrong_direction_comparison_or_aggregation_is_refused() -> None:
    with pytest.raises(ClaimDeclarationError):
        ExtremePerGroup("s", "d", ("trace",), "smallest", EVERY_RUN)
    with pytest.raises(ClaimDeclarationError):
        ExtremePerGroup("s", "d", ("trace",), LOWEST, "the median")
    with pytest.raises(ClaimDeclarationError):  # optional schemes need named ones
        ExtremePerGroup("s", "d", ("trace",), LOWEST, OTHER_MEANS, optional=("y",))
    with pytest.raises(ClaimDeclarationError):
        PerGroupComparison("v", "n", "d", ("trace",), "median of ratios")


# ------------------------------------------------------------ the three aggregations

PAIRS = [run("A", "n", "v", 2.0, "a1"), run("A", "d", "v", 4.0, "a2"),
         run("A", "d", "v", 6.0, "a3"), run("B", "n", "v", 3.0, "b1"),
         run("B", "d", "v", 2.0, "b2"), run("C", "n", "v", 9.0, "c1")]
BOTH_RAN = ("a1", "a2", "a3", "b1", "b2")  # C has no denominator: left out
ZERO = [dict(r, v=0.0) if r["scheme"] == "d" else r for r in PAIRS]
APART = [r for r in PAIRS if r["scheme"] != "d"] + [run("Z", "d", "v", 1.0, "z1")]
TOLERANCE = Tolerance(relative=0.1, reason="test")

# Per aggregation, what the former class (MeanOfRatios, RatioOfMeans, MeanOfDifferences)
# gave: its unit; its value on PAIRS, and as a number claim of 1.0 ± 10%; the same with a
# denominator of 0 on every link; the value with floor 5 on trace A only.
FORMER: dict[str, dict[str, Any]] = {
    MEAN_OF_RATIOS: dict(
        unit="x", value=0.95, check=(PASS, "0.950x", "", 0.95, BOTH_RAN),
        zero=(NOT_RUN, "-", "d's v is 0 on some link", None, BOTH_RAN), floor_a=1.0),
    RATIO_OF_MEANS: dict(
        unit="x", value=2.5 / 3.5,
        check=(FAIL, "0.714x", "outside 0.900x..1.10x", 2.5 / 3.5, BOTH_RAN),
        zero=(NOT_RUN, "-", "d's mean v is not positive", None, BOTH_RAN), floor_a=1.0),
    MEAN_OF_DIFFERENCES: dict(
        unit="", value=-1.0, check=(FAIL, "-1.00", "outside 0.900..1.10", -1.0, BOTH_RAN),
        zero=(FAIL, "2.50", "outside 0.900..1.10", 2.5, BOTH_RAN), floor_a=0.0),
}


@pytest.mark.parametrize("aggregation", sorted(FORMER))
def test_each_aggregation_gives_what_its_former_class_gave(aggregation: str) -> None:
    former = FORMER[aggregation]
    measure = PerGroupComparison("v", "n", "d", ("trace",), aggregation)
    assert measure.unit == former["unit"]
    value, used, why = measure.measure(PAIRS)
    assert value == pytest.approx(former["value"]) and why == ""
    assert tuple(r["run"] for r in used) == BOTH_RAN
    result = frozen(NumberCheck(measure, 1.0, TOLERANCE).evaluate(PAIRS))
    assert result[:3] == former["check"][:3] and result[4] == former["check"][4]
    assert result[3] == pytest.approx(former["check"][3])
    assert frozen(NumberCheck(measure, 1.0, TOLERANCE).evaluate(ZERO)) == former["zero"]
    floored = PerGroupComparison("v", "n", "d", ("trace",), aggregation, floor=5.0,
                                 where=where(trace="A"))
    value, used, _ = floored.measure(PAIRS)
    assert value == pytest.approx(former["floor_a"])
    assert tuple(r["run"] for r in used) == ("a1", "a2", "a3")


@pytest.mark.parametrize("aggregation", sorted(FORMER))
def test_each_aggregation_says_why_there_is_no_value_as_before(aggregation: str) -> None:
    absent = PerGroupComparison("v", "n", "zz", ("trace",), aggregation).measure(PAIRS)
    assert absent == (None, (), "no finished run of zz")
    apart = PerGroupComparison("v", "n", "d", ("trace",), aggregation).measure(APART)
    assert apart == (None, (), "n and d share no trace")
