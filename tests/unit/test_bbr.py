"""The BBR experiment without a network: its plan (every spec checked by its kind), the
paper's numbers, BBR's phases from hand-made samples, the measures on hand-made logs, the
validity rules, and every claim judged passing and failing on hand-made rows."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analysis.claims.model import FAIL, FULL, NOT_RUN, PASS, QUICK, evaluate_all
from analysis.queue_log import parse_queue_log_text
from analysis.socket_samples import Connection
from analysis.summary import RunRecord
from core.run_kind import WHOLE_POOL
from experiments.bbr import derive, model
from experiments.bbr.claims import CLAIMS
from experiments.bbr.experiment import LOSSES, QUICK_LOSSES, Bbr
from experiments.bbr.phases import (Phase, cycle_periods, cycle_starts, first_probe_bw_s,
                                    phases, probe_rtt_episodes)
from experiments.bbr.rows import FIG5, FIG8, fig5_rows, fig8_rows, gaps_within
from experiments.bbr.series import FlowRun, departure_rate, packet_rtt_ms, queue_delay_ms
from experiments.bbr.studies import CONVERGENCE, LOSS, STARTUP, STEP, study_of
from experiments.registry import get_class
from kernel import tcp_buffers
from kernel.socket_samples import COLUMNS
from runkinds.registry import kind_of
from tests.unit.fake_runs import trace_set


# ------------------------------------------------------------------ the plan

def test_the_experiment_is_found_by_the_registry() -> None:
    assert get_class("bbr") is Bbr


def test_quick_is_the_startup_pair_the_step_and_three_losses(tmp_path: Path) -> None:
    specs = Bbr().matrix(quick=True)
    assert [study_of(s) for s in specs] == [STARTUP, STARTUP, STEP] + [LOSS] * 6
    assert sorted({s.option("loss") for s in specs if study_of(s) == LOSS}) == \
        sorted(QUICK_LOSSES)
    for spec in specs:
        kind_of(spec).check(spec, trace_set(tmp_path))
        assert spec.option("socket_sample_ms") and spec.option("queue_log")
    step = next(s for s in specs if study_of(s) == STEP)
    assert step.option("rate_steps") == "10:20,20:10" and step.duration_s == 30.0


def test_every_full_run_goes_alone_and_the_quick_10_mbps_ones_share(tmp_path: Path) -> None:
    for spec in Bbr().matrix(quick=False):
        assert kind_of(spec).slots(spec) == WHOLE_POOL, spec.run_id()
    for spec in Bbr().matrix(quick=True):
        alone = study_of(spec) == LOSS  # 100 Mbit/s
        assert (kind_of(spec).slots(spec) == WHOLE_POOL) == alone, spec.run_id()


def test_full_adds_every_loss_and_the_five_flows(tmp_path: Path) -> None:
    specs = Bbr().matrix(quick=False)
    losses = [s for s in specs if study_of(s) == LOSS]
    assert len(losses) == 26 and {s.duration_s for s in losses} == {60.0}
    assert sorted({s.option("loss") for s in losses}) == sorted(LOSSES)
    assert {s.scheme for s in losses} == {"bbr", "cubic"}
    five = [s for s in specs if study_of(s) == CONVERGENCE]
    assert len(five) == 1 and five[0].option("flows") == 5
    assert five[0].option("start_interval_s") == 2.0 and five[0].delay_ms == 5
    for spec in specs:
        kind_of(spec).check(spec, trace_set(tmp_path))
    # Fig 8's path: 100 Mbit/s, 100 ms, 2 BDP of buffer; loss on the data direction only.
    loss = losses[0]
    assert (loss.data_trace, loss.ack_trace, loss.delay_ms) == ("rate:100", "rate:100", 50)
    assert loss.queue == f"droptail:packets={round(2 * model.bdp_packets(100, 100))}"
    assert loss.option("ack_loss") is None
    # Its receivers start wide (heavy loss stalls autotuning); the other figures keep the
    # machine's buffers.
    assert {s.option(tcp_buffers.OPTION) for s in losses} == {tcp_buffers.WIDE_START}
    assert {s.option(tcp_buffers.OPTION) for s in specs if study_of(s) != LOSS} == {None}
    step = next(s for s in specs if study_of(s) == STEP)
    assert step.option("rate_steps") == "20:20,40:10" and step.duration_s == 60.0
    assert len({s.run_id() for s in specs}) == len(specs) == 30


# ------------------------------------------------------------------ the paper's numbers

def test_the_models_give_the_specs_numbers() -> None:
    assert model.bdp_packets(10, 40) == pytest.approx(33.24, abs=0.01)
    assert model.bdp_packets(100, 100) == pytest.approx(831.1, abs=0.1)
    assert model.cycle_period_ms(40) == 320
    assert model.loss_limit_mbps(0.05, 100) == pytest.approx(95.0)
    assert model.mathis_mbps(0.001, 100) == pytest.approx(4.47, abs=0.01)
    assert model.packet_time_ms(10) == pytest.approx(1.2032)


# ------------------------------------------------------------------ phases

def connection(rows: list[tuple[float, int, int]], **columns: list[float]) -> Connection:
    """Samples at (time, pacing gain, cwnd gain), other columns as given."""
    n = len(rows)
    values: dict[str, np.ndarray] = {c: np.full(n, np.nan) for c in COLUMNS
                                     if c not in ("state", "cc")}
    values["time_s"] = np.array([r[0] for r in rows])
    values["bbr_pacing_gain"] = np.array([float(r[1]) for r in rows])
    values["bbr_cwnd_gain"] = np.array([float(r[2]) for r in rows])
    for name, column in columns.items():
        values[name] = np.array(column, dtype=float)
    return Connection(1, 2, "bbr", np.array(["ESTAB"] * n), values)


def cycle(start: float, rtt: float = 0.04) -> list[tuple[float, int, int]]:
    """One ProbeBW cycle's samples, one per phase: 5/4, 3/4, then six phases of 1."""
    gains = [320, 192] + [256] * 6
    return [(start + i * rtt, g, 512) for i, g in enumerate(gains)]


