"""The dctcp experiment without a network: its plan, the run kind's checks, the paper's
analysis, its summary rows and its claims judged on hand-made rows."""
from __future__ import annotations

import math
from typing import Any

import pytest

from analysis.claims.model import FAIL, FULL, NOT_RUN, PASS, QUICK, evaluate_all
from core.errors import UsageError
from core.runspec import RunSpec
from experiments.dctcp import model, paper
from experiments.dctcp.claims import CLAIMS, CLAIMS_1G, COMPARE, COMPARE_1G, FLOWS, K_SWEEP
from experiments.dctcp.queue import (FLOW_COUNTS, K_VALUES, DctcpQueue, study_of, summary_row,
                                     theory)
from experiments.registry import get_experiment
from runkinds.registry import SHARED_BOTTLENECK, kind_of
from core.run_kind import WHOLE_POOL
from runkinds.shared_bottleneck.options import (SETUP_PER_FLOW_S, SETUP_PER_HOST_S,
                                                bottleneck_options, serve_margin_s)
from tests.unit.fake_runs import trace_set


@pytest.fixture
def traces(tmp_path):
    return trace_set(tmp_path)


# ------------------------------------------------------------------ the plan

def test_quick_is_reno_and_dctcp_at_two_flows_for_20_s(traces) -> None:
    specs = DctcpQueue().matrix(quick=True)
    assert [(s.scheme, s.queue, s.duration_s) for s in specs] == [
        ("reno", "droptail:packets=425", 20.0), ("dctcp", "ecn:k=20,packets=425", 20.0)]
    for spec in specs:
        assert kind_of(spec) is SHARED_BOTTLENECK
        assert spec.option("flows") == 2 and spec.option("rtt_ms") == 1
        assert spec.data_trace == spec.ack_trace == "rate:100" and spec.delay_ms == 0
        SHARED_BOTTLENECK.check(spec, traces)
        assert SHARED_BOTTLENECK.slots(spec) == WHOLE_POOL
    # Each alone, 20 s plus the margin and the set-up: about a minute for the pair.
    total = sum(SHARED_BOTTLENECK.planned_seconds(s, traces) for s in specs)
    assert total == pytest.approx(2 * (20 + serve_margin_s(2) + 2 * (SETUP_PER_HOST_S +
                                                                     SETUP_PER_FLOW_S)))


def test_full_adds_cubic_and_both_sweeps(traces) -> None:
    specs = DctcpQueue().matrix(quick=False)
    studies: dict[str, list[RunSpec]] = {}
    for spec in specs:
        studies.setdefault(study_of(spec), []).append(spec)
        SHARED_BOTTLENECK.check(spec, traces)
    assert sorted(s.scheme for s in studies[COMPARE]) == ["cubic", "dctcp", "reno"]
    assert sorted(s.option("flows") for s in studies[FLOWS]) == sorted(
        n for n in FLOW_COUNTS if n != 2)
    sweep = studies[K_SWEEP]
    assert sorted(int(s.queue.split("k=")[1].split(",")[0]) for s in sweep) == list(K_VALUES)
    assert {(s.option("flows"), s.option("rtt_ms"), s.delay_ms) for s in sweep} == {(10, 10, 5)}
    assert len(specs) == 3 + 2 + len(K_VALUES)
    assert len({s.run_id() for s in specs}) == len(specs)


def test_red_changes_only_the_runs_that_mark() -> None:
    ecn = DctcpQueue().matrix(quick=True)
    red = get_experiment("dctcp", trace_set(__import__("pathlib").Path("/nonexistent")),
                         {"queue": "red"}).matrix(quick=True)
    assert ecn[0] == red[0]  # Reno over drop-tail: the same run, shared
    assert red[1].option("marking") == "red" and ecn[1].option("marking") == "emulator"
    assert red[1].queue == ecn[1].queue


