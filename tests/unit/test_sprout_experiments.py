"""sprout-fig7 and sprout-risk: their matrices, and figures drawn from hand-made runs."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from core.results import ExperimentStore
from app.runner import PER_RUN_OVERHEAD_S
from experiments.registry import get_experiment
from experiments.sprout_fig7 import DOWNLINK, SCHEMES, UPLINK, SproutFig7
from experiments.sprout_risk import SproutRisk
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


def test_full_matrix_is_every_scheme_on_every_trace_both_ways(fig7: SproutFig7) -> None:
    specs = fig7.matrix(quick=False)
    assert len(specs) == 4 * 2 * 8
    assert {s.scheme for s in specs} == set(SCHEMES)
    assert all(s.once and s.delay_ms == 20 and s.queue == "infinite" and s.trial == 1
               for s in specs)
    assert {s.data_trace for s in specs} == {f"{b}.{e}" for b in (*PRESENT, "ATT-LTE-driving")
                                             for e in ("down", "up")}


def test_directions(fig7: SproutFig7) -> None:
    for panel in fig7.panels():
        base = panel.base
        if panel.direction == DOWNLINK:
            assert (panel.data_trace, panel.ack_trace) == (f"{base}.down", f"{base}.up")
        else:
            assert panel.direction == UPLINK
            assert (panel.data_trace, panel.ack_trace) == (f"{base}.up", f"{base}.down")
    for spec in fig7.matrix(quick=True):
        assert spec.data_trace.rsplit(".", 1)[0] == spec.ack_trace.rsplit(".", 1)[0]
        assert spec.data_trace != spec.ack_trace


def test_quick_is_the_first_minute_and_trials_repeat(fig7: SproutFig7) -> None:
    quick = fig7.matrix(quick=True)
    assert len(quick) == 64 and all(s.duration_s == 60.0 for s in quick)
    three = fig7.matrix(quick=True, trials=3)
    assert len(three) == 192 and len({s.run_id() for s in three}) == 192
    assert {s.trial for s in three} == {1, 2, 3}
    # 64 minute-long runs: the plan at --jobs 3 stays under half an hour
    assert sum((s.duration_s or 0.0) + PER_RUN_OVERHEAD_S for s in quick) / 3 < 30 * 60


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
    exp = SproutRisk(trace_set(tmp_path))
    specs = exp.matrix(quick=True)
    assert [s.param("confidence") for s in specs if s.scheme == "sprout"] == \
        [0.05, 0.25, 0.5, 0.75, 0.95]
    assert [s.scheme for s in specs if s.scheme != "sprout"] == ["sprout-ewma", "cubic"]
    assert all(s.data_trace == "Verizon-LTE-short.down" and s.ack_trace ==
               "Verizon-LTE-short.up" and s.duration_s == 60.0 for s in specs)
    assert all(s.once for s in exp.matrix(quick=False))
    assert len(exp.matrix(quick=False, trials=2)) == 14


# Throughput (Mbit/s) and p95 end-to-end delay (ms) of the hand-made runs.
FAKE = {"sprout": (2.0, 121.0), "sprout-ewma": (2.5, 321.0), "cubic": (4.0, 2021.0),
        "vegas": (2.0, 221.0), "reno": (4.0, 1521.0), "hybla": (4.0, 3021.0),
        "bbr": (4.0, 521.0)}
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
            add_done(store, spec, throughput_mbps=thr, p95_e2e_delay_ms=e2e, utilization=0.5,
                     capacity_mbps=8.0, **AXIS, **({"cc_provider": provider} if provider else {}))
    files = {f.name for f in fig7.make_figures(store, store.root)}
    assert {"fig7.png", "fig7.svg", "summary.csv", "missing.csv", "table.csv",
            "table.md"} <= files
    assert len([f for f in files if f.startswith("panel-") and f.endswith(".png")]) == 8

    rows = _csv(store.root / "summary.csv")
    assert len(rows) == 6 * 7  # 6 panels with traces x 7 schemes that ran; no zeros
    assert not [r for r in rows if r["scheme"] == "bic" or r["data_trace"].startswith("ATT")]
    sprout = next(r for r in rows if r["scheme"] == "sprout")
    assert float(sprout["self_inflicted_delay_ms"]) == 100  # 121 - (1 + 20)
    assert (sprout["trace"], sprout["direction"], sprout["substitute"]) == \
        ("Verizon LTE", "downlink", "True")
    assert {r["label"] for r in rows if r["scheme"] == "vegas"} == {"Vegas (eBPF)"}
    assert {r["substitute"] for r in rows if r["trace"] != "Verizon LTE"} == {"False"}

    missing = _csv(store.root / "missing.csv")
    assert len(missing) == 2 * 8 + 6  # the ATT panels, and BIC everywhere else

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
    assert "| Vegas (eBPF) | 6 | 1.00x | 1.10x | 2.00x | 2.10x |" in md
    assert "Verizon-LTE-short substitutes for Verizon-LTE-driving" in md


def test_no_figure_before_any_run(fig7, tmp_path) -> None:
    assert fig7.make_figures(ExperimentStore(tmp_path / "none"), tmp_path / "out") == []


def test_risk_figure(tmp_path) -> None:
    exp = SproutRisk(traces=_traces(tmp_path / "traces", ("Verizon-LTE-short",)))
    store = ExperimentStore(tmp_path / "results" / exp.name)
    for spec in exp.matrix(quick=True):
        c = spec.param("confidence")
        if c == 0.95:
            add_failed(store, spec, "RuntimeError: sender crashed")
            continue
        add_done(store, spec, throughput_mbps=1 + (c or 0), p95_e2e_delay_ms=121 + 100 * (c or 0),
                 **AXIS)
    files = {f.name for f in exp.make_figures(store, store.root)}
    assert {"throughput-vs-delay.png", "summary.csv", "missing.csv"} <= files
    rows = _csv(store.root / "summary.csv")
    assert [(r["scheme"], r["confidence"]) for r in rows] == [
        ("sprout", "0.05"), ("sprout", "0.25"), ("sprout", "0.5"), ("sprout", "0.75"),
        ("sprout-ewma", ""), ("cubic", "")]
    missing = _csv(store.root / "missing.csv")
    assert [(r["params"], r["reason"]) for r in missing] == [
        ("confidence=0.95", "RuntimeError: sender crashed")]