def test_phases_start_at_startup_and_follow_the_gains() -> None:
    samples = [(0.0, 0, 0), (0.05, 256, 256), (0.1, 739, 739), (0.5, 88, 739)]
    samples += cycle(0.6) + cycle(0.92) + [(1.24, 256, 256), (1.5, 320, 512)]
    found = phases(connection(samples), offset_s=0.1)
    assert [p.label for p in found][:4] == ["Startup", "Drain", "ProbeBW 1.25", "ProbeBW 0.75"]
    assert found[0].start_s == pytest.approx(0.0) and found[0].end_s == pytest.approx(0.4)
    assert first_probe_bw_s(found) == pytest.approx(0.5)
    assert cycle_starts(found) == pytest.approx([0.5, 0.82, 1.4])
    # The cycle across the ProbeRTT does not count as a period.
    assert cycle_periods(found, 0.0, 2.0) == pytest.approx([0.32])
    assert [round(p.start_s, 2) for p in probe_rtt_episodes(found)] == [1.14]
    assert phases(connection([(0.0, 256, 256), (0.1, 320, 512)])) == []  # never in Startup


# ------------------------------------------------------------------ measures on hand-made logs

HEADER = "# trace: fixed 10 Mbit/s\n# base timestamp: 1000\n"


def flow(events: str, found: list[Phase], t0: float = 0.0, rtt_ms: float = 40.0) -> FlowRun:
    q = parse_queue_log_text(HEADER + events)
    return FlowRun(record=None, queue=q, samples=None, phases=found,  # type: ignore[arg-type]
                   t0_s=t0, rtt_ms=rtt_ms)


def test_the_links_record_gives_rates_rtts_and_queue_delays() -> None:
    # Ten full packets, back to back at 10 Mbit/s from 0.1 s; one lost after the queue.
    lines = [f"- {100_000 + i} {i} 1504 0 0 {101_203 + i * 1203} 0 0" for i in range(9)]
    lines.append("l 100009 9 1504 0 0 112030")
    q = parse_queue_log_text(HEADER + "\n".join(lines) + "\n")
    starts, rates = departure_rate(q, 0.1, 0.2, 0.1)
    # Ten packets of 1504 bytes left in 0.1 s: 1.2032 Mbit/s, the lost one included.
    assert rates.tolist() == pytest.approx([1.2032])
    t, rtt = packet_rtt_ms(q, 40.0)
    assert rtt[0] == pytest.approx(40.0 + 1.203) and rtt.size == 9
    arrival, delay = queue_delay_ms(q)
    assert delay.size == 10 and delay[-1] == pytest.approx(12.021)


