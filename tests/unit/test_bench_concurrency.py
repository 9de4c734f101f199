"""The concurrency benchmark's verdicts: what makes a level hold, and which level is chosen."""
from __future__ import annotations

import json

import pytest

from core.results import ExperimentStore
from tests.unit.fake_runs import add_done
from bench.concurrency import (METRICS, SCHEMES, WINDOW, WINDOW_MIN_MOVE, WINDOW_SENDER,
                               LevelVerdict, Measured, bench_spec, chosen_level, default_level,
                               describe_levels, judge, level_specs, make_baseline,
                               level_outcome, measured_runs, too_noisy_alone, window_ceiling)


def run(scheme: str, tput: float, delay: float, lateness: int = 200) -> Measured:
    return Measured(scheme, {"throughput_mbps": tput, "p95_e2e_delay_ms": delay}, lateness)


def verdict(jobs: int, held: bool) -> list[LevelVerdict]:
    """A level decided on its first two attempts."""
    return [LevelVerdict(jobs, held, [], {}, None, 0.0, attempt=n) for n in (1, 2)]


def test_baseline_mean_and_spread() -> None:
    b = make_baseline([run("sprout", 4.0, 100.0), run("sprout", 5.0, 100.0)])
    assert b.mean("sprout", "throughput_mbps") == pytest.approx(4.5)
    assert b.spread("sprout", "throughput_mbps") == pytest.approx(1.0 / 4.5)
    assert b.spread("sprout", "p95_e2e_delay_ms") == 0.0


def test_a_level_within_two_percent_holds() -> None:
    b = make_baseline([run("cubic", 5.0, 200.0), run("sprout", 4.0, 100.0)])
    v = judge(2, [run("cubic", 5.09, 196.5), run("sprout", 4.0, 100.0)], 2, b, 40.0)
    assert v.held, v.problems
    assert v.max_move["throughput_mbps"] == pytest.approx(0.018)


def test_a_schemes_mean_over_the_level_is_compared() -> None:
    # One run 3% high and one 3% low average out: the scheme did not move.
    b = make_baseline([run("cubic", 5.0, 200.0)])
    assert judge(2, [run("cubic", 5.15, 200.0), run("cubic", 4.85, 200.0)], 2, b, 40.0).held


def test_a_metric_moving_more_than_two_percent_is_named() -> None:
    b = make_baseline([run("cubic", 5.0, 200.0), run("cubic", 5.0, 200.0)])
    v = judge(3, [run("cubic", 5.0, 210.0)], 1, b, 40.0)
    assert not v.held
    assert v.problems == ["cubic p95_e2e_delay_ms moved 5.0% (allowed 2.0%)"]


def test_the_schemes_own_spread_widens_what_is_allowed() -> None:
    # Six runs alone, 4.9 .. 5.1 Mbit/s: 4% apart. sd = sqrt(0.04 / 5) = 0.0894, so with two
    # runs at the level the noise term is 2 * 0.0894 * sqrt(1/6 + 1/2) / 5 = 2.9%: the
    # spread (4%) is the larger allowance.
    b = make_baseline([run("vegas", v, 100.0) for v in (5.0, 5.1, 4.9, 5.0, 5.1, 4.9)])
    assert b.allowed("vegas", "throughput_mbps", 2) == pytest.approx(0.04)
    assert judge(2, [run("vegas", 5.2, 100.0), run("vegas", 5.19, 100.0)], 2, b, 40.0).held
    v = judge(2, [run("vegas", 5.21, 100.0), run("vegas", 5.21, 100.0)], 2, b, 40.0)
    assert v.problems == ["vegas throughput_mbps moved 4.2% (allowed 4.0%)"]


def test_run_to_run_noise_widens_what_is_allowed() -> None:
    # Two runs alone, 4.9 and 5.1: sd = 0.141; one run at the level: the difference of the
    # means has a standard error of 0.141 * sqrt(1/2 + 1/1) = 0.173, twice that is 6.9% of 5,
    # more than the 4% spread.
    b = make_baseline([run("vegas", 4.9, 100.0), run("vegas", 5.1, 100.0)])
    assert b.allowed("vegas", "throughput_mbps", 1) == pytest.approx(0.0693, abs=1e-4)
    assert judge(2, [run("vegas", 5.3, 100.0)], 1, b, 40.0).held
    v = judge(2, [run("vegas", 5.4, 100.0)], 1, b, 40.0)
    assert v.problems == ["vegas throughput_mbps moved 8.0% (allowed 6.9%)"]


