"""sprout-fig7 and sprout-risk: their matrices, and figures drawn from hand-made runs."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from experiments.sprout.self_inflicted import OmniscientReferences
from core.results import ExperimentStore
from core.settings import SettingError
from app.runner import PER_RUN_OVERHEAD_S
from experiments.registry import get_experiment
from experiments.sprout.fig7 import DOWNLINK, SCHEMES, UPLINK, SproutFig7
from experiments.sprout.risk import SproutRisk
from tests.unit.fake_runs import add_done, add_failed, trace_set, write_trace

ONE_PER_MS = range(1, 1001)  # 1 s, one opportunity per ms: omniscient p95 e2e = 1 + 20 ms
# The ms a fake run's signal delay covers; on ONE_PER_MS each waits 1 ms at best.
AXIS = {"signal_delay_first_ms": 0, "signal_delay_last_ms": 500}
PRESENT = ("Verizon-LTE-short", "Verizon-EVDO-driving", "TMobile-UMTS-driving")


def _traces(directory: Path, bases=PRESENT):
    for base in bases:
        for end in ("down", "up"):
            write_trace(directory, f"{base}.{end}", ONE_PER_MS)
    return trace_set(directory)


@pytest.fixture
def fig7(tmp_path: Path) -> SproutFig7:
    return SproutFig7(traces=_traces(tmp_path / "traces"))


def test_registered(tmp_path: Path) -> None:
    traces = trace_set(tmp_path)
    assert isinstance(get_experiment("sprout-fig7", traces), SproutFig7)
    assert isinstance(get_experiment("sprout-risk", traces), SproutRisk)


def test_full_matrix_is_every_scheme_on_every_network_with_both_directions_loaded(
        fig7: SproutFig7) -> None:
    specs = fig7.matrix(quick=False)
    assert len(specs) == 4 * 9  # one run per network and scheme gives both panels' points
    assert {s.scheme for s in specs} == set(SCHEMES) and "cubic-codel" in SCHEMES
    assert all(s.once and s.delay_ms == 20 and s.trial == 1 for s in specs)
    assert {s.queue for s in specs if s.scheme != "cubic-codel"} == {"infinite"}
    assert {s.queue for s in specs if s.scheme == "cubic-codel"} == {"codel"}
    assert all(s.option("directions") == "both" and s.option("warmup_s") == 60.0 and
               s.option("offset_s") is None for s in specs)
    assert {(s.data_trace, s.ack_trace) for s in specs} == {
        (f"{b}.down", f"{b}.up") for b in (*PRESENT, "ATT-LTE-driving")}
    one_way = fig7.one_way_variant().matrix(quick=False)
    assert len(one_way) == 4 * 2 * 9 and {s.option("directions") for s in one_way} == {"one"}
    assert {s.data_trace for s in one_way} == {f"{b}.{e}" for b in (*PRESENT, "ATT-LTE-driving")
                                               for e in ("down", "up")}
    assert not {s.run_id() for s in specs} & {s.run_id() for s in one_way}


def test_directions(fig7: SproutFig7) -> None:
    for panel in fig7.panels():
        base = panel.base
        if panel.direction == DOWNLINK:
            assert (panel.data_trace, panel.ack_trace) == (f"{base}.down", f"{base}.up")
        else:
            assert panel.direction == UPLINK
            assert (panel.data_trace, panel.ack_trace) == (f"{base}.up", f"{base}.down")
    for spec in fig7.matrix(quick=True):
        forward, reverse = fig7.panel_of(spec), fig7.panel_of(spec, reverse=True)
        assert forward is not None and forward.direction == DOWNLINK
        assert reverse is not None and reverse.direction == UPLINK
    for spec in fig7.one_way_variant().matrix(quick=True):
        assert spec.data_trace.rsplit(".", 1)[0] == spec.ack_trace.rsplit(".", 1)[0]
        assert spec.data_trace != spec.ack_trace


def test_quick_is_one_stretch_per_network_and_trials_repeat(fig7: SproutFig7) -> None:
    quick = fig7.matrix(quick=True)
    assert len(quick) == 36 and all(s.duration_s == 40.0 for s in quick)
    assert all(s.option("warmup_s") == 10.0 for s in quick)
    # The same stretch for every scheme of a network.
    for base in {s.data_trace for s in quick}:
        assert len({s.option("offset_s") for s in quick if s.data_trace == base}) == 1
    three = fig7.matrix(quick=True, trials=3)
    assert len(three) == 108 and len({s.run_id() for s in three}) == 108
    assert {s.trial for s in three} == {1, 2, 3}


def test_quick_plan_of_both_sprout_experiments(fig7: SproutFig7, tmp_path: Path) -> None:
    """sprout-fig7 and sprout-risk quick share their common runs (the run id leaves the
    experiment out); their plan at 10 side by side stays under 6 minutes of run time."""
    risk = SproutRisk(traces=fig7.traces)
    runs = {s.dirname(): s for s in [*fig7.matrix(quick=True), *risk.matrix(quick=True)]}
    assert len(runs) == 36 + 4  # Sprout 95%, Sprout-EWMA and Cubic are fig7's runs
    waves = -(-len(runs) // 10)
    assert waves * (40.0 + PER_RUN_OVERHEAD_S) < 6 * 60


def test_verizon_lte_substitute(tmp_path: Path) -> None:
    short = SproutFig7(traces=_traces(tmp_path / "a"))
    assert [p.base for p in short.panels()][:2] == ["Verizon-LTE-short"] * 2
    assert short.panels()[0].substitute and not short.panels()[2].substitute
    driving = SproutFig7(traces=_traces(tmp_path / "b", ("Verizon-LTE-driving",)))
    assert driving.panels()[0].base == "Verizon-LTE-driving"
    assert not driving.panels()[0].substitute
    # Neither here: the network's own name, so its runs fail saying what is missing.
    nothing = SproutFig7(traces=trace_set(tmp_path / "c"))
    assert nothing.panels()[0].base == "Verizon-LTE-driving"


def test_risk_matrix(tmp_path: Path) -> None:
    exp = SproutRisk(traces=_traces(tmp_path / "traces"))
    specs = exp.matrix(quick=True)
    # The paper's confidences, 95% (the default: no parameter, the forecast's 5th percentile)
    assert [s.param("confidence") for s in specs if s.scheme == "sprout"] == \
        [None, 0.75, 0.5, 0.25, 0.05]
    assert [s.scheme for s in specs if s.scheme != "sprout"] == ["sprout-ewma", "cubic"]
    assert all(s.data_trace == "TMobile-UMTS-driving.down" and s.ack_trace ==
               "TMobile-UMTS-driving.up" and s.duration_s == 40.0 and
               s.option("directions") == "both" for s in specs)
    assert all(s.once for s in exp.matrix(quick=False))
    assert len(exp.matrix(quick=False, trials=2)) == 14
    one_way = exp.one_way_variant().matrix(quick=True)
    assert {(s.data_trace, s.option("directions")) for s in one_way} == {
        ("TMobile-UMTS-driving.up", "one")}


# Throughput (Mbit/s) and p95 end-to-end delay (ms) of the hand-made runs.
FAKE = {"sprout": (2.0, 121.0), "sprout-ewma": (2.5, 321.0), "cubic": (4.0, 2021.0),
        "cubic-codel": (3.0, 171.0), "vegas": (2.0, 221.0), "reno": (4.0, 1521.0),
        "hybla": (4.0, 3021.0), "bbr": (4.0, 521.0)}
PROVIDER = {"cubic": "builtin", "reno": "builtin", "bbr": "builtin", "vegas": "ebpf",
            "hybla": "ebpf"}


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_figures_plot_finished_runs_only_and_say_what_is_missing(fig7, tmp_path) -> None:
    store = ExperimentStore(tmp_path / "results" / fig7.name)
    for spec in fig7.matrix(quick=True):
        if spec.data_trace.startswith("ATT-LTE-driving"):
            add_failed(store, spec, f"TraceMissing: trace {spec.data_trace} is missing")
        elif spec.scheme == "bic":
            add_failed(store, spec, "CcUnavailable: no provider for bic")
        else:
            thr, e2e = FAKE[spec.scheme]
            provider = PROVIDER.get(spec.scheme)
            # Both directions: the uplink (reverse) carries half the downlink's throughput.
            reverse = dict(throughput_mbps=thr / 2, p95_e2e_delay_ms=e2e, **AXIS)
            add_done(store, spec, throughput_mbps=thr, p95_e2e_delay_ms=e2e, utilization=0.5,
                     capacity_mbps=8.0, reverse=reverse, **AXIS,
                     **({"cc_provider": provider} if provider else {}))
    files = {f.name for f in fig7.make_figures(store, store.root)}
    assert {"fig7.png", "fig7.svg", "summary.csv", "missing.csv", "table.csv",
            "table.md", "paper-comparison.csv"} <= files
    assert len([f for f in files if f.startswith("panel-") and f.endswith(".png")]) == 8

    rows = _csv(store.root / "summary.csv")
    assert len(rows) == 6 * 8  # 6 panels with traces x 8 schemes that ran; no zeros
    assert not [r for r in rows if r["scheme"] == "bic" or r["data_trace"].startswith("ATT")]
    sprout = next(r for r in rows if r["scheme"] == "sprout")
    assert float(sprout["self_inflicted_delay_ms"]) == 100  # 121 - (1 + 20)
    assert (sprout["trace"], sprout["direction"], sprout["substitute"]) == \
        ("Verizon LTE", "downlink", "True")
    assert {r["label"] for r in rows if r["scheme"] == "vegas"} == {"Vegas (eBPF)"}
    assert {r["substitute"] for r in rows if r["trace"] != "Verizon LTE"} == {"False"}
    # One run, two rows: the downlink from its data log, the uplink from its reverse one.
    up = next(r for r in rows if r["scheme"] == "sprout" and r["direction"] == "uplink")
    assert up["run"] == sprout["run"] and float(up["throughput_mbps"]) == 1.0
    assert up["data_trace"] == "Verizon-LTE-short.up" and up["loads"] == "both directions"

    missing = _csv(store.root / "missing.csv")
    assert len(missing) == 9 + 3  # the ATT network's runs, and BIC on the other three

    cov = fig7.coverage(store)
    att = next(p for p in fig7.panels() if p.base == "ATT-LTE-driving")
    assert fig7.panel_notes(att, cov) == ("trace missing: ATT-LTE-driving.down", [])
    verizon = fig7.panels()[0]
    assert fig7.panel_notes(verizon, cov)[1] == [
        "BIC: no result (CcUnavailable: no provider for bic)"]
    assert "BIC (CcUnavailable: no provider for bic)" in fig7.absent_note(cov)

    table = {r["scheme"]: r for r in _csv(store.root / "table.csv")}
    # Same numbers on all 6 panels: Cubic 2/4 throughput, (2021-21)/(121-21) delay.
    assert float(table["cubic"]["speedup"]) == 0.5 and table["cubic"]["panels"] == "6"
    assert float(table["cubic"]["delay_reduction"]) == 20
    assert table["bic"]["panels"] == "0"
    md = (store.root / "table.md").read_text()
    assert "| Vegas (eBPF) | 6 | 1.00x | 1.11x | 2.00x | 2.10x | 2.00x | 0.20 s |" in md
    assert "| Cubic-CoDel | 6 | 0.67x | 0.70x | 1.50x | 1.60x |" in md

    paper = _csv(store.root / "paper-comparison.csv")
    evdo = {r["scheme"]: r for r in paper if r["trace"] == "Verizon 3G (1xEV-DO)"
            and r["direction"] == "downlink"}
    assert (evdo["sprout"]["paper_throughput_mbps"], evdo["sprout"]["paper_self_inflicted_delay_ms"]
            ) == ("0.209", "1287")
    assert evdo["cubic"]["throughput_vs_sprout"] == "2" and evdo["cubic"]["rank_by_delay"] == "5"
    assert evdo["sprout"]["rank_by_delay"] == "1" and evdo["sprout"]["paper_rank_by_delay"] == "1"
    assert evdo["cubic-codel"]["paper_throughput_mbps"] == ""  # no per-panel paper values
    assert "Verizon-LTE-short substitutes for Verizon-LTE-driving" in md


def test_no_figure_before_any_run(fig7, tmp_path) -> None:
    assert fig7.make_figures(ExperimentStore(tmp_path / "none"), tmp_path / "out") == []


def test_risk_figure(tmp_path) -> None:
    exp = SproutRisk(traces=_traces(tmp_path / "traces"))
    store = ExperimentStore(tmp_path / "results" / exp.name)
    for spec in exp.matrix(quick=True):
        c = spec.param("confidence")
        if c == 0.75:
            add_failed(store, spec, "RuntimeError: sender crashed")
            continue
        # Only the uplink (the reverse direction) is scored.
        up = dict(throughput_mbps=1 + (1 - (c or 0.95)), p95_e2e_delay_ms=121.0, **AXIS)
        add_done(store, spec, throughput_mbps=99.0, p95_e2e_delay_ms=9999.0, reverse=up, **AXIS)
    files = {f.name for f in exp.make_figures(store, store.root)}
    assert {"throughput-vs-delay.png", "summary.csv", "missing.csv"} <= files
    rows = _csv(store.root / "summary.csv")
    assert [(r["scheme"], r["confidence"]) for r in rows] == [
        ("sprout", "0.95"), ("sprout", "0.5"), ("sprout", "0.25"), ("sprout", "0.05"),
        ("sprout-ewma", ""), ("cubic", "")]
    assert {r["direction"] for r in rows} == {"uplink"}
    assert {float(r["throughput_mbps"]) < 99 for r in rows} == {True}
    assert (rows[0]["paper_throughput_mbps"], rows[0]["paper_self_inflicted_delay_ms"]) == \
        ("0.37", "136")
    assert rows[3]["paper_self_inflicted_delay_ms"] == "999"
    missing = _csv(store.root / "missing.csv")
    assert [(r["params"], r["reason"]) for r in missing] == [
        ("confidence=0.75", "RuntimeError: sender crashed")]


def test_the_papers_own_points_give_its_summary_table(fig7: SproutFig7) -> None:
    """The paper's averaging on its Figure 7 points reproduces its introduction's table."""
    paper = fig7.paper_table_values()
    assert paper["cubic"].speedup == pytest.approx(0.91, abs=0.005)
    assert paper["cubic"].delay_reduction == pytest.approx(79, abs=0.5)
    assert paper["vegas"].speedup == pytest.approx(1.1, abs=0.05)
    assert paper["vegas"].delay_reduction == pytest.approx(2.1, abs=0.05)
    assert (paper["cubic-codel"].speedup, paper["cubic-codel"].delay_reduction) == (0.70, 1.6)


def test_substitute_panels_compare_the_paper_as_ratios(fig7: SproutFig7) -> None:
    from experiments.sprout.tradeoff_points import TradeoffPoint
    verizon = fig7.panels()[0]
    assert verizon.substitute
    ours = {"sprout": TradeoffPoint("sprout", 1, 2.0, 0.0, 50.0, 0.0)}
    published = {p.scheme: p for p in fig7.published(verizon, ours)}
    # The paper's Sprout (4741 kbit/s, 73 ms) sits on ours; the others keep their ratios to it.
    assert published["sprout"].throughput_mbps == pytest.approx(2.0)
    assert published["sprout"].delay_ms == pytest.approx(50.0)
    assert published["cubic"].throughput_mbps == pytest.approx(2.0 * 5719 / 4741)
    assert published["cubic"].delay_ms == pytest.approx(50.0 * 7568 / 73)
    assert {p.label for p in published.values()} == {"paper, scaled"}
    evdo = fig7.panels()[2]
    assert {p.label for p in fig7.published(evdo, {})} == {"paper"}


def test_part_of_the_figure(tmp_path: Path) -> None:
    traces = _traces(tmp_path / "traces")
    part = SproutFig7(traces, {"networks": "ATT-LTE-driving,TMobile-UMTS-driving",
                               "schemes": "sprout, vegas"})
    specs = part.matrix(quick=False)
    assert {(s.data_trace, s.scheme) for s in specs} == {
        (f"{b}.down", s) for b in ("ATT-LTE-driving", "TMobile-UMTS-driving")
        for s in ("sprout", "vegas")}
    assert len(part.panels()) == 4
    for bad in ({"networks": "Sprint"}, {"schemes": "sprout,quic"}, {"schemes": ","}):
        with pytest.raises(SettingError, match="not among"):
            SproutFig7(traces, bad)


def _pair_far_apart(directory: Path):
    """An AT&T-like pair: the downlink trace ends at 1 s, the uplink's at 20 s."""
    write_trace(directory, "ATT-LTE-driving.down", range(1, 1001))
    write_trace(directory, "ATT-LTE-driving.up", range(1, 20001))
    return trace_set(directory)