def test_startup_is_timed_from_the_syn_and_its_queue_read_at_one_second() -> None:
    found = [Phase(0.1, 0.3, "startup", 2.89), Phase(0.3, 0.4, "drain", 0.34),
             Phase(0.4, 0.44, "probe_bw", 1.25)]
    # Backlogs 5, 20, 60 in startup; at 1 s: four packets waiting (arrived, not yet left).
    events = "".join(f"- {t} {b} 1504 0 0 {t + 5000} 0 0\n"
                     for t, b in ((120_000, 5), (200_000, 20), (290_000, 60)))
    events += "".join(f"- {999_000 + i} 0 1504 0 0 {1_010_000 + i} 0 0\n" for i in range(4))
    out = derive.startup(flow(events, found, t0=0.0), bdp=33.24)
    assert out["startup_exit_s"] == pytest.approx(0.4) and out["startup_exit_reached"]
    assert out["startup_peak_queue"] == 60
    assert out["queue_at_1s"] == 4 and out["queue_at_1s_bdp"] == pytest.approx(4 / 33.24)
    never = derive.startup(flow(events, found[:1], t0=0.0), bdp=33.24)
    assert never["startup_exit_s"] == pytest.approx(0.3) and not never["startup_exit_reached"]
    # Reported beside it: Startup's end and the RTT of its last 0.2 s (5 ms queued each).
    assert out["startup_end_s"] == pytest.approx(0.3)
    assert out["startup_last_rtt_ms"] == pytest.approx(45.0)


def test_cruising_is_measured_from_the_kernels_inflight_and_each_probes_own_rise() -> None:
    found = [Phase(2.0, 2.3, "probe_bw", 1.0), Phase(2.3, 2.34, "probe_bw", 1.25),
             Phase(2.34, 2.37, "probe_bw", 0.75), Phase(2.37, 2.6, "probe_bw", 1.0)]
    times = [1.0 + t for t in (2.0, 2.1, 2.2, 2.31, 2.35, 2.4, 2.5)]  # the log's base is 1 s
    samples = connection([(t, 256, 512) for t in times],
                         inflight=[40, 40, 41, 48, 44, 39, 40])
    run = FlowRun(record=None, queue=parse_queue_log_text(HEADER),  # type: ignore[arg-type]
                  samples=samples, phases=found, t0_s=0.0, rtt_ms=40.0)
    arrival = np.array([2.29, 2.30, 2.32, 2.33, 2.35])
    rtt = np.array([47.0, 47.0, 52.0, 59.0, 50.0])
    out = derive._cruise(run, 2.0, 3.0, arrival, rtt)
    # The samples in the two gain-1 phases: 40, 40, 41, 39, 40.
    assert out["cruise_inflight_median"] == pytest.approx(40.0)
    assert out["cruise_queue_median"] == 0.0  # nothing in the (empty) log's queue
    # The 5/4 phase's packets rose from 47 to 59 ms: its own rise is 12 ms.
    assert out["probe_rise_ms"] == pytest.approx(12.0)


def test_a_held_level_is_the_first_bin_from_which_it_lasts() -> None:
    starts = np.arange(0.0, 3.0, 0.1)
    ok = starts >= 1.0
    ok[15] = False  # one dip in the middle: the hold restarts after it
    clear = np.ones_like(ok)
    assert derive._first_held(starts, ok, clear, 0.5, 0.1) == pytest.approx(1.6)
    clear[15] = False  # a ProbeRTT bin is neither for nor against
    assert derive._first_held(starts, ok, clear, 0.5, 0.1) == pytest.approx(1.0)
    assert derive._first_held(starts, starts < 0, clear, 0.0, 0.1) is None


def test_probe_rtts_are_joint_when_every_flow_enters_within_200_ms() -> None:
    together = [[10.0, 20.2, 30.3], [10.1, 20.3, 30.4], [10.15, 20.25, 30.35]]
    out = derive.probe_rtt_sync(together, 5.0, 35.0)
    assert out["probe_rtt_joint_events"] == 3 and out["probe_rtt_unjoint_after_first"] == 0
    assert out["probe_rtt_interval_dev_s"] == pytest.approx(0.2)
    apart = [[10.0, 20.2], [10.1, 20.9], [10.15, 20.25]]
    out = derive.probe_rtt_sync(apart, 5.0, 25.0)
    assert out["probe_rtt_joint_events"] == 1 and out["probe_rtt_unjoint_after_first"] == 3
    lonely = derive.probe_rtt_sync([[10.0], [12.0], [14.0]], 5.0, 25.0)
    assert lonely["probe_rtt_joint_events"] == 0 and lonely["probe_rtt_unjoint_after_first"] == 3
    # One joint event and then 13 s without another: that wait is judged too.
    once = derive.probe_rtt_sync([[10.0], [10.1], [10.05]], 5.0, 23.0)
    assert once["probe_rtt_interval_dev_s"] == pytest.approx(3.0)