@pytest.mark.parametrize("change, message", [
    (dict(delay_ms=1), "rtt_ms // 2"),
    (dict(ack_trace="rate:50"), "same fixed rate"),
    (dict(queue="droptail:bytes=10000"), "counted in packets"),
    (dict(duration_s=2.0), "longer than the warm-up"),
    (dict(scheme="sprout"), "the flows are TCP"),
    (dict(options=(("flows", 2), ("marking", "emulator"), ("rtt_ms", 1),
                   ("topology", "shared-bottleneck"))), "warmup_s"),
    (dict(queue="ecn:k=21,packets=425"), "disagrees with the queue"),
])
def test_the_kind_refuses_what_it_cannot_run(change: dict[str, Any], message: str,
                                             traces) -> None:
    spec = DctcpQueue().matrix(quick=True)[1]
    bad = RunSpec.from_dict({**spec.to_dict(), **change})
    with pytest.raises(UsageError, match=message):
        SHARED_BOTTLENECK.check(bad, traces)


def test_red_needs_a_threshold(traces) -> None:
    spec = DctcpQueue(options={"queue": "red"}).run_spec("reno", 2, None, 1, 20.0, 1)
    bad = RunSpec.from_dict({**spec.to_dict(), "options": {**dict(spec.options),
                                                           "marking": "red"}})
    with pytest.raises(UsageError, match="ecn:k=K,packets=N"):
        SHARED_BOTTLENECK.check(bad, traces)


# ------------------------------------------------------------------ the analysis

def test_the_analysis_at_100_mbits_and_1_ms() -> None:
    bdp = model.bdp_packets(100, 1)
    assert 8 < bdp < 10  # C RTT ~ 8 packets, plus one packet's serialization
    alpha = model.alpha_steady(bdp, 20, 2)
    assert alpha ** 2 * (1 - alpha / 4) == pytest.approx(2 / model.w_star(bdp, 20, 2))
    assert 0.3 < alpha < 0.45
    assert model.amplitude(bdp, 20, 2) == pytest.approx(0.5 * math.sqrt(4 * (bdp + 20)))
    assert 5 < model.amplitude(bdp, 20, 2) < 6 and model.q_max(20, 2) == 22
    assert model.alpha_steady(bdp, 20, 40) == 1.0  # W* below 8/3: every packet marked


def test_the_bound_is_where_the_worst_case_trough_reaches_zero() -> None:
    bdp = model.bdp_packets(100, 10)
    bound = model.k_bound(bdp)
    assert 11 < bound < 13
    for k in (bound * 0.9, bound * 1.1):
        worst = min(model.q_min(bdp, k, n) for n in range(1, 200))
        assert (worst > 0) == (k > bound)
        assert worst == pytest.approx(k - (bdp + k) / 8, abs=0.05)


def test_rows_carry_their_study_and_the_analysis() -> None:
    exp = DctcpQueue()
    spec = exp.run_spec("dctcp", 10, 3, 10, 30.0, 1)
    row = summary_row(spec, {"k": 3, "flows": 10, "rtt_ms": 10, "rate_mbps": 100.0,
                             "queue_amplitude": 20.0, "marking": "emulator"}, "run-a")
    assert row["study"] == K_SWEEP and row["k_side"] == "below" and row["run"] == "run-a"
    assert row["theory_q_min"] < 0 and row["marking"] == "emulator"
    assert row["amplitude_ratio"] == pytest.approx(20.0 / row["theory_amplitude"])
    reno = theory({"rate_mbps": 100.0, "rtt_ms": 1, "flows": 2, "k": None})
    assert "theory_q_max" not in reno and reno["k_bound"] < 2


def test_the_published_numbers_are_as_the_spec_gives_them() -> None:
    assert paper.reference("Mininet-HiFi", "dctcp").median == 21
    assert paper.reference("hardware", "tcp").p5 == 226
    assert paper.HIFI_BUFFER_PACKETS == 425 and paper.PAPER_K == 20


