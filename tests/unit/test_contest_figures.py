"""Warm-ups B and C, the achievability region and training against testing: their
matrices (shared runs, population sizes), the frontier, the claims' checks and the
figures made from hand-made runs."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from analysis.claims.checks import EveryGroup, Monotone, Pair, RankChanges, Slack, spearman
from analysis.claims.model import (FAIL, FULL, NOT_RUN, PASS, QUICK, Claim, ClaimDeclarationError,
                                   evaluate_all)
from core.traces import TraceSet
from experiments.contest.frontier import (RegionPoint, convex_frontier, frontier_throughput,
                                          pareto_efficient)
from core.results import ExperimentStore
from experiments.contest.board import Contest
from experiments.contest.claims import OnFrontier
from experiments.contest.families import AIMD, DELAY_TRIGGER, TESTING, TRAINING
from experiments.contest.region import ContestRegion
from experiments.contest.train_test import ContestTrainTest
from experiments.contest.warmup_a import ContestWarmupA
from experiments.contest.warmup_b import ContestWarmupB
from experiments.contest.warmup_c import ContestWarmupC
from experiments.sprout.risk import SproutRisk
from tests.unit.fake_runs import add_done

NO_TRACES = TraceSet([], Path("/nonexistent"), manifest={})  # the matrices read no trace


def _measured(specs: list) -> set:
    return {replace(s, experiment="") for s in specs}


@pytest.mark.parametrize("quick", [True, False])
def test_warmups_are_the_regions_own_runs(quick: bool) -> None:
    region = _measured(ContestRegion(NO_TRACES).matrix(quick))
    for other in (ContestWarmupA(NO_TRACES), ContestWarmupB(NO_TRACES), ContestWarmupC(NO_TRACES)):
        mine = _measured(other.matrix(quick))
        assert mine and mine <= region, other.name
    assert {s.run_id() for s in ContestWarmupA(NO_TRACES).matrix(quick)} <= \
        {s.run_id() for s in ContestRegion(NO_TRACES).matrix(quick)}


@pytest.mark.parametrize("quick", [True, False])
def test_train_test_training_side_is_the_regions(quick: bool) -> None:
    specs = ContestTrainTest(NO_TRACES).matrix(quick)
    training = [s for s in specs if s.data_trace == f"{TRAINING}.down"]
    testing = [s for s in specs if s.data_trace == f"{TESTING}.down"]
    assert _measured(training) <= _measured(ContestRegion(NO_TRACES).matrix(quick))
    # the same protocols on both traces
    assert {(s.scheme, s.params) for s in training} == {(s.scheme, s.params) for s in testing}
    assert all(s.ack_trace == f"{TESTING}.up" for s in testing)


def test_the_contest_shares_full_runs_with_the_region() -> None:
    region = _measured(ContestRegion(NO_TRACES).matrix(False))
    contest = _measured(Contest(NO_TRACES).matrix(False))
    # The fixed window of 50 and Sprout at its default (no confidence parameter) at least.
    assert {s.scheme for s in contest & region} >= {"fixed-window", "sprout"}
    # sprout-risk sweeps the paper's trace (T-Mobile 3G, both directions), not the
    # contest path: its runs are its own.
    risk = _measured(SproutRisk(NO_TRACES).matrix(False))
    assert not risk & region


def test_population_sizes_and_contest_path() -> None:
    assert len(ContestRegion(NO_TRACES).matrix(False)) >= 100
    assert len(ContestRegion(NO_TRACES).matrix(True)) >= 30
    schemes = {s.scheme for s in ContestRegion(NO_TRACES).matrix(True)}
    assert {"fixed-window", "aimd", "delay-trigger", "dasjoshma", "johnnybameesh",
            "sprout"} <= schemes
    for spec in ContestRegion(NO_TRACES).matrix(False):
        assert spec.once and spec.delay_ms == 20 and spec.queue == "infinite"
        assert spec.data_trace == f"{TRAINING}.down" and spec.ack_trace == f"{TRAINING}.up"
    assert all(s.duration_s == 30.0 for s in ContestRegion(NO_TRACES).matrix(True))


def test_warmup_sweeps_cover_the_assignments_ranges() -> None:
    decreases = {p["decrease"] for p in AIMD.full}
    timeouts = {p["timeout_ms"] for p in AIMD.full}
    assert {2, 3, 4, 5, 6} <= decreases and {100, 1000} <= timeouts
    lows = {p["low_rtt_ms"] for p in DELAY_TRIGGER.full}
    highs = {p["high_rtt_ms"] for p in DELAY_TRIGGER.full}
    assert min(lows) == 40 and max(highs) == 200
    assert all(p["low_rtt_ms"] <= p["high_rtt_ms"] for p in DELAY_TRIGGER.full)


def test_every_swept_parameter_is_accepted_by_the_scheme_table() -> None:
    from schemes.registry import scheme_entry
    for spec in [*ContestRegion(NO_TRACES).matrix(False),
                 *ContestTrainTest(NO_TRACES).matrix(False)]:
        scheme_entry(spec.scheme).check(dict(spec.params))


def _pts(*triples: tuple[str, float, float]) -> list[RegionPoint]:
    return [RegionPoint(n, d, t) for n, d, t in triples]


def test_frontier_is_the_upper_left_convex_hull() -> None:
    points = _pts(("a", 100, 1.0), ("b", 200, 3.0), ("c", 400, 4.0), ("d", 800, 4.2),
                  ("inside", 300, 2.0), ("dominated", 900, 4.0), ("concave-dent", 350, 3.1))
    assert [p.name for p in pareto_efficient(points)] == ["a", "b", "concave-dent", "c", "d"]
    hull = convex_frontier(points)
    assert [p.name for p in hull] == ["a", "b", "c", "d"]
    assert frontier_throughput(hull, 200) == pytest.approx(3.0)
    assert frontier_throughput(hull, 50) is None
    assert frontier_throughput(hull, 5000) == pytest.approx(4.2)


def _rows(*triples: tuple[str, float, float]) -> list[dict]:
    return [{"name": n, "p95_e2e_delay_ms": d, "throughput_mbps": t} for n, d, t in triples]


def test_on_frontier_check() -> None:
    rows = _rows(("a", 100, 1.0), ("S", 200, 3.0), ("c", 400, 4.0))
    assert OnFrontier("S", 0.05).evaluate(rows).verdict == PASS
    inside = _rows(("a", 100, 1.0), ("S", 200, 1.5), ("b", 210, 3.0), ("c", 400, 4.0))
    result = OnFrontier("S", 0.05).evaluate(inside)
    assert result.verdict == FAIL and "below the frontier" in result.ours
    assert "dominated" not in result.ours
    dominated = _rows(("a", 100, 1.0), ("S", 250, 2.0), ("b", 210, 3.0), ("c", 400, 4.0))
    result = OnFrontier("S", 0.05).evaluate(dominated)
    assert result.verdict == FAIL and "dominated" in result.ours
    assert OnFrontier("X", 0.05).evaluate(rows).verdict == NOT_RUN


def _score_at_least(subject: str, reference: str, margin: float) -> EveryGroup:
    """The region's winner claims: score[subject] >= score[reference] - margin."""
    return EveryGroup("score", ">=", "score", group_by=(), pair=Pair("name", subject, reference),
                      slack=-margin)