def test_a_metric_too_noisy_alone_is_not_judged_rather_than_allowed_its_range() -> None:
    # Vegas's 95% delay alone: 100 or 800 ms, run to run. Allowing its whole range would pass
    # it at any level; over the cap it is named as not judged and its moves do not count.
    b = make_baseline([run("vegas", 5.0, d) for d in (100.0, 800.0, 100.0, 800.0, 100.0, 120.0)]
                      + [run("cubic", 5.0, 200.0)] * 6)
    assert not b.judged("vegas", "p95_e2e_delay_ms", 2)
    assert b.judged("vegas", "throughput_mbps", 2)
    assert b.unjudged() == ["vegas p95_e2e_delay_ms"]
    v = judge(2, [run("vegas", 5.0, 800.0)] * 2 + [run("cubic", 5.0, 200.0)] * 2, 4, b, 40.0)
    assert v.held and v.unjudged == ["vegas p95_e2e_delay_ms"]
    assert v.max_move["p95_e2e_delay_ms"] == 0.0, "a move not judged is not a largest move"
    # The cap bounds the allowance: a 10% spread alone is judged, and a move past it fails.
    b = make_baseline([run("sprout", t, 100.0) for t in (4.6, 5.0, 5.06, 4.9, 4.95, 5.0)])
    assert b.judged("sprout", "throughput_mbps", 2)
    assert not judge(2, [run("sprout", 4.3, 100.0)] * 2, 2, b, 40.0).held


def test_late_emulator_or_failed_run_fails_the_level() -> None:
    b = make_baseline([run("sprout", 4.0, 100.0)])
    late = judge(4, [run("sprout", 4.0, 100.0, lateness=2500)], 1, b, 40.0)
    assert not late.held and "lateness 2500 us" in late.problems[0]
    failed = judge(4, [run("sprout", 4.0, 100.0)], 2, b, 40.0)
    assert failed.problems == ["1 of 2 runs failed"]


def attempt(jobs: int, n: int, held: bool, inconclusive: bool = False) -> LevelVerdict:
    return LevelVerdict(jobs, held, [], {}, None, 0.0, attempt=n, inconclusive=inconclusive)


def failed(jobs: int) -> list[LevelVerdict]:
    return verdict(jobs, False)


def test_chosen_level_is_the_threshold_that_fits_the_outcomes_best() -> None:
    # H H F H H H H: a lone failure below four levels that held is noise: 8 (1 disagreement).
    assert chosen_level([*verdict(2, True), *verdict(3, True), *failed(4), *verdict(5, True),
                         *verdict(6, True), *verdict(7, True), *verdict(8, True)]) == 8
    # H H H F F H F: 4 fits with one disagreement (7 held), 7 with two, 8 with three.
    assert chosen_level([*verdict(2, True), *verdict(3, True), *verdict(4, True), *failed(5),
                         *failed(6), *verdict(7, True), *failed(8)]) == 4
    # H F H F: 2 and 4 both disagree once; the tie goes to the lower level.
    assert chosen_level([*verdict(2, True), *failed(3), *verdict(4, True), *failed(5)]) == 2
    assert chosen_level([*failed(2), *failed(3)]) == 1
    assert chosen_level([]) == 1


def test_a_level_is_decided_by_two_attempts_alike_best_of_three() -> None:
    assert level_outcome([]) is None
    assert level_outcome([attempt(3, 1, True)]) is None, "one good attempt can be luck"
    assert level_outcome([attempt(3, 1, True), attempt(3, 2, True)]) == "held"
    assert level_outcome([attempt(3, 1, False)]) is None
    assert level_outcome([attempt(3, 1, False), attempt(3, 2, True)]) is None
    assert level_outcome([attempt(3, 1, False), attempt(3, 2, True),
                          attempt(3, 3, True)]) == "held"
    assert level_outcome([attempt(3, 1, True), attempt(3, 2, False),
                          attempt(3, 3, False)]) == "not held"
    assert level_outcome([attempt(3, 1, False), attempt(3, 2, False)]) == "not held"
    assert chosen_level([*verdict(2, True), attempt(3, 1, False), attempt(3, 2, True),
                         attempt(3, 3, True), *failed(4), *failed(5)]) == 3
    # One good attempt out of three does not make a level hold.
    assert chosen_level([*verdict(2, True), attempt(3, 1, True), attempt(3, 2, False),
                         attempt(3, 3, False), *failed(4)]) == 2