def test_jains_index() -> None:
    assert derive.jain([10.0, 10.0, 10.0]) == pytest.approx(1.0)
    assert derive.jain([30.0, 0.0, 0.0]) == pytest.approx(1 / 3)
    assert derive.jain([0.0, 0.0]) is None


# ------------------------------------------------------------------ validity

def _record(metrics: dict[str, Any], meta: dict[str, Any] | None = None) -> RunRecord:
    spec = Bbr().matrix(quick=True)[3]
    return RunRecord(spec, metrics, meta or {}, Path("/nonexistent/run"))


@pytest.mark.parametrize("metrics, meta, says", [
    (dict(window_limited="1 of 1 flows window-limited: ..."), {}, "window-limited"),
    (dict(lateness_ok=False, lateness_p99_us=2500), {}, "emulator was late"),
    (dict(host_timing_ok=False), {}, "end hosts were late"),
    (dict(gaps_within_10pct_of_schedule=0.9), {}, "90.0% of the link's backlogged"),
    (dict(gaps_within_10pct=0.9), {}, "90.0% of the link's backlogged"),
    (dict(), dict(cpu_idle_pct=12.0), "12% of its CPU time idle"),
])
def test_a_run_that_did_not_measure_the_path_is_invalid(metrics: dict, meta: dict,
                                                        says: str) -> None:
    assert says in Bbr().invalid_reason(_record(metrics, meta))


def test_a_run_that_measured_the_path_is_valid() -> None:
    good = dict(lateness_ok=True, host_timing_ok=True, gaps_within_10pct_of_schedule=0.97,
                window_limited=None)
    assert Bbr().invalid_reason(_record(good, dict(cpu_idle_pct=50.0))) == ""
    assert gaps_within({"gaps_within_10pct": 0.96}) == 0.96
    assert gaps_within({}) is None


# ------------------------------------------------------------------ rows across runs

def test_goodput_ends_where_the_link_does_not_at_the_last_sample() -> None:
    # 10 Mbit/s of acked bytes from 100.0 s; the link ends at 110.0 s; the sampler runs on
    # to 111.0 s with nothing more acked (the flow has no link): those seconds are not counted.
    t = np.arange(100.0, 111.01, 0.1)
    acked = np.minimum(t - 100.0, 10.0) * 10e6 / 8
    acked[3] = np.nan  # a sample without bytes_acked is skipped
    got = derive.goodput(t, acked, link_end_s=110.0)
    assert got["goodput_mbps"] == pytest.approx(10.0)
    assert got["goodput_span_s"] == pytest.approx(10.0)


def test_goodput_counts_a_stall_before_the_link_ends() -> None:
    t = np.arange(0.0, 10.01, 0.1)
    acked = np.minimum(t, 5.0) * 10e6 / 8  # nothing acked after 5 s: a stall, not an end
    got = derive.goodput(t, acked, link_end_s=10.0)
    assert got["goodput_mbps"] == pytest.approx(5.0)


def test_goodput_interpolates_at_the_links_end_and_refuses_an_end_before_the_flow() -> None:
    t = np.array([0.0, 1.0, 2.0])
    acked = np.array([0.0, 1e6, 2e6]) / 8
    assert derive.goodput(t, acked, link_end_s=1.5)["goodput_mbps"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="before the data connection's first sample"):
        derive.goodput(t, acked, link_end_s=-1.0)


def test_fig8s_table_pairs_the_schemes_at_each_loss() -> None:
    runs = [{"study": LOSS, "scheme": s, "loss": p, "goodput_mbps": g, "model_mbps": 100 * (1 - p),
             "run": f"{s}{p}"} for s, p, g in (("bbr", 0.01, 93.0), ("cubic", 0.01, 1.5),
                                               ("bbr", 0.2, 40.0))]
    table = fig8_rows(runs)
    assert [r["loss"] for r in table] == [0.01, 0.2]
    assert table[0]["bbr_over_cubic"] == pytest.approx(62.0)
    assert table[1]["cubic_goodput_mbps"] is None and table[1]["study"] == FIG8