def test_score_and_rank_checks() -> None:
    rows = [{"name": "w", "score": -3.05}, {"name": "Sprout", "score": -3.0}]
    assert _score_at_least("w", "Sprout", 0.1).evaluate(rows).verdict == PASS
    result = _score_at_least("w", "Sprout", 0.01).evaluate(rows)
    assert result.verdict == FAIL and "all runs: -3.05 vs -3.00" in result.why
    assert _score_at_least("z", "Sprout", 0.1).evaluate(rows).verdict == NOT_RUN
    same = [{"train_score": float(i), "test_score": float(i)} for i in range(6)]
    assert RankChanges("score", 0.95).evaluate(same).verdict == FAIL
    mixed = [{"train_score": float(i), "test_score": float(v)}
             for i, v in enumerate([3, 0, 5, 1, 4, 2])]
    assert RankChanges("score", 0.95).evaluate(mixed).verdict == PASS
    assert RankChanges("score", 0.95).evaluate(same[:3]).verdict == NOT_RUN
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def _per_g(slack: Slack, falling: bool = False) -> Monotone:
    return Monotone("x", "y", slack, min_points=2, falling=falling, group_by=("g",))


def test_grouped_monotone_check_and_modes() -> None:
    rows: list[dict[str, Any]] = [{"g": 1, "x": 1, "y": 10.0}, {"g": 1, "x": 2, "y": 9.5},
                                  {"g": 1, "x": 3, "y": 12}, {"g": 2, "x": 1, "y": 99.0}]
    result = _per_g(Slack(relative=0.10)).evaluate(rows)
    assert result.verdict == PASS and result.why == "left out: g=2"  # one x only
    assert _per_g(Slack(relative=0.01)).evaluate(rows).verdict == FAIL
    rise = Slack(relative=0.10, of_lower_value=True)  # 9.5 -> 12 rises by more than 10%
    result = _per_g(rise, falling=True).evaluate(rows)
    assert result.verdict == FAIL and result.why.startswith("fails on g=1: y 9.50 at x=2")
    assert _per_g(rise).evaluate(rows[3:]).verdict == NOT_RUN
    claim = Claim("c", "t", "s", "p", Monotone("x", "y", Slack(relative=0.1)), FULL, "why")
    assert evaluate_all([claim], rows, QUICK)[0].verdict == NOT_RUN
    with pytest.raises(ClaimDeclarationError):
        Claim("c", "t", "s", "p", Monotone("x", "y", Slack(relative=0.1)), QUICK, "")