def test_inconclusive_attempts_do_not_count_as_failures_up_to_three() -> None:
    late = attempt(4, 1, False, inconclusive=True)
    assert level_outcome([late]) is None
    assert level_outcome([late, attempt(4, 2, True)]) is None
    assert level_outcome([late, attempt(4, 2, True), attempt(4, 3, True)]) == "held"
    assert level_outcome([late, attempt(4, 2, False)]) is None
    assert level_outcome([late, attempt(4, 2, False), attempt(4, 3, False)]) == "not held"
    undecided = [late, attempt(4, 2, True), attempt(4, 3, False)]
    assert level_outcome(undecided) == "undecided"
    assert chosen_level([*verdict(3, True)] + undecided) == 3


def test_lateness_alone_while_the_hypervisor_took_the_cpu_is_inconclusive() -> None:
    b = make_baseline([run("sprout", 4.0, 100.0)])
    late = [run("sprout", 4.0, 100.0, lateness=3500)]
    stolen = judge(4, late, 1, b, 40.0, steal_pct=5.3, steal_limit_pct=2.0)
    assert stolen.inconclusive and not stolen.held
    assert stolen.problems == ["emulator p99 lateness 3500 us > 2000 us",
                               "while the hypervisor took 5.3% of the CPU time (over 2.0%)"]
    quiet = judge(4, late, 1, b, 40.0, steal_pct=0.8, steal_limit_pct=2.0)
    assert not quiet.inconclusive and not quiet.held
    # A metric that moved is the level's own doing, whatever the hypervisor did.
    moved = judge(4, [run("sprout", 4.4, 100.0, lateness=3500)], 1, b, 40.0, 9.0, 2.0)
    assert not moved.inconclusive and not moved.held


def test_attempts_never_share_a_run_label() -> None:
    labels = [s.label() for jobs in range(2, 17) for attempt in (1, 2, 3)
              for s in level_specs(jobs, 30.0, attempt)]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize("jobs", [2, 3, 4, 5, 8])
def test_each_level_runs_every_scheme_twice_in_whole_batches(jobs: int) -> None:
    specs = level_specs(jobs, 30.0)
    assert len(specs) % jobs == 0
    assert all(sum(s.scheme == scheme for s in specs) >= 2 for scheme in SCHEMES)
    assert len({s.run_id() for s in specs}) == len(specs)


def test_runs_are_found_by_scheme_and_trial_not_trial_alone(tmp_path) -> None:
    # The baseline repeats every scheme with the same trial numbers.
    store = ExperimentStore(tmp_path / "bench-concurrency")
    specs = [bench_spec(scheme, 30, trial) for trial in (1, 2) for scheme in SCHEMES]
    for i, spec in enumerate(specs):
        run_dir = add_done(store, spec, **{m: float(i + 1) for m in METRICS})
        (run_dir / "meta.json").write_text(json.dumps(
            {"spec": spec.to_dict(), "link": {"a2b": {"lateness_us": {"p99": 100 + i}},
                                              "b2a": {"lateness_us": {"p99": 50}}}}))
    found = measured_runs(store, specs)
    assert [m.scheme for m in found] == [s.scheme for s in specs]
    assert [m.metrics[METRICS[0]] for m in found] == [float(i + 1) for i in range(len(specs))]
    assert [m.lateness_p99_us for m in found] == [100 + i for i in range(len(specs))]


def test_a_machine_that_stalls_runs_alone_is_not_judged() -> None:
    quiet = [run("sprout", 4.0, 100.0, lateness=300)] * 20
    assert too_noisy_alone(quiet) is None
    # Two late runs in 20 is within the 10% a quiet machine shows now and then; three is not.
    assert too_noisy_alone(quiet[:18] + [run("cubic", 5.0, 4600.0, lateness=34000)] * 2) is None
    why = too_noisy_alone(quiet[:17] + [run("cubic", 5.0, 4600.0, lateness=34000)] * 3)
    assert why is not None and why.startswith("3 of 20 runs alone") and "34000 us" in why


def test_levels_are_parsed_sorted_and_at_least_two() -> None:
    from app.cli import build_parser
    args = build_parser().parse_args(["bench", "concurrency", "--levels", "12,8,10,8"])
    assert args.levels == [8, 10, 12]
    for bad in ("1,4", "eight", ","):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["bench", "concurrency", "--levels", bad])


def test_levels_are_described_as_a_range_or_a_list() -> None:
    assert describe_levels([2, 3, 4, 5]) == "2..5"
    assert describe_levels([10, 12, 14]) == "10, 12, 14"
    assert describe_levels([8]) == "8"


# ---- the window-limited sender ------------------------------------------------------------