def test_fig5s_ratio_pairs_the_trials_runs() -> None:
    runs = [{"study": STARTUP, "scheme": "bbr", "trial": 1, "rtt_median_ms": 44.0, "run": "b"},
            {"study": STARTUP, "scheme": "cubic", "trial": 1, "rtt_median_ms": 176.0, "run": "c"}]
    (row,) = fig5_rows(runs)
    assert row["study"] == FIG5 and row["rtt_ratio"] == pytest.approx(4.0)
    assert row["runs"] == "b c"


# ------------------------------------------------------------------ claims

def passing_rows() -> list[dict[str, Any]]:
    bbr = {"study": STARTUP, "scheme": "bbr", "trial": 1, "run": "bbr", "cycle_period_ms": 330,
           "probe_bump_ms": 10.0, "drained_share": 0.9, "delivery_within_5pct_share": 1.0,
           "startup_exit_s": 0.35, "startup_peak_queue_bdp": 1.9, "queue_at_1s_bdp": 0.1,
           "queue_delay_median_ms": 2.0, "queue_delay_p95_ms": 12.0}
    cubic = {"study": STARTUP, "scheme": "cubic", "trial": 1, "run": "cubic",
             "queue_at_1s_bdp": 1.5, "queue_slope_at_1s": 40.0, "queue_in_band_share": 0.9,
             "window_drops": 3}
    step = {"study": STEP, "scheme": "bbr", "trial": 1, "run": "step", "up_step_s": 1.4,
            "down_step_s": 2.5, "step_drops": 0, "mean_after_up_mbps": 19.6,
            "mean_after_down_mbps": 9.8}
    five = {"study": CONVERGENCE, "scheme": "bbr", "trial": 1, "run": "five",
            "aggregate_share": 0.95, "jain_after_10s_median": 0.97, "jain_last_20s_mean": 0.98,
            "probe_rtt_unjoint_after_first": 0, "probe_rtt_interval_dev_s": 0.3}
    goodput = {("bbr", p): 0.93 * 100 * (1 - p) for p in LOSSES}
    cubic_goodput = (60.0, 20.0, 5.0, 1.0, 0.8, 0.5, 0.3, 0.2, 0.1, 0.1, 0.1, 0.0, 0.0)
    goodput.update({("cubic", p): g for p, g in zip(LOSSES, cubic_goodput)})
    loss = [{"study": LOSS, "scheme": s, "loss": p, "trial": 1, "run": f"{s}{p}",
             "goodput_mbps": g, "model_mbps": 100 * (1 - p)} for (s, p), g in goodput.items()]
    fig5 = {"study": FIG5, "trial": 1, "rtt_ratio": 4.0, "runs": "bbr cubic"}
    return [bbr, cubic, step, five, fig5] + loss


def judge(rows: list[dict[str, Any]], mode: str = FULL) -> dict[str, str]:
    return {r.id: r.verdict for r in evaluate_all(CLAIMS, rows, mode)}


def test_every_claim_passes_on_rows_that_show_it() -> None:
    verdicts = judge(passing_rows())
    assert verdicts == {c.id: PASS for c in CLAIMS}