def test_a_slack_of_the_lower_value_is_a_rise_over_it() -> None:
    of_higher, of_lower = Slack(relative=0.10), Slack(relative=0.10, of_lower_value=True)
    # A dip from 110.5 to 100: 9.5% of the higher value, 10.5% of the lower.
    assert of_higher.allows(110.5, 100.0) and not of_lower.allows(110.5, 100.0)
    assert of_lower.allows(109.0, 100.0) and of_lower.allows(100.0, 150.0)
    assert of_lower.text() == "10% of the lower value"


def test_trial_spread_within_one_setting_is_no_rise() -> None:
    # Two trials of one setting, 20% apart, and a falling series of their means: the
    # series is of means per setting, never one trial against another.
    rows = [{"x": 1, "y": 10.0}, {"x": 1, "y": 12.0}, {"x": 2, "y": 9.0}, {"x": 2, "y": 10.5}]
    check = Monotone("x", "y", Slack(relative=0.10, of_lower_value=True), min_points=2,
                     falling=True)
    assert check.evaluate(rows).verdict == PASS


def _fake_metrics(spec) -> dict:
    """Plausible numbers that depend on the parameters (not a run's output)."""
    p = dict(spec.params)
    knob = float(p.get("window", p.get("target_delay_ms", p.get("high_rtt_ms", 50))))
    knob += 10 * float(p.get("confidence", 0)) + float(p.get("decrease", 0))
    tput = min(5.0, 0.1 * knob + 0.5)
    delay = 60.0 + 4 * knob
    if spec.data_trace.startswith(TESTING):
        tput, delay = tput * (0.5 + (knob % 7) / 7), delay * 1.3
    import math
    return {"throughput_mbps": tput, "p95_e2e_delay_ms": delay, "p95_signal_delay_ms": delay - 20,
            "score": math.log(tput) - math.log(delay), "power": tput / (delay / 1000),
            "utilization": tput / 5.0, "capacity_mbps": 5.0, "lateness_ok": True}


@pytest.mark.parametrize("experiment", [
    ContestWarmupB(NO_TRACES), ContestWarmupC(NO_TRACES), ContestRegion(NO_TRACES),
    ContestTrainTest(NO_TRACES)], ids=lambda e: e.name)
def test_figures_from_hand_made_runs(tmp_path: Path, experiment) -> None:
    store = ExperimentStore(tmp_path / experiment.name)
    for spec in experiment.matrix(quick=True):
        add_done(store, spec, **_fake_metrics(spec))
    files = experiment.make_figures(store, tmp_path / "out")
    names = {f.name for f in files}
    assert "summary.csv" in names
    assert any(n.endswith(".png") for n in names)
    report = experiment.evaluate_claims(store)
    assert report.results and all(r.verdict != NOT_RUN for r in report.results), \
        [(r.id, r.why) for r in report.results]  # every claim found its rows
    if isinstance(experiment, ContestRegion):
        assert {"region.png", "winners.png", "frontier.csv", "winners.csv"} <= names
        summary = (tmp_path / "out" / "summary.csv").read_text()
        assert "Sprout" in summary and "dasjoshma" in summary


def test_no_figures_without_runs(tmp_path: Path) -> None:
    for experiment in (ContestWarmupB(NO_TRACES), ContestRegion(NO_TRACES),
                       ContestTrainTest(NO_TRACES)):
        assert experiment.make_figures(ExperimentStore(tmp_path / experiment.name),
                                       tmp_path / "out") == []


def test_contest_quick_modes_fit_their_share_of_the_quick_budget() -> None:
    """Warm-ups A-C, the region and train-test in quick mode, shared runs counted once, at
    the default 10 runs side by side: about 4 minutes of the suite's 15."""
    from app.runner import PER_RUN_OVERHEAD_S
    experiments = (ContestWarmupA(NO_TRACES), ContestWarmupB(NO_TRACES),
                   ContestWarmupC(NO_TRACES), ContestRegion(NO_TRACES),
                   ContestTrainTest(NO_TRACES))
    unique = {s.run_id(): s for e in experiments for s in e.matrix(quick=True)}
    assert all(s.duration_s is not None for s in unique.values())
    slot_seconds = sum(s.duration_s + PER_RUN_OVERHEAD_S for s in unique.values()
                       if s.duration_s is not None)
    assert slot_seconds / 10 <= 240