def window_runs(*tputs: float) -> list[Measured]:
    return [run(WINDOW_SENDER, t, 600.0) for t in tputs]


QUIET_ALONE = window_runs(4.800, 4.802, 4.801, 4.803, 4.800, 4.801, 4.802, 4.800, 4.803, 4.801)


def test_the_window_sender_is_warm_up_a_at_w50_on_its_trace() -> None:
    from experiments.contest.warmup_a import ContestWarmupA
    from tests.unit.test_verify import EXP
    assert isinstance(EXP, ContestWarmupA)
    warmup = next(s for s in EXP.matrix(quick=True) if s.param("window") == WINDOW)
    ours = bench_spec(WINDOW_SENDER, 30.0, 1)
    assert WINDOW_SENDER in SCHEMES and ours.param("window") == 50
    for field_name in ("scheme", "data_trace", "ack_trace", "delay_ms", "queue", "params",
                       "duration_s"):
        assert getattr(ours, field_name) == getattr(warmup, field_name), field_name


def test_its_throughput_is_allowed_its_noise_alone_not_two_percent() -> None:
    b = make_baseline(QUIET_ALONE + [run("cubic", 5.0, 200.0)] * 10)
    assert b.allowed(WINDOW_SENDER, "throughput_mbps", 2) == pytest.approx(WINDOW_MIN_MOVE)
    # Its delay keeps the 2% every other metric has.
    assert b.allowed(WINDOW_SENDER, "p95_e2e_delay_ms", 2) == pytest.approx(0.02)
    # The loss warm-up A saw at 13 side by side (1.8%) fails it, and only it.
    v = judge(13, window_runs(4.715, 4.713) + [run("cubic", 4.91, 200.0)] * 2, 4, b, 40.0)
    assert not v.held and not v.window_held
    assert v.window_move == pytest.approx(-0.0181, abs=1e-4)
    assert v.problems == ["fixed-window throughput_mbps moved 1.8% (allowed 0.5%)"]
    # A move inside its floor is no evidence.
    ok = judge(3, window_runs(4.79, 4.79) + [run("cubic", 5.0, 200.0)] * 2, 4, b, 40.0)
    assert ok.held and ok.window_held and ok.window_move == pytest.approx(-0.0024, abs=1e-4)


def test_a_noisier_window_sender_alone_widens_its_own_allowance() -> None:
    b = make_baseline(window_runs(4.75, 4.85, 4.80, 4.80, 4.78, 4.82))
    assert b.allowed(WINDOW_SENDER, "throughput_mbps", 2) == pytest.approx(0.1 / 4.8)
    assert judge(4, window_runs(4.71, 4.71), 2, b, 40.0).window_held


def window_attempt(jobs: int, n: int, held: bool, window_held: bool) -> LevelVerdict:
    return LevelVerdict(jobs, held, [], {}, None, 0.0, attempt=n, window_held=window_held)


def test_the_default_never_exceeds_the_window_senders_ceiling() -> None:
    levels = [window_attempt(2, n, True, True) for n in (1, 2)]
    levels += [window_attempt(3, n, True, True) for n in (1, 2)]
    # Level 4 failed on the window sender's throughput alone; 5 and 6 held.
    levels += [window_attempt(4, n, False, False) for n in (1, 2)]
    levels += [window_attempt(j, n, True, True) for j in (5, 6) for n in (1, 2)]
    assert chosen_level(levels) == 6, "the best fit takes the lone failure for noise..."
    assert window_ceiling(levels) == 3, "...the window sender's loss is not"
    assert default_level(levels) == 3


def test_the_window_sender_holds_a_level_in_two_of_its_attempts() -> None:
    # Failed once (its throughput), then held twice: the level and the sender hold.
    level3 = [window_attempt(3, 1, False, False), window_attempt(3, 2, True, True),
              window_attempt(3, 3, True, True)]
    # The level failed twice on another scheme, the window sender was fine both times.
    level4 = [window_attempt(4, 1, False, True), window_attempt(4, 2, False, True)]
    level5 = [window_attempt(5, 1, False, False), window_attempt(5, 2, True, True),
              window_attempt(5, 3, False, False)]
    verdicts = [*[window_attempt(2, n, True, True) for n in (1, 2)], *level3, *level4, *level5]
    assert window_ceiling(verdicts) == 4
    assert default_level(verdicts) == min(chosen_level(verdicts), 4) == 3
    # Lost at the lowest level tried: nothing is safe.
    assert window_ceiling([window_attempt(2, 1, False, False),
                           window_attempt(2, 2, False, False)]) == 1