# ------------------------------------------------------------------ the claims

def _row(scheme: str, study: str = COMPARE, flows: int = 2, k: int | None = 20,
         rtt: int = 1, run: str = "", **metrics: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "scheme": scheme, "study": study, "flows": flows, "rtt_ms": rtt, "trial": 1,
        "k": k if scheme == "dctcp" else None, "rate_mbps": 100.0,
        "marking": "emulator" if scheme == "dctcp" else "none", "run": run or
        f"{scheme}-{study}-{flows}-{k}", "lateness_ok": True, "gaps_within_10pct": 0.99}
    if scheme == "dctcp":
        base.update(queue_median=20, queue_in_k_band=0.97, queue_max=27, queue_peak=23,
                    queue_amplitude=6.0, drops=0, goodput_mbps=95.5, alpha_mean=0.35)
    else:
        base.update(queue_median=330, queue_gap_to_95pct_buffer_s=3.0, drops=12,
                    goodput_mbps=96.0)
    base.update(metrics)
    base.update(theory(base))
    return base


def _full_rows() -> list[dict[str, Any]]:
    rows = [_row("reno"), _row("cubic", queue_median=300), _row("dctcp"),
            _row("dctcp", FLOWS, 10, queue_peak=30, queue_amplitude=11.0),
            _row("dctcp", FLOWS, 40, queue_peak=58, queue_amplitude=20.0)]
    for k, goodput in ((3, 89.0), (6, 92.5), (9, 94.0), (15, 95.0), (24, 95.5), (48, 95.6)):
        rows.append(_row("dctcp", K_SWEEP, 10, k, 10, goodput_mbps=goodput))
    return rows


def _verdicts(rows: list[dict[str, Any]], mode: str = FULL) -> dict[str, str]:
    return {r.id: r.verdict for r in evaluate_all(CLAIMS, rows, mode, "dctcp")}


def test_every_claim_passes_on_rows_that_show_the_paper() -> None:
    verdicts = _verdicts(_full_rows())
    at_1g = {c.id for c in CLAIMS_1G}
    assert {v for k, v in verdicts.items() if k not in at_1g} == {PASS}, verdicts
    # A pass at 100 Mbit/s leaves the 1-Gbit/s claims unjudged, not failed.
    assert {verdicts[k] for k in at_1g} == {NOT_RUN}


def _rows_1g(**dctcp: Any) -> list[dict[str, Any]]:
    dctcp_metrics: dict[str, Any] = {"goodput_mbps": 945.0, **dctcp}
    return [_row("reno", COMPARE_1G, rate_mbps=1000.0, queue_median=338, goodput_mbps=950.0),
            _row("dctcp", COMPARE_1G, rate_mbps=1000.0, **dctcp_metrics)]


def test_the_1g_claims_judge_the_1g_rows_against_the_hardware() -> None:
    verdicts = _verdicts(_rows_1g(), QUICK)
    assert {verdicts[c.id] for c in CLAIMS_1G} == {PASS}, verdicts
    # Rows at 1 Gbit/s are not the 100-Mbit/s comparison's.
    assert verdicts["dctcp-queue-median"] == NOT_RUN
    assert verdicts["emulator-gaps-within-10pct"] == NOT_RUN
    slow = _verdicts(_rows_1g(queue_median=40, gaps_within_10pct=0.6, goodput_mbps=900.0),
                     QUICK)
    for claim in ("dctcp-1g-queue-median", "emulator-1g-gaps-within-10pct", "goodput-1g-full",
                  "tcp-1g-10x-dctcp"):
        assert slow[claim] == FAIL, claim


