"""Runs as throughput/self-inflicted-delay rows, and points averaged over trials."""
from __future__ import annotations

import math

import pytest

from experiments.sprout.self_inflicted import OmniscientReferences
from analysis.summary import finished_runs
from experiments.sprout.tradeoff_points import DELAY_FLOOR_MS, point_of, points_by, run_row
from core.results import ExperimentStore
from core.runspec import RunSpec
from tests.unit.fake_runs import add_done, trace_set, write_trace


def _row(scheme: str, thr: float, delay: float, provider: str | None = None) -> dict:
    return {"scheme": scheme, "throughput_mbps": thr, "self_inflicted_delay_ms": delay,
            "provider": provider}


def test_mean_and_sample_sd_over_trials() -> None:
    p = point_of([_row("vegas", 1.0, 100.0, "ebpf"), _row("vegas", 3.0, 300.0, "ebpf")])
    assert (p.trials, p.throughput_mbps, p.self_inflicted_delay_ms) == (2, 2.0, 200.0)
    assert p.throughput_sd == pytest.approx(math.sqrt(2))
    assert p.delay_sd == pytest.approx(100 * math.sqrt(2))
    assert p.label == "Vegas (eBPF)"


def test_one_trial_has_no_spread() -> None:
    p = point_of([_row("cubic", 4.0, 10.0, "builtin")])
    assert p.throughput_sd == 0 and p.delay_sd == 0 and p.label == "Cubic"


def test_delays_below_the_floor_are_drawn_at_the_floor() -> None:
    assert point_of([_row("sprout", 1.0, -3.0)]).plotted_delay_ms == DELAY_FLOOR_MS
    assert point_of([_row("sprout", 1.0, 30.0)]).plotted_delay_ms == 30.0


def test_points_group_by_scheme_or_any_key() -> None:
    rows = [_row("a", 1, 10), _row("b", 2, 20), _row("a", 3, 30)]
    points = points_by(rows)
    assert list(points) == ["a", "b"] and points["a"].throughput_mbps == 2
    rows = [dict(_row("sprout", 1, 10), confidence=c) for c in (0.05, 0.5, 0.05)]
    assert list(points_by(rows, key=lambda r: r["confidence"])) == [0.05, 0.5]


def test_a_point_never_mixes_schemes_nor_comes_from_nothing() -> None:
    with pytest.raises(ValueError):
        point_of([_row("a", 1, 1), _row("b", 1, 1)])
    with pytest.raises(ValueError):
        point_of([])


def test_run_row_reads_the_artifacts(tmp_path) -> None:
    write_trace(tmp_path / "traces", "t.down", [2, 2, 5, 10])  # p95 e2e 25 ms at 20 ms
    store = ExperimentStore(tmp_path / "exp")
    spec = RunSpec(experiment="x", scheme="vegas", data_trace="t.down", ack_trace="t.up")
    add_done(store, spec, throughput_mbps=3.5, p95_e2e_delay_ms=125.0, utilization=0.7,
             capacity_mbps=5.0, cc_provider="ebpf", cc_used="bpf_vegas",
             signal_delay_first_ms=1, signal_delay_last_ms=9)
    [record] = finished_runs(store)
    row = run_row(record, OmniscientReferences(trace_set(tmp_path / "traces")))
    assert row["self_inflicted_delay_ms"] == 100 and row["omniscient_p95_e2e_delay_ms"] == 25
    assert (row["provider"], row["cc_used"], row["label"]) == ("ebpf", "bpf_vegas",
                                                               "Vegas (eBPF)")
    assert row["run"] == record.path.name and row["trial"] == 1
