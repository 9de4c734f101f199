"""Self-inflicted delay of a run against the omniscient protocol on the same span."""
from __future__ import annotations

import pytest

from analysis.self_inflicted import OmniscientReferences, span_ms
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


def test_self_inflicted_delay_by_hand(tmp_path) -> None:
    # The trace of tests/unit/test_omniscient.py: one pass gives a p95 e2e of
    # 5 + 20 = 25 ms; looped over 25 ms it is 5 + 20 = 25 ms too.
    write_trace(tmp_path, "t.down", [2, 2, 5, 10])
    refs = OmniscientReferences(trace_set(tmp_path))
    assert refs.for_run(_spec(None)).p95_e2e_delay_ms == 25
    assert not refs.for_run(_spec(None)).looped
    assert refs.for_run(_spec(0.025)).looped
    assert refs.self_inflicted_ms(_spec(None), {"p95_e2e_delay_ms": 125.0}) == 100
    assert refs.self_inflicted_ms(_spec(None), {"p95_e2e_delay_ms": 24}) == -1


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
