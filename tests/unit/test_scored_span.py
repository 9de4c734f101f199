"""The paper's scoring: a run's first part skipped, the rest scored up to where the chosen rule
ends it (analysis/metrics.py, analysis/scored_span.py), and a quick run's stretch
(experiments/sprout/stretch.py)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis.mahimahi_log import parse_log_bytes
from analysis.metrics import MetricsError, link_metrics
from analysis.scored_span import (LAST_DELIVERY, SENDERS_STOP, SHORTER_TRACE, SPANS_KEY,
                                  WHOLE_RUN, direction_metrics, rule_log, span_blocks,
                                  until_ms)
from experiments.sprout.stretch import representative_offset_ms


def _log() -> bytes:
    lines = ["# base timestamp: 0"]
    lines += [f"{t} # 1504" for t in range(0, 2001)]
    # A packet arrives at 100 ms and waits 1 s; another arrives at 1500 ms and waits 1 ms.
    lines += ["100 + 1500", "1100 - 1500 1000", "1500 + 1500", "1501 - 1500 1"]
    events = sorted(lines[1:], key=lambda line: int(line.split()[0]))
    return ("\n".join([lines[0], *events]) + "\n").encode()


def test_skipping_the_first_second_by_hand() -> None:
    log = parse_log_bytes(_log())
    whole = link_metrics(log, fixed_delay_ms=20)
    scored = link_metrics(log, fixed_delay_ms=20, from_ms=1000)
    # Sampled from 1000 ms on: at ms t the next arrival is at 1500 and waits 1 ms, so the
    # signal delay is 1 + (1500 - t) for t in 1000..1500: 501 values 1..501, element
    # int(0.95 * 501) = 475 of them sorted is 476.
    assert scored.p95_signal_delay_ms == 476 and scored.p95_e2e_delay_ms == 496
    assert (scored.signal_delay_first_ms, scored.signal_delay_last_ms) == (1000, 1500)
    # Both packets left after 1000 ms; the scored second ends with the last event (2000 ms).
    assert scored.duration_s == 1.0 and scored.throughput_mbps == pytest.approx(8 * 3000 / 1e6)
    assert scored.capacity_mbps == pytest.approx(8 * 1504 * 1001 / 1e6)
    # Without the skip the 1-s wait of the first packet is in the window.
    assert whole.signal_delay_first_ms == 100 and whole.p95_signal_delay_ms == 1330


def test_nothing_to_score_after_the_end() -> None:
    with pytest.raises(MetricsError, match="nothing to score"):
        link_metrics(parse_log_bytes(_log()), from_ms=5000)


def test_a_quick_stretch_avoids_the_unrepresentative_parts() -> None:
    """One opportunity a ms for 400 s, but three a ms from 150 to 210 s and nothing from 300
    to 340 s: the stretch's scored part (after its warm-up) is like most of the trace."""
    one: np.ndarray = np.arange(0, 400_000)
    one = one[(one < 300_000) | (one >= 340_000)]
    fast = np.repeat(np.arange(150_000, 210_000), 2)  # two more in each ms of that minute
    times = np.sort(np.concatenate([one, fast]))
    offset = representative_offset_ms(times, times, warmup_ms=10_000, scored_ms=20_000)
    start, end = offset + 10_000, offset + 30_000
    assert offset >= 60_000 and offset % 10_000 == 0
    assert end <= 150_000 or start >= 210_000
    assert end <= 300_000 or start >= 340_000
    assert representative_offset_ms(times, times, 10_000, 20_000) == offset  # deterministic


def test_traces_shorter_than_a_stretch_start_at_zero() -> None:
    assert representative_offset_ms(np.arange(1, 1000), np.arange(1, 1000), 20_000, 40_000) == 0


def test_scoring_stops_where_the_span_ends() -> None:
    log = parse_log_bytes(_log())
    # Scored [0, 1200): only the first packet (arrived 100, left 1100) left in it. The signal
    # delay is sampled on ms 100..1199: 1000 at 100 (its own packet), then the wait for the
    # packet arriving at 1500 plus its 1 ms, 1 + 1500 - t, for t = 101..1199 (1400 down to 302).
    stopped = link_metrics(log, fixed_delay_ms=20, until_ms=1200)
    assert (stopped.signal_delay_first_ms, stopped.signal_delay_last_ms) == (100, 1199)
    values = sorted([1000] + [1 + 1500 - t for t in range(101, 1200)])
    assert stopped.p95_signal_delay_ms == values[int(0.95 * len(values))]
    assert stopped.departed_packets == 1 and stopped.duration_s == 1.2
    assert stopped.capacity_mbps == pytest.approx(8 * 1504 * 1200 / 1.2 / 1e6)
    # [1000, 1502): both departures (1100 and 1501) are in it, and the signal delay is
    # sampled on ms 1000..1500 (the last arrival).
    window = link_metrics(log, fixed_delay_ms=20, from_ms=1000, until_ms=1502)
    assert window.departed_packets == 2 and window.departed_bytes == 3000
    assert (window.signal_delay_first_ms, window.signal_delay_last_ms) == (1000, 1500)
    with pytest.raises(MetricsError, match="nothing to score"):
        link_metrics(log, from_ms=1500, until_ms=1500)


