"""The concurrency benchmark's verdicts: what makes a level hold, and which level is chosen."""
from __future__ import annotations

import json

import pytest

from core.results import ExperimentStore
from tests.unit.fake_runs import add_done
from bench.concurrency import (METRICS, SCHEMES, LevelVerdict, Measured, bench_spec,
                               chosen_level, judge, level_specs, make_baseline,
                               measured_runs)


def run(scheme: str, tput: float, delay: float, lateness: int = 200) -> Measured:
    return Measured(scheme, {"throughput_mbps": tput, "p95_e2e_delay_ms": delay}, lateness)


def verdict(jobs: int, held: bool) -> LevelVerdict:
    return LevelVerdict(jobs, held, [], {}, None, 0.0)


def test_baseline_mean_and_spread() -> None:
    b = make_baseline([run("sprout", 4.0, 100.0), run("sprout", 5.0, 100.0)])
    assert b.mean["sprout"]["throughput_mbps"] == pytest.approx(4.5)
    assert b.spread["sprout"]["throughput_mbps"] == pytest.approx(1.0 / 4.5)
    assert b.spread["sprout"]["p95_e2e_delay_ms"] == 0.0


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
    # Alone, this scheme already varies by 10%: a 5% move is no sign of contention.
    b = make_baseline([run("vegas", 4.75, 100.0), run("vegas", 5.25, 100.0)])
    assert judge(2, [run("vegas", 5.25, 100.0)], 1, b, 40.0).held
    assert not judge(2, [run("vegas", 5.6, 100.0)], 1, b, 40.0).held


def test_late_emulator_or_failed_run_fails_the_level() -> None:
    b = make_baseline([run("sprout", 4.0, 100.0)])
    late = judge(4, [run("sprout", 4.0, 100.0, lateness=2500)], 1, b, 40.0)
    assert not late.held and "lateness 2500 us" in late.problems[0]
    failed = judge(4, [run("sprout", 4.0, 100.0)], 2, b, 40.0)
    assert failed.problems == ["1 of 2 runs failed"]


def test_chosen_level_stops_at_the_first_that_did_not_hold() -> None:
    assert chosen_level([verdict(2, True), verdict(3, True), verdict(4, False),
                         verdict(5, True)]) == 3
    assert chosen_level([verdict(2, False)]) == 1
    assert chosen_level([]) == 1


@pytest.mark.parametrize("jobs", [2, 3, 4, 5, 8])
def test_each_level_runs_every_scheme_in_whole_batches(jobs: int) -> None:
    specs = level_specs(jobs, 30.0)
    assert len(specs) % jobs == 0
    assert set(SCHEMES) <= {s.scheme for s in specs}
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