def test_rate_1000_runs_the_comparison_only_at_the_papers_rate() -> None:
    for quick, schemes in ((True, ["reno", "dctcp"]), (False, ["reno", "cubic", "dctcp"])):
        specs = DctcpQueue(options={"rate": 1000}).matrix(quick=quick)
        assert [s.scheme for s in specs] == schemes
        assert {s.data_trace for s in specs} == {"rate:1000"}
        assert {study_of(s) for s in specs} == {COMPARE_1G}
    assert {study_of(s) for s in DctcpQueue().matrix(quick=False)} == {COMPARE, FLOWS, K_SWEEP}


def test_one_segment_packets_are_a_run_option_only_when_asked_for() -> None:
    # The default keeps the runs' ids; `--segments one` makes runs of their own, which the
    # shared bottleneck's options accept.
    for spec in DctcpQueue().matrix(quick=False):
        assert "one_segment_packets" not in dict(spec.options)
    specs = DctcpQueue(options={"segments": "one"}).matrix(quick=True)
    assert [dict(s.options)["one_segment_packets"] for s in specs] == [True, True]
    assert all(bottleneck_options(s)["one_segment_packets"] is True for s in specs)


def test_the_quick_pass_judges_what_it_ran_and_not_the_rest() -> None:
    rows = [_row("reno"), _row("dctcp")]
    verdicts = _verdicts(rows, QUICK)
    assert verdicts["tcp-10x-dctcp-reno"] == PASS and verdicts["dctcp-qmax-k-plus-n"] == PASS
    for claim in ("tcp-10x-dctcp-cubic", "dctcp-amplitude-grows-with-n",
                  "k-above-bound-full-goodput", "k-far-below-bound-loses"):
        assert verdicts[claim] == NOT_RUN, claim


@pytest.mark.parametrize("change, failing", [
    ({2: dict(queue_median=24)}, "dctcp-queue-median"),
    ({2: dict(queue_in_k_band=0.85)}, "dctcp-queue-in-band"),
    ({2: dict(queue_max=36)}, "dctcp-queue-max"),
    ({2: dict(drops=1)}, "dctcp-no-drops"),
    ({0: dict(queue_median=190), 2: dict(queue_median=18)}, "tcp-queue-high"),
    ({0: dict(queue_median=210), 2: dict(queue_median=22)}, "tcp-10x-dctcp-reno"),
    ({0: dict(queue_gap_to_95pct_buffer_s=12.0)}, "tcp-fills-buffer"),
    ({0: dict(drops=0)}, "tcp-drops"),
    ({0: dict(goodput_mbps=91.9)}, "goodput-full"),
    ({2: dict(goodput_mbps=94.0)}, "dctcp-goodput-as-tcp"),
    ({2: dict(alpha_mean=0.05)}, "dctcp-alpha-range"),
    ({4: dict(queue_peak=66)}, "dctcp-qmax-k-plus-n"),
    ({4: dict(queue_amplitude=60.0)}, "dctcp-amplitude-as-analysis"),
    ({4: dict(queue_amplitude=9.0)}, "dctcp-amplitude-grows-with-n"),
    ({5: dict(goodput_mbps=89.0), 6: dict(goodput_mbps=90.0), 7: dict(goodput_mbps=91.0),
      8: dict(goodput_mbps=91.5), 9: dict(goodput_mbps=91.8), 10: dict(goodput_mbps=91.9)},
     "k-above-bound-full-goodput"),
    ({5: dict(goodput_mbps=93.0)}, "k-far-below-bound-loses"),
    ({9: dict(goodput_mbps=93.5)}, "k-goodput-rises-with-k"),
    ({1: dict(gaps_within_10pct=0.8)}, "emulator-gaps-within-10pct"),
])
def test_each_claim_fails_when_its_measurement_does(change: dict[int, dict[str, Any]],
                                                    failing: str) -> None:
    rows = _full_rows()
    for index, values in change.items():
        rows[index].update(values)
        rows[index].update(theory(rows[index]))
    verdicts = _verdicts(rows)
    assert verdicts[failing] == FAIL
    assert [c for c, v in verdicts.items() if v == FAIL] == [failing]