# (claim, the row it reads (by its "run"), the column and a value that breaks it)
BREAKS = [
    ("fig2-cycle-period", "bbr", "cycle_period_ms", 400.0),
    ("fig2-probe-bump", "bbr", "probe_bump_ms", 21.0),
    ("fig2-probe-bump", "bbr", "probe_bump_ms", 3.5),
    ("fig2-drain-phase", "bbr", "drained_share", 0.7),
    ("fig2-delivery-steady", "bbr", "delivery_within_5pct_share", 0.99),
    ("fig3-up-step", "step", "up_step_s", 2.1),
    ("fig3-down-step", "step", "down_step_s", 4.5),
    ("fig3-no-loss", "step", "step_drops", 1),
    ("fig3-uses-new-rate", "step", "mean_after_up_mbps", 18.9),
    ("fig3-uses-old-rate", "step", "mean_after_down_mbps", 9.4),
    ("fig4-startup-exit", "bbr", "startup_exit_s", 0.6),
    ("fig4-startup-queue", "bbr", "startup_peak_queue_bdp", 2.6),
    ("fig4-bbr-drained", "bbr", "queue_at_1s_bdp", 0.3),
    ("fig4-cubic-fills", "cubic", "queue_at_1s_bdp", 0.9),
    ("fig4-cubic-rising", "cubic", "queue_slope_at_1s", 0.0),
    ("fig5-cubic-cycles", "cubic", "queue_in_band_share", 0.7),
    ("fig5-cubic-drops", "cubic", "window_drops", 0),
    ("fig5-bbr-no-queue", "bbr", "queue_delay_median_ms", 4.5),
    ("fig5-bbr-probe-bumps", "bbr", "queue_delay_p95_ms", 21.0),
    ("fig6-aggregate", "five", "aggregate_share", 0.89),
    ("fig6-fair-share", "five", "jain_after_10s_median", 0.89),
    ("fig6-fair-late", "five", "jain_last_20s_mean", 0.94),
    ("fig6-probertt-sync", "five", "probe_rtt_unjoint_after_first", 2),
    ("fig6-probertt-period", "five", "probe_rtt_interval_dev_s", 1.5),
    ("fig8-cubic-cliff", "cubic0.001", "goodput_mbps", 10.0),
    ("fig8-cubic-stalls", "cubic0.05", "goodput_mbps", 2.5),
    ("fig8-bbr-at-limit", "bbr0.01", "goodput_mbps", 88.0),
    ("fig8-bbr-near-limit", "bbr0.05", "goodput_mbps", 80.0),
    ("fig8-bbr-close-at-15pct", "bbr0.15", "goodput_mbps", 59.0),
    ("fig8-bbr-over-cubic", "bbr0.1", "goodput_mbps", 2.0),
]


@pytest.mark.parametrize("claim, run, column, value", BREAKS)
def test_each_claim_fails_on_the_value_that_breaks_it(claim: str, run: str, column: str,
                                                      value: float) -> None:
    rows = passing_rows()
    target = next(r for r in rows if r.get("run") == run)
    target[column] = value
    verdicts = judge(rows)
    assert verdicts[claim] == FAIL
    assert [c for c, v in verdicts.items() if v != PASS] == [claim]


def test_the_ratio_claim_reads_the_derived_row() -> None:
    rows = passing_rows()
    next(r for r in rows if r["study"] == FIG5)["rtt_ratio"] = 2.5
    assert judge(rows)["fig5-rtt-ratio"] == FAIL


def test_every_claim_is_broken_by_one_case_and_says_why() -> None:
    assert {c for c, *_ in BREAKS} | {"fig5-rtt-ratio"} == {c.id for c in CLAIMS}
    assert all(c.reason for c in CLAIMS)


def test_quick_judges_what_the_quick_pass_runs() -> None:
    quick = [r for r in passing_rows() if r["study"] != CONVERGENCE and
             (r["study"] != LOSS or r["loss"] in QUICK_LOSSES)]
    verdicts = judge(quick, QUICK)
    assert verdicts["fig6-aggregate"] == NOT_RUN  # a full-run claim
    assert verdicts["fig8-bbr-close-at-15pct"] == NOT_RUN
    assert verdicts["fig8-cubic-cliff"] == verdicts["fig8-bbr-over-cubic"] == PASS
    assert verdicts["fig4-startup-exit"] == verdicts["fig3-up-step"] == PASS


def test_the_fallback_rate_halves_figs_6_and_8_and_keeps_fig_6s_bdp() -> None:
    specs = Bbr(options={"fast_mbps": 50}).matrix(quick=False)
    losses = [s for s in specs if study_of(s) == LOSS]
    assert {(s.data_trace, s.ack_trace, s.delay_ms) for s in losses} == \
        {("rate:50", "rate:50", 50)}
    buffer = round(2 * model.bdp_packets(50, 100))
    assert {s.queue for s in losses} == {f"droptail:packets={buffer}"}
    five = next(s for s in specs if study_of(s) == CONVERGENCE)
    assert (five.data_trace, five.delay_ms, five.option("rtt_ms")) == ("rate:50", 10, 20)
    assert model.bdp_packets(50, 20) == pytest.approx(model.bdp_packets(100, 10))
    # Figs 2-5 do not change: their runs are the paper's rate's.
    paper = Bbr().matrix(quick=False)
    same = [s.run_id() for s in specs if study_of(s) in (STARTUP, STEP)]
    assert same == [s.run_id() for s in paper if study_of(s) in (STARTUP, STEP)]