def test_the_scored_span_is_chosen_without_a_rerun(tmp_path: Path) -> None:
    traces = _pair_far_apart(tmp_path / "traces")
    options = {"networks": "ATT-LTE-driving", "schemes": "sprout", "warmup_s": 0.0}
    paper_span = SproutFig7(traces, options)
    spec, = paper_span.matrix(quick=False)
    # The whole run scores 121 ms; the shorter trace's span (to 1 s) 71 ms; one pair of
    # logs gives both (metrics.json's scored_spans), so the same run serves every rule.
    axis = {"signal_delay_first_ms": 0, "signal_delay_last_ms": 900}
    short = dict(throughput_mbps=2.0, p95_e2e_delay_ms=71.0, duration_s=1.0, **axis,
                 reverse=dict(throughput_mbps=1.0, p95_e2e_delay_ms=71.0, duration_s=1.0,
                              **axis))
    store = ExperimentStore(tmp_path / "results" / paper_span.name)
    add_done(store, spec, throughput_mbps=1.0, p95_e2e_delay_ms=121.0, duration_s=2.0, **axis,
             reverse=dict(throughput_mbps=0.5, p95_e2e_delay_ms=121.0, duration_s=2.0, **axis),
             scored_spans={"shorter-trace": short})
    paper_span.make_figures(store, store.root)
    rows = {r["direction"]: r for r in _csv(store.root / "summary.csv")}
    # One opportunity a ms: the omniscient protocol waits 1 ms, 21 ms end to end.
    assert float(rows["downlink"]["self_inflicted_delay_ms"]) == 50
    assert (rows["uplink"]["scored_span"], rows["uplink"]["scored_until_s"]) == \
        ("shorter-trace", "1")
    whole = SproutFig7(traces, {**options, "scored_span": "whole-run"})
    whole.make_figures(store, store.root)
    rows = {r["direction"]: r for r in _csv(store.root / "summary.csv")}
    assert float(rows["downlink"]["self_inflicted_delay_ms"]) == 100
    assert float(rows["uplink"]["throughput_mbps"]) == 0.5
    assert rows["uplink"]["scored_span"] == "whole-run"
    # The panels say what was scored, and on a pair whose traces end this far apart, where
    # the paper's points fit.
    refs = OmniscientReferences(traces)
    up = next(p for p in whole.panels() if p.direction == UPLINK)
    remarks = " ".join(whole.remarks(up, False, refs))
    assert "scored 0-20 s (to the end of the run); the paper's points fit 0-1 s" in remarks
    remarks = " ".join(paper_span.remarks(up, False, refs))
    assert "scored 0-1 s (to the end of the shorter trace); the paper's points fit this" \
        in remarks
    assert "over 0-1 s" in paper_span._capacity_text(up, refs, False)


def test_traces_played_once(tmp_path: Path) -> None:
    traces = _pair_far_apart(tmp_path / "traces")
    once = SproutFig7(traces, {"networks": "ATT-LTE-driving", "trace_play": "once",
                               "warmup_s": 0.0})
    assert {s.option("trace_play") for s in once.matrix(quick=False)} == {"once"}
    # Quick stretches lie inside both traces: they are played as always.
    assert {s.option("trace_play") for s in once.matrix(quick=True)} == {None}
    assert once.figure_dir(tmp_path) == tmp_path / "once"
    refs = OmniscientReferences(traces)
    down = next(p for p in once.panels() if p.direction == DOWNLINK)
    assert "ATT-LTE-driving.down ends at 1.0 s (no service after)" in once.remarks(
        down, False, refs)
