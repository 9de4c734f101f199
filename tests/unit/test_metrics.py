"""Link metrics on hand-made logs; every expected number is worked out in the comments."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from analysis.mahimahi_log import parse_log_bytes
from analysis.metrics import (MetricsError, NoDeliveries, binned_rates, link_metrics,
                              p95, p95_index, p95_signal_delay_ms, packet_delays,
                              signal_delay_per_ms, signal_delay_series)

# Base 1000, so the times below are t = 0, 1, 3, 6, 7, 10 ms.
#   t=0  opportunity (unused)
#   t=1  A and B arrive (1500 bytes each)
#   t=3  opportunity: A leaves, delay 2 (arrived at 1)
#   t=6  opportunity: B leaves, delay 5 (arrived at 1); C arrives
#   t=7  D arrives and is dropped (1 packet, 1500 bytes)
#   t=10 opportunity: C leaves, delay 4 (arrived at 6)
HAND_LOG = b"""# mahimahi mm-link (uplink) [hand] > log
# base timestamp: 1000
1000 # 1504
1001 + 1500
1001 + 1500
1003 # 1504
1003 - 1500 2
1006 # 1504
1006 - 1500 5
1006 + 1500
1007 + 1500
1007 d 1 1500
1010 # 1504
1010 - 1500 4
"""


@pytest.fixture
def hand():
    return link_metrics(parse_log_bytes(HAND_LOG, "hand.log"), fixed_delay_ms=20)


def test_duration_capacity_throughput(hand):
    # duration: first event t=0 to last t=10 -> 0.010 s
    assert hand.duration_s == pytest.approx(0.010)
    # capacity: 4 opportunities x 1504 B x 8 = 48128 bit in 0.010 s = 4.8128 Mbit/s
    assert hand.capacity_mbps == pytest.approx(4.8128)
    # throughput: 3 departures x 1500 B x 8 = 36000 bit / 0.010 s = 3.6 Mbit/s
    assert hand.throughput_mbps == pytest.approx(3.6)
    assert hand.utilization == pytest.approx(3.6 / 4.8128)
    # ingress: 4 arrivals x 1500 B x 8 = 48000 bit / 0.010 s = 4.8 Mbit/s
    assert hand.ingress_mbps == pytest.approx(4.8)


def test_queueing_delay_percentile(hand):
    # delays sorted [2, 4, 5]; N = 3, index int(0.95 * 3) = int(2.85) = 2 -> 5 ms
    assert hand.p95_queue_delay_ms == 5


def test_signal_delay_and_derived(hand):
    # arrival ms: A 3-2=1, B 6-5=1, C 10-4=6.  SD[1] = min(2, 5) = 2, SD[6] = 4.
    # Walk t from 6 down to 1: SD[5] = SD[6]+1 = 5, SD[4] = 6, SD[3] = 7, SD[2] = 8,
    # SD[1] exists (2) and is kept.  Values [2, 8, 7, 6, 5, 4] sorted
    # [2, 4, 5, 6, 7, 8]; M = 6, index int(5.7) = 5 -> 8 ms.
    assert hand.p95_signal_delay_ms == 8
    assert (hand.signal_delay_first_ms, hand.signal_delay_last_ms) == (1, 6)  # the walk's ms
    assert hand.p95_e2e_delay_ms == 28  # + the fixed 20 ms
    assert hand.power == pytest.approx(3.6 / 0.008)  # 450 Mbit/s per s
    assert hand.score == pytest.approx(math.log(3.6) - math.log(28))


def test_counts_and_loss(hand):
    assert (hand.arrived_packets, hand.arrived_bytes) == (4, 6000)
    assert (hand.departed_packets, hand.departed_bytes) == (3, 4500)
    assert (hand.dropped_packets, hand.dropped_bytes) == (1, 1500)
    assert hand.loss == pytest.approx(1 - 4500 / 6000)
    assert hand.to_dict()["p95_signal_delay_ms"] == 8


def test_filled_values_are_never_compared_with_existing_ones():
    # ms 1: delay 10; ms 2: delay 3.  SD[1] stays 10 although SD[2]+1 = 4 is smaller.
    axis, values = signal_delay_per_ms(np.array([1, 2]), np.array([10, 3]))
    assert list(axis) == [1, 2] and list(values) == [10, 3]
    # sorted [3, 10], index int(1.9) = 1 -> 10 (a min() with SD[2]+1 would give 4)
    assert p95_signal_delay_ms(np.array([1, 2]), np.array([10, 3])) == 10


def test_signal_delay_with_a_gap_and_unsorted_input():
    # arrivals: ms 0 (delay 4), ms 5 (delays 9 and 2 -> min 2), given out of order.
    # Walk from 5: SD[4] = 3, SD[3] = 4, SD[2] = 5, SD[1] = 6, SD[0] = 4 (exists).
    axis, values = signal_delay_per_ms(np.array([5, 0, 5]), np.array([9, 4, 2]))
    assert list(axis) == [0, 1, 2, 3, 4, 5]
    assert list(values) == [4, 6, 5, 4, 3, 2]


def test_p95_index_truncates_like_the_perl_script():
    assert [p95_index(n) for n in (1, 2, 19, 20, 100)] == [0, 1, 18, 19, 95]
    assert p95(np.array([5, 1, 3])) == 5
    with pytest.raises(MetricsError):
        p95_index(0)


def test_no_departures_is_no_deliveries():
    log = parse_log_bytes(b"# base timestamp: 0\n0 # 1504\n1 + 1500\n2 # 1504\n", "idle.log")
    with pytest.raises(NoDeliveries, match=r"idle\.log: no packet left the link \(1 arrivals"):
        link_metrics(log)
    with pytest.raises(NoDeliveries):
        signal_delay_series(log)


def test_truncated_log_gives_the_metrics_of_its_complete_lines(caplog):
    with caplog.at_level(logging.WARNING):
        cut = link_metrics(parse_log_bytes(HAND_LOG + b"1011 - 15", "cut.log"), 20)
    assert "unterminated" in caplog.text
    assert cut.throughput_mbps == pytest.approx(3.6)
    assert cut.p95_signal_delay_ms == 8


def test_zero_duration_and_bad_inputs_are_errors():
    same_ms = parse_log_bytes(b"# base timestamp: 0\n4 # 1504\n4 - 100 1\n")
    with pytest.raises(MetricsError, match="duration is 0"):
        link_metrics(same_ms)
    with pytest.raises(MetricsError, match="negative"):
        link_metrics(parse_log_bytes(HAND_LOG), fixed_delay_ms=-1)
    before_base = parse_log_bytes(b"# base timestamp: 0\n0 # 1504\n2 - 100 5\n")
    with pytest.raises(MetricsError, match="before the base timestamp"):
        link_metrics(before_base)


def test_binned_rates():
    rates = binned_rates(parse_log_bytes(HAND_LOG), bin_ms=5)
    # bins of 5 ms: [0,5) [5,10) [10,15); a bin's bits / 0.005 s / 1e6
    assert list(rates.start_s) == [0.0, 0.005, 0.010]
    # opportunities at 0, 3 | 6 | 10: 2x1504x8 = 24064 bit -> 4.8128, then 2.4064 each
    assert rates.capacity_mbps == pytest.approx([4.8128, 2.4064, 2.4064])
    # departures at 3 | 6 | 10: 12000 bit each -> 2.4 Mbit/s
    assert rates.throughput_mbps == pytest.approx([2.4, 2.4, 2.4])
    # arrivals at 1, 1 | 6, 7 -> 4.8, 4.8, 0
    assert rates.ingress_mbps == pytest.approx([4.8, 4.8, 0.0])
    with pytest.raises(MetricsError):
        binned_rates(parse_log_bytes(HAND_LOG), bin_ms=0)


def test_delay_series():
    log = parse_log_bytes(HAND_LOG)
    t, d = packet_delays(log, fixed_delay_ms=20)
    assert list(t) == [0.003, 0.006, 0.010] and list(d) == [22, 25, 24]
    t, sd = signal_delay_series(log)
    assert t.tolist() == pytest.approx([0.001, 0.002, 0.003, 0.004, 0.005, 0.006])
    assert list(sd) == [2, 8, 7, 6, 5, 4]
