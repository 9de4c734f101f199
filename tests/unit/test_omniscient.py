"""The omniscient protocol on tiny traces worked out by hand."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from analysis.mahimahi_log import parse_log_bytes
from analysis.metrics import MetricsError, link_metrics
from analysis.omniscient import omniscient, opportunity_times, self_inflicted_delay_ms

TRACE = np.array([2, 2, 5, 10])


def test_once_by_hand():
    r = omniscient(TRACE, fixed_delay_ms=20)
    # 4 opportunities x 1504 B x 8 = 48128 bit over one pass of 10 ms -> 4.8128 Mbit/s
    assert r.opportunities == 4 and r.duration_ms == 10 and not r.looped
    assert r.throughput_mbps == pytest.approx(4.8128)
    # packets arrive 1 ms early: ms 1, 1, 4, 9, each with delay 1.
    # Walk 9..1: SD = 9:1 8:2 7:3 6:4 5:5 4:1 3:2 2:3 1:1; sorted
    # [1,1,1,2,2,3,3,4,5], M = 9, index int(8.55) = 8 -> 5 ms; + 20 ms fixed = 25
    assert r.p95_signal_delay_ms == 5
    assert r.p95_e2e_delay_ms == 25
    assert r.score == pytest.approx(math.log(4.8128) - math.log(25))


def test_looped_by_hand():
    # period 10: passes at +0, +10, +20; times < 25 ms:
    # 2 2 5 10 | 12 12 15 20 | 22 22  -> 10 opportunities, 120320 bit / 0.025 s
    times = opportunity_times(TRACE, 25)
    assert list(times) == [2, 2, 5, 10, 12, 12, 15, 20, 22, 22]
    r = omniscient(TRACE, fixed_delay_ms=20, duration_ms=25)
    assert r.looped and r.throughput_mbps == pytest.approx(4.8128)
    # arrival ms with a packet: 1 4 9 11 14 19 21 (value 1).  Filling 21..1 gives
    # seven 1s, six 2s (3 8 10 13 18 20), four 3s (2 7 12 17), two 4s (6 16),
    # two 5s (5 15): M = 21, index int(19.95) = 19 -> 5 ms
    assert r.p95_signal_delay_ms == 5


def test_wrap_of_a_trace_starting_at_zero_doubles_the_wrap_instant():
    # period = last value 3: 0 3 | 3 6 | 6 9 -> two opportunities at 3 and at 6
    assert list(opportunity_times(np.array([0, 3]), 7)) == [0, 3, 3, 6, 6]


def test_agrees_with_the_metrics_of_the_equivalent_log():
    # The omniscient stream written as a mahimahi log gives the same signal delay.
    lines = [b"# base timestamp: 0"]
    for t in TRACE:
        lines += [b"%d + 1504" % (t - 1), b"%d # 1504" % t, b"%d - 1504 1" % t]
    m = link_metrics(parse_log_bytes(b"\n".join(lines) + b"\n"), fixed_delay_ms=20)
    assert m.p95_e2e_delay_ms == omniscient(TRACE, 20).p95_e2e_delay_ms


def test_reads_a_trace_file(tmp_path: Path):
    path = tmp_path / "t.up"
    path.write_text("2\n2\n5\n10\n")
    assert omniscient(path, 0).opportunities == 4


def test_self_inflicted_delay():
    log = parse_log_bytes(b"# base timestamp: 0\n0 # 1504\n1 + 1500\n4 # 1504\n4 - 1500 3\n")
    # one packet: arrival ms 1, delay 3 -> p95 signal 3 ms, e2e 23 ms
    scheme = link_metrics(log, fixed_delay_ms=20)
    ref = omniscient(TRACE, 20)  # e2e 25 ms (see test_once_by_hand)
    assert self_inflicted_delay_ms(scheme, ref) == -2
    assert self_inflicted_delay_ms(40.0, ref) == 15
    with pytest.raises(MetricsError, match="fixed delay"):
        self_inflicted_delay_ms(link_metrics(log, fixed_delay_ms=10), ref)


def test_bad_inputs():
    with pytest.raises(MetricsError):
        omniscient(np.array([0]), 20)
    with pytest.raises(MetricsError):
        omniscient(TRACE, -1)
    with pytest.raises(MetricsError):
        omniscient(np.array([5, 10]), 20, duration_ms=3)  # nothing before 3 ms
