"""What a run plays of its traces: spans, loops, warm-up, offsets (core/run_span.py)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from core.run_span import (BOTH, DIRECTIONS, LOOP, OFFSET_S, ONCE, ONE, TRACE_PLAY, WARMUP_S,
                           SpanError, run_span, window_trace)
from core.runspec import RunSpec, make_params
from core.traces import TraceSet, trace_duration_ms

# The AT&T LTE pair: the downlink trace lasts 786 s, the uplink trace 1,012 s.
ATT_DOWN_MS, ATT_UP_MS = 786_000, 1_012_000


def spec(data: str = "ATT-LTE-driving.down", ack: str = "ATT-LTE-driving.up",
         duration_s: float | None = None, options: Mapping[str, object] | None = None) -> RunSpec:
    return RunSpec(experiment="t", scheme="sprout", data_trace=data, ack_trace=ack,
                   duration_s=duration_s, options=make_params(**(options or {})))


def test_both_directions_last_the_longer_trace_and_the_shorter_loops() -> None:
    span = run_span(spec(options={DIRECTIONS: BOTH, WARMUP_S: 60.0}), ATT_DOWN_MS, ATT_UP_MS)
    assert span.span_ms == ATT_UP_MS and span.warmup_ms == 60_000
    assert span.scored_ms == ATT_UP_MS - 60_000
    assert span.data.loops and not span.ack.loops
    assert span.data.passes == pytest.approx(1012 / 786)
    assert span.loop_note("ATT-LTE-driving.down", "ATT-LTE-driving.up") == \
        "ATT-LTE-driving.down (786 s) loops to 1012 s"


def test_one_way_lasts_the_data_trace_and_its_feedback_loops() -> None:
    down = run_span(spec(options={DIRECTIONS: ONE}), ATT_DOWN_MS, ATT_UP_MS)
    assert down.span_ms == ATT_DOWN_MS and down.one_pass and not down.ack.loops
    # The uplink's data trace outlasts its ACK trace by 226 s: the ACK trace loops, so
    # feedback crosses the link until the end.
    up = run_span(spec("ATT-LTE-driving.up", "ATT-LTE-driving.down"), ATT_UP_MS, ATT_DOWN_MS)
    assert up.span_ms == ATT_UP_MS and not up.data.loops and up.ack.loops
    assert not up.both_directions


def _att_present() -> bool:
    traces = TraceSet.for_project()
    return all(traces.locate(f"ATT-LTE-driving.{d}") is not None for d in ("down", "up"))


@pytest.mark.skipif(not _att_present(), reason="the AT&T LTE traces are not on this machine "
                    "(the synthetic tests above cover the computation)")
def test_the_att_lte_pair_from_its_trace_files() -> None:
    traces = TraceSet.for_project()
    down = trace_duration_ms(traces.resolve("ATT-LTE-driving.down"))
    up = trace_duration_ms(traces.resolve("ATT-LTE-driving.up"))
    assert round(down / 1000) == 786 and round(up / 1000) == 1012
    span = run_span(spec(options={DIRECTIONS: BOTH}), down, up)
    assert span.span_ms == up and span.data.loops and not span.ack.loops


def test_a_quick_stretch() -> None:
    options = {DIRECTIONS: BOTH, WARMUP_S: 20.0, OFFSET_S: 220.0}
    span = run_span(spec(duration_s=60.0, options=options), ATT_DOWN_MS, ATT_UP_MS)
    assert (span.offset_ms, span.span_ms, span.warmup_ms, span.scored_ms) == \
        (220_000, 60_000, 20_000, 40_000)
    assert not span.data.loops and not span.ack.loops and not span.one_pass
    assert span.describe() == "220 s into the traces, 60 s played, first 20 s not scored"


def test_spans_that_cannot_be_played() -> None:
    with pytest.raises(SpanError, match="nothing"):
        run_span(spec(duration_s=60.0, options={WARMUP_S: 60.0}), ATT_DOWN_MS, ATT_UP_MS)
    with pytest.raises(SpanError, match="needs a duration"):
        run_span(spec(options={OFFSET_S: 10.0}), ATT_DOWN_MS, ATT_UP_MS)
    with pytest.raises(SpanError, match="directions"):
        run_span(spec(options={DIRECTIONS: "sideways"}), ATT_DOWN_MS, ATT_UP_MS)


def test_a_window_loops_as_mahimahi_plays_a_trace() -> None:
    trace = np.array([0, 3, 5, 10])
    # From 8 ms: 10 (end of the first pass), 10 (0 of the second: two at the wrap), 13, 15,
    # 20...; the window ends with the first opportunity at or after its length.
    assert list(window_trace(trace, 8, 10)) == [2, 2, 5, 7, 12]
    assert list(window_trace(trace, 0, 4)) == [0, 3, 5]


def test_options_are_part_of_the_run_id() -> None:
    a = spec(options={DIRECTIONS: BOTH})
    b = spec(options={DIRECTIONS: ONE})
    c = spec(options={DIRECTIONS: BOTH, WARMUP_S: 60.0})
    assert len({a.run_id(), b.run_id(), c.run_id()}) == 3


def test_traces_played_once_last_the_longer_and_the_shorter_ends() -> None:
    options = {DIRECTIONS: BOTH, WARMUP_S: 60.0, TRACE_PLAY: ONCE}
    span = run_span(spec(options=options), ATT_DOWN_MS, ATT_UP_MS)
    assert span.once and span.span_ms == ATT_UP_MS
    # The downlink's trace ends 226 s before the run: it does not loop, it stops.
    assert not span.data.loops and span.data.ends_early and not span.ack.ends_early
    assert span.loop_note("ATT-LTE-driving.down", "ATT-LTE-driving.up") == \
        "ATT-LTE-driving.down ends at 786.0 s (no service after)"
    assert "each trace once, none looping" in span.describe()
    # Looping is the default, and what a spec without the option plays.
    assert not run_span(spec(options={DIRECTIONS: BOTH, TRACE_PLAY: LOOP}),
                        ATT_DOWN_MS, ATT_UP_MS).once
    assert spec(options=options).run_id() != spec(options={DIRECTIONS: BOTH,
                                                           WARMUP_S: 60.0}).run_id()


def test_traces_played_once_start_at_their_start() -> None:
    with pytest.raises(SpanError, match="no offset_s"):
        run_span(spec(duration_s=40.0, options={TRACE_PLAY: ONCE, OFFSET_S: 450.0}),
                 ATT_DOWN_MS, ATT_UP_MS)
    with pytest.raises(SpanError, match="trace_play"):
        run_span(spec(options={TRACE_PLAY: "twice"}), ATT_DOWN_MS, ATT_UP_MS)