def _span(data: int, ack: int, span: int) -> dict:
    return {"data_period_ms": data, "ack_period_ms": ack, "span_ms": span, "warmup_ms": 1000}


def test_where_each_rule_ends() -> None:
    log = parse_log_bytes(_log())
    # The AT&T LTE shape: the data trace (786 s) is the shorter one and loops to 1012 s.
    att = _span(786_112, 1_012_472, 1_012_472)
    assert until_ms(SHORTER_TRACE, att, log) == 786_112
    assert until_ms(WHOLE_RUN, att, log) is None
    assert until_ms(LAST_DELIVERY, att, log) == 1502  # the last departure, 1501, included
    # Traces of one length: the shorter trace ends with the run.
    assert until_ms(SHORTER_TRACE, _span(140_000, 140_000, 140_000), log) is None
    with pytest.raises(ValueError, match="scored span"):
        until_ms("half", att, log)


def test_a_rules_metrics_are_read_from_its_block() -> None:
    log = parse_log_bytes(_log())
    blocks = span_blocks({"data": log, "reverse": log}, _span(1200, 2000, 2000), 20, 0)
    assert set(blocks) == {SHORTER_TRACE, LAST_DELIVERY, SENDERS_STOP}
    metrics = {"p95_e2e_delay_ms": 1.0, "reverse": {"p95_e2e_delay_ms": 2.0},
               SPANS_KEY: blocks}
    shorter = direction_metrics(metrics, SHORTER_TRACE)
    assert shorter["scored_until_ms"] == 1200 and shorter["departed_packets"] == 1
    assert direction_metrics(metrics, SHORTER_TRACE, reverse=True)["departed_packets"] == 1
    assert direction_metrics(metrics, WHOLE_RUN)["p95_e2e_delay_ms"] == 1.0
    assert direction_metrics(metrics, WHOLE_RUN, reverse=True)["p95_e2e_delay_ms"] == 2.0
    # A run without blocks (a quick stretch) is scored whole under every rule.
    assert direction_metrics({"p95_e2e_delay_ms": 3.0}, SHORTER_TRACE)["p95_e2e_delay_ms"] == 3
    # A rule that leaves nothing to score says so when it is chosen.
    empty = span_blocks({"data": log}, _span(50, 2000, 2000), 20, 0)
    with pytest.raises(MetricsError, match="shorter trace"):
        direction_metrics({SPANS_KEY: empty}, SHORTER_TRACE)


def _log_of(packets: list[tuple[int, int]], until: int = 3000) -> bytes:
    """One opportunity a ms to `until`; each packet (arrival, departure) is 1500 bytes."""
    lines = [f"{t} # 1504" for t in range(until)]
    for arrival, departure in packets:
        lines += [f"{arrival} + 1500", f"{departure} - 1500 {departure - arrival}"]
    events = sorted(lines, key=lambda line: int(line.split()[0]))
    return ("\n".join(["# base timestamp: 0", *events]) + "\n").encode()


def test_senders_stop_at_the_shorter_traces_end() -> None:
    # The data trace (1200 ms) is the shorter one; the run plays to 3000 ms. Packets sent
    # at 100, 1100 and 1300 ms: the second waits to 1600 ms, the third is sent too late.
    log = parse_log_bytes(_log_of([(100, 150), (1100, 1600), (1300, 1350)]))
    span = {"data_period_ms": 1200, "ack_period_ms": 3000, "span_ms": 3000, "warmup_ms": 0}
    # On the longer trace's direction the link goes on delivering what was sent before
    # 1200 ms: scored to the second packet's departure.
    kept = rule_log(SENDERS_STOP, span, log, own_period_ms=3000)
    assert [int(t) for t in kept.departure_time] == [150, 1600]
    assert until_ms(SENDERS_STOP, span, kept) == 1601
    # On the shorter trace's own direction nothing is served after its end.
    ended = rule_log(SENDERS_STOP, span, log, own_period_ms=1200)
    assert [int(t) for t in ended.departure_time] == [150] and ended.last_event_ms == 150
    blocks = span_blocks({"data": log, "reverse": log}, span, 20, 0)[SENDERS_STOP]
    assert blocks["departed_packets"] == 1 and blocks["reverse"]["departed_packets"] == 2
    assert blocks["reverse"]["scored_until_ms"] == 1601
    # Traces of one length: nothing is left out.
    same = {**span, "data_period_ms": 3000}
    assert rule_log(SENDERS_STOP, same, log, own_period_ms=3000) is log
