"""Self-inflicted delay of a run against the omniscient protocol on the same span."""
from __future__ import annotations

import pytest

from analysis.metrics import MetricsError
from experiments.sprout.self_inflicted import OmniscientReferences, signal_axis, span_ms
from core.runspec import RunSpec
from core.traces import TraceMissing
from tests.unit.fake_runs import trace_set, write_trace


def _spec(duration_s: float | None) -> RunSpec:
    return RunSpec(experiment="x", scheme="cubic", data_trace="t.down", ack_trace="t.up",
                   delay_ms=20, duration_s=duration_s)


def test_span_is_one_pass_for_once_runs() -> None:
    assert span_ms(None) is None
    assert span_ms(60.0) == 60000
    assert span_ms(0.0251) == 25


def _on(first: int, last: int, e2e: float) -> dict:
    return {"p95_e2e_delay_ms": e2e, "signal_delay_first_ms": first, "signal_delay_last_ms": last}


def test_self_inflicted_delay_by_hand(tmp_path) -> None:
    # The trace of tests/unit/test_omniscient.py: one pass gives a p95 e2e of
    # 5 + 20 = 25 ms; looped over 25 ms it is 5 + 20 = 25 ms too.
    write_trace(tmp_path, "t.down", [2, 2, 5, 10])
    refs = OmniscientReferences(trace_set(tmp_path))
    assert refs.for_run(_spec(None)).p95_e2e_delay_ms == 25
    assert not refs.for_run(_spec(None)).looped
    assert refs.for_run(_spec(0.025)).looped
    # On the omniscient's own ms (1..9) the reference is the whole-pass one.
    assert refs.self_inflicted_ms(_spec(None), _on(1, 9, 125.0)) == 100


def test_the_reference_is_taken_on_the_runs_own_ms(tmp_path) -> None:
    # Opportunities 2 2 5 10. A run delivering packets that arrived in ms 0..4 only
    # has its signal delay on those ms; the least wait there, per ms, for the next
    # opportunity: 0:2 1:1 2:3 3:2 4:1 -> sorted [1 1 2 2 3], element int(4.75) = 4
    # -> 3 ms, + 20 = 23 ms. Against the whole pass (25 ms) a run with 24 ms would
    # look 1 ms better than the omniscient; on its own ms it is 1 ms worse.
    write_trace(tmp_path, "t.down", [2, 2, 5, 10])
    refs = OmniscientReferences(trace_set(tmp_path))
    assert refs.for_run(_spec(None), _on(0, 4, 24)).p95_e2e_delay_ms == 23
    assert refs.self_inflicted_ms(_spec(None), _on(0, 4, 24)) == 1
    # Looped over 25 ms (passes 2 2 5 10 | 12 12 15 20 | 22 22 25 ...): on ms
    # 20..24 the waits are 2 1 3 2 1 (22 -> the third pass's 25) -> 3 ms again.
    assert refs.for_run(_spec(0.025), _on(20, 24, 30)).p95_e2e_delay_ms == 23
    # No opportunity after ms 10 in one pass: that log cannot belong to this trace.
    with pytest.raises(MetricsError, match="no opportunity after 10 ms"):
        refs.for_run(_spec(None), _on(0, 10, 30))


def test_the_runs_ms_come_from_its_log_when_metrics_lack_them(tmp_path) -> None:
    write_trace(tmp_path, "t.down", [2, 2, 5, 10])
    refs = OmniscientReferences(trace_set(tmp_path))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # two packets: arrived at ms 0 (left at 2) and ms 4 (left at 5)
    (run_dir / "data.log").write_text("# base timestamp: 0\n0 + 1500\n2 # 1504\n"
                                      "2 - 1500 2\n4 + 1500\n5 # 1504\n5 - 1500 1\n")
    assert signal_axis({}, run_dir) == (0, 4)
    assert refs.self_inflicted_ms(_spec(None), {"p95_e2e_delay_ms": 24}, run_dir) == 1
    with pytest.raises(MetricsError, match="rerun it with --force"):
        signal_axis({}, tmp_path / "nowhere")


def test_references_are_computed_once(tmp_path) -> None:
    write_trace(tmp_path, "t.down", [2, 2, 5, 10])
    refs = OmniscientReferences(trace_set(tmp_path))
    first = refs.for_run(_spec(None))
    (tmp_path / "t.down").unlink()
    assert refs.for_run(_spec(None)) is first


def test_a_missing_trace_is_named(tmp_path) -> None:
    refs = OmniscientReferences(trace_set(tmp_path))
    with pytest.raises(TraceMissing, match="t.down"):
        refs.for_run(_spec(None))
