"""The buffer-sizing experiment without a network: its plan, the paper's models, the minimum
buffer read off a grid, the sawtooth's periods, its validity rules and its claims judged on
hand-made rows."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analysis.claims.model import FAIL, FULL, NOT_RUN, PASS, QUICK, evaluate_all
from analysis.queue_log import parse_queue_log_text
from analysis.summary import RunRecord

from experiments.buffer_sizing import model, sawtooth
from experiments.buffer_sizing.claims import (CLAIMS, MIN_BUFFER, SAWTOOTH, SWEEP,
                                              RankCorrelation)
from experiments.buffer_sizing.minimum import AT_MOST, EXACT, MORE_THAN, minimum_buffer
from experiments.buffer_sizing.sizing import (BufferSizing, min_buffer_rows, rule_of,
                                              study_of)
from experiments.registry import get_class
from runkinds.registry import SHARED_BOTTLENECK, kind_of
from tests.unit.fake_runs import trace_set


# ------------------------------------------------------------------ the plan

def test_the_experiment_is_found_by_the_registry() -> None:
    assert get_class("buffer-sizing") is BufferSizing


def test_quick_is_the_sawtooth_and_64_flows_at_three_buffers(tmp_path: Path) -> None:
    specs = BufferSizing().matrix(quick=True)
    assert [study_of(s) for s in specs] == [SAWTOOTH] + [SWEEP] * 3
    assert [s.option("buffer") for s in specs[1:]] == [round(m * rule_of(64))
                                                       for m in (0.5, 1.0, 2.0)]
    for spec in specs:
        assert kind_of(spec) is SHARED_BOTTLENECK
        SHARED_BOTTLENECK.check(spec, trace_set(tmp_path))
        assert spec.queue == f"droptail:packets={spec.option('buffer')}"


def test_full_sweeps_n_with_hosts_of_the_same_mean_round_trip(tmp_path: Path) -> None:
    specs = BufferSizing().matrix(quick=False)
    sweep = [s for s in specs if study_of(s) == SWEEP]
    assert sorted({s.option("flows") for s in sweep}) == [1, 2, 4, 8, 16, 32, 64, 100]
    for spec in sweep:
        rtts = [int(r) for r in str(spec.option("host_rtts")).split(",")]
        assert round(sum(rtts) / len(rtts)) == spec.option("rtt_ms") == 100
        assert len(rtts) <= spec.option("flows")
        SHARED_BOTTLENECK.check(spec, trace_set(tmp_path))
    table = {(s.option("flows"), s.option("buffer")) for s in sweep if s.option("flows") >= 32}
    assert {(64, round(m * rule_of(64))) for m in (0.5, 1, 2, 3)} <= table
    assert len({s.run_id() for s in specs}) == len(specs) == 34


def test_sixteen_hosts_spread_the_round_trips_of_n_from_16_on(tmp_path: Path) -> None:
    four = BufferSizing().matrix(quick=False)
    sixteen = BufferSizing(options={"hosts": 16}).matrix(quick=False)
    assert len(sixteen) == len(four)
    for a, b in zip(four, sixteen):
        if study_of(a) != SWEEP or a.option("flows") < 16:
            assert a.run_id() == b.run_id()  # fewer flows: the same runs, not rerun
            continue
        rtts = [int(r) for r in str(b.option("host_rtts")).split(",")]
        assert len(rtts) == 16 and min(rtts) == 55 and max(rtts) == 145
        assert round(sum(rtts) / len(rtts)) == b.option("rtt_ms")
        assert a.run_id() != b.run_id()
        SHARED_BOTTLENECK.check(b, trace_set(tmp_path))


# ------------------------------------------------------------------ the models

@pytest.mark.parametrize("k, expected", [(0, 0.750), (0.25, 0.893), (0.5, 0.964),
                                         (0.6, 0.980), (0.7, 0.990), (1.0, 1.000)])
def test_single_flow_utilization_is_the_specs_table(k: float, expected: float) -> None:
    assert model.single_flow_utilization(k) == pytest.approx(expected, abs=0.0006)


def test_the_models_give_the_papers_numbers() -> None:
    # Figure 4: B = 142 packets, C = 1000 packets/s: T = 30.2 s.
    rate = 1000 * model.PACKET_BYTES * 8 / 1e6
    assert model.sawtooth_period_s(142, rate, 142) == pytest.approx(30.2, abs=0.1)
    # Eq. 6 at n = 10,000 with B = RTT C / sqrt(n): at least 98.99%; at n = 100 98.2%.
    assert model.utilization_lower_bound(1291, 12.91, 10000) == pytest.approx(0.9899, abs=2e-4)
    assert model.utilization_lower_bound(1291, 129.1, 100) == pytest.approx(0.982, abs=1e-3)
    assert model.rule_packets(50, 100, 100) == pytest.approx(41.6, abs=0.1)


# ------------------------------------------------------------------ the minimum buffer

def test_the_minimum_is_interpolated_in_log_buffer_between_the_grid_points() -> None:
    found = minimum_buffer([(10, 0.95), (20, 0.97), (40, 0.99), (80, 0.999)], 0.98)
    assert found is not None and found.bound == EXACT
    assert found.packets == pytest.approx(math.exp(math.log(20) + 0.5 * math.log(2)))


def test_a_minimum_the_grid_only_bounds_says_so() -> None:
    assert minimum_buffer([(10, 0.985), (20, 0.99)], 0.98).bound == AT_MOST  # type: ignore
    above = minimum_buffer([(10, 0.90), (20, 0.95)], 0.98)
    assert above is not None and above.bound == MORE_THAN and above.packets == 20
    assert minimum_buffer([], 0.98) is None


def test_a_noisy_point_below_a_failing_one_does_not_count() -> None:
    # 10 meets the target by chance, 20 does not: the minimum lies above 20.
    found = minimum_buffer([(10, 0.981), (20, 0.975), (40, 0.99)], 0.98)
    assert found is not None and found.exact and 20 < found.packets < 40
    # Trials of one buffer count by their median.
    found = minimum_buffer([(10, 0.99), (10, 0.95), (10, 0.96), (20, 0.99)], 0.98)
    assert found is not None and found.exact and 10 < found.packets < 20


# ------------------------------------------------------------------ the sawtooth

def test_drops_within_two_round_trips_are_one_loss_event() -> None:
    drops = np.array([1.0, 1.05, 1.2, 5.0, 5.1, 9.0])
    assert sawtooth.loss_events(drops, 0.25) == [1.0, 5.0, 9.0]
    assert sawtooth.loss_events(drops, 0.01) == [1.0, 1.05, 1.2, 5.0, 5.1, 9.0]


def test_periods_that_began_in_the_warm_up_are_left_out() -> None:
    # A packet every 10 ms, and drops at 1, 3, 6 and 9 s: slow start
    # ends at 1 s, so the periods are 3-6 and 6-9 s; a scored window from 4 s keeps 6-9.
    lines = ["# base timestamp: 1000"]
    for t_us in range(0, 10_000_000, 10_000):
        lines.append(f"- {t_us} 5 1504 0 0 {t_us} {t_us} {t_us}")
    lines += [f"d {t_us} 100 1504 0" for t_us in (1_000_000, 3_000_000, 6_000_000, 9_000_000)]
    q = parse_queue_log_text("\n".join(lines) + "\n")
    assert [(p.start_s, p.end_s) for p in sawtooth.periods(q, 0.5)] == [(3.0, 6.0), (6.0, 9.0)]
    kept = sawtooth.periods(q, 0.5, start_s=4.0)
    assert [(p.start_s, p.end_s) for p in kept] == [(6.0, 9.0)]


def test_a_rise_that_bends_down_is_concave_and_a_line_is_not() -> None:
    t = np.linspace(0, 3.0, 300)
    fluid = np.sqrt(2 * 833 * t + 42 ** 2) - 42  # the fluid model's Q(t)
    assert sawtooth.rises_concavely(t, fluid) is True
    assert sawtooth.rises_concavely(t, 5 + 14 * t + 0.5 * t ** 2) is False
    assert sawtooth.rises_concavely(t[:10], fluid[:10]) is None


def test_a_summary_keeps_the_highest_and_lowest_low_points() -> None:
    found = [sawtooth.Period(1.0, 4.0, 0, True), sawtooth.Period(4.0, 7.5, 2, True),
             sawtooth.Period(7.5, 10.0, 1, None)]
    s = sawtooth.summarize(found).to_dict()
    assert s == {"sawtooth_periods": 3, "period_median_s": 3.0, "period_min_queue_max": 2,
                 "period_min_queue_min": 0, "concave_share": 1.0}
    assert sawtooth.summarize([]).periods == 0


# ------------------------------------------------------------------ validity

def _record(**metrics: Any) -> RunRecord:
    spec = BufferSizing().matrix(quick=True)[1]
    return RunRecord(spec, metrics, {}, Path("/nonexistent/run"))


@pytest.mark.parametrize("metrics, says", [
    (dict(window_limited="1 of 64 flows window-limited: ..."), "window-limited"),
    (dict(lateness_ok=False, lateness_p99_us=2500), "emulator was late"),
    (dict(host_timing_ok=False), "end hosts were late"),
    (dict(gaps_within_10pct=0.85), "85.0% of the bottleneck's departure gaps"),
    (dict(cpu_idle_pct=12.0), "12% of its CPU time idle"),
])
def test_a_run_that_did_not_measure_the_path_is_invalid(metrics: dict, says: str) -> None:
    assert says in BufferSizing().invalid_reason(_record(**metrics))


def test_a_run_that_measured_the_path_is_valid() -> None:
    assert BufferSizing().invalid_reason(_record(
        lateness_ok=True, host_timing_ok=True, gaps_within_10pct=0.97, cpu_idle_pct=45.0,
        window_limited=None)) == ""


# ------------------------------------------------------------------ claims

def _sweep_rows(utilization: dict[int, dict[float, float]]) -> list[dict[str, Any]]:
    rows = []
    for n, by_multiple in utilization.items():
        for m, u in by_multiple.items():
            rows.append({"study": SWEEP, "flows": n, "planned": m, "utilization": u,
                         "buffer_packets": round(m * rule_of(n)), "run": f"r{n}-{m}",
                         "lateness_ok": True})
    return rows


def _judge(rows: list[dict[str, Any]], mode: str = FULL) -> dict[str, str]:
    return {r.id: r.verdict for r in evaluate_all(CLAIMS, rows, mode)}


def test_the_table_claims_follow_the_utilization() -> None:
    good = {n: {0.5: 0.95, 1.0: 0.985, 2.0: 0.997, 3.0: 0.999} for n in (32, 64, 100)}
    verdicts = _judge(_sweep_rows(good) + min_buffer_rows(_sweep_rows(good)))
    assert verdicts["table-one-rule"] == verdicts["table-two-rules"] == PASS
    assert verdicts["table-half-rule"] == verdicts["table-half-below-one"] == PASS
    assert verdicts["min-buffer-within-rule"] == PASS
    bad = {n: {**row, 1.0: 0.97} for n, row in good.items()}
    verdicts = _judge(_sweep_rows(bad) + min_buffer_rows(_sweep_rows(bad)))
    assert verdicts["table-one-rule"] == FAIL


def test_three_nines_ratio_is_judged_only_where_both_minima_are_interpolated() -> None:
    rows = _sweep_rows({64: {0.5: 0.95, 1.0: 0.985, 2.0: 0.997, 3.0: 0.9995}})
    minima = min_buffer_rows(rows)
    ratio = next(r for r in minima if r["target"] == 0.999)
    assert ratio["bound"] == EXACT and 1.3 <= ratio["over_98"] <= 3.5
    assert _judge(rows + minima)["three-nines-cost-about-twice"] == PASS
    never = _sweep_rows({64: {0.5: 0.95, 1.0: 0.985, 2.0: 0.997, 3.0: 0.998}})
    assert _judge(never + min_buffer_rows(never))["three-nines-cost-about-twice"] == NOT_RUN


def test_the_minimum_falls_with_n_by_rank() -> None:
    rows: list[dict[str, Any]] = [
        {"study": MIN_BUFFER, "target": 0.98, "flows": n, "min_buffer_packets": b}
        for n, b in ((1, 250), (4, 200), (16, 90), (64, 50), (100, 40))]
    check = RankCorrelation("flows", "min_buffer_packets", -0.6, where=())
    assert check.evaluate(rows).verdict == PASS
    flat = [dict(r, min_buffer_packets=100 + (r["flows"] % 3)) for r in rows]
    assert check.evaluate(flat).verdict == FAIL
    assert check.evaluate(rows[:3]).verdict == NOT_RUN


def test_quick_claims_are_judged_on_the_quick_rows() -> None:
    rows = _sweep_rows({64: {0.25: 0.94, 0.5: 0.96, 1.0: 0.985, 2.0: 0.997}})
    verdicts = _judge(rows + min_buffer_rows(rows), QUICK)
    assert verdicts["min-buffer-within-rule"] == PASS
    assert verdicts["min-buffer-falls-with-n"] == NOT_RUN  # a full-run claim


def test_every_claim_says_why_its_tolerance_is_what_it_is() -> None:
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids)) and all(c.reason for c in CLAIMS)


def test_few_flows_lie_between_the_rule_and_one_flows_need() -> None:
    def judged(two: dict[float, float]) -> tuple[dict[str, Any], dict[str, str]]:
        rows = _sweep_rows({1: {0.5: 0.965, 0.75: 0.992, 1.0: 0.999}, 2: two})
        for r in rows:
            if r["flows"] == 1:
                r["buffer_packets"] = round(r["planned"] * model.bdp_packets(50, 100))
        minima = min_buffer_rows(rows)
        return (next(r for r in minima if r["flows"] == 2 and r["target"] == 0.98),
                _judge(rows + minima))

    # One flow needs 0.63 RTT x C; the rule for two is 0.71: two flows needing 0.59 (just
    # below both) is within 0.1 of that span, 0.47 is not.
    near, verdicts = judged({0.25: 0.93, 0.5: 0.95, 1.0: 0.99, 2.0: 0.999})
    assert near["outside_between_bdp"] == pytest.approx(0.03, abs=0.01)
    assert verdicts["single-flow-needs-most-of-bdp"] == verdicts["few-flows-between"] == PASS
    far, verdicts = judged({0.25: 0.93, 0.5: 0.97, 1.0: 0.995, 2.0: 0.999})
    assert far["outside_between_bdp"] == pytest.approx(0.16, abs=0.01)
    assert verdicts["few-flows-between"] == FAIL
