"""The transfer model's time axis and loss markings, against cases computed by hand.

The path: 10 Mbit/s, a full segment takes (1448 + 56) * 8 / 10^4 = 1.2032 ms of the
bottleneck, 20 ms each way. IW10 leaves from time 0, one segment every 5 us. In the heavy
pattern (originals 1-4 and 6-8 dropped at the switch) segment 5, sent at 0.020 ms, is the
first on the link, so the ACKs of 5, 9 and 10 reach the sender at 41.2232, 42.4264 and
43.6296 ms.
"""
from __future__ import annotations

import pytest

from experiments.prr.recovery_model import PrrVariant, Recovery, column, simulate
from experiments.prr.transfer_model import (CaState, LossMarking, SenderModel, Transfer,
                                            linux_3, simulate_transfer, this_kernel)
from tests.unit.test_recovery_model import BURST_6937, RFC6937_BURST

HEAVY = frozenset({1, 2, 3, 4, 6, 7, 8})
ACK_5, ACK_9, ACK_10 = 41.2232, 42.4264, 43.6296


def test_time_axis_without_loss() -> None:
    result = simulate_transfer(this_kernel(Recovery.PRR), Transfer(size_bytes=2 * 1448))
    assert [round(e.time_ms, 4) for e in result.events] == [41.2032, 42.4064]
    assert round(result.transfer_ms or 0, 4) == 42.4064
    assert result.entry is None and result.exit_cwnd is None and result.timeouts == 0


def test_fack_marks_from_the_first_sack_and_a_few_at_a_time() -> None:
    # Linux 3.1: fackets_out 5 > reordering 3 at the first SACK: recovery, and the first
    # 5 - 3 = 2 segments are lost; at the SACK of 9, the first 9 - 3 = 6 (5 SACKed): 3, 4, 6;
    # at 10, segment 7. Rate halving: cwnd = min(10, pipe 7 + 1) = 8; then one less on every
    # second ACK (8 -> 7) and min(., pipe + 1): 5, then min(5, 3 + 1) = 4.
    result = simulate_transfer(linux_3(Recovery.RATE_HALVING), Transfer(drops=HEAVY))
    first = result.events[:3]
    assert [round(e.time_ms, 4) for e in first] == [ACK_5, ACK_9, ACK_10]
    assert [e.newly_lost for e in first] == [2, 3, 1]
    assert [e.entered for e in first] == [True, False, False]
    assert [e.pipe for e in first] == [7, 4, 3]
    assert [e.cwnd for e in first] == [8, 5, 4]
    assert [e.sent_retrans for e in first] == [1, 1, 1]
    # Segment 8 sits two below the highest SACK until new data is SACKed above it.
    marks_8 = next(e for e in result.events if e.newly_lost and e.segment > 10)
    assert marks_8.segment == 11 and marks_8.newly_lost == 1
    assert result.exit_cwnd == 3  # no growth on the ACK that ends recovery (Linux 3.1)
    assert result.min_cwnd_in_recovery() == 3


def test_rack_marks_the_whole_window_at_the_third_sack() -> None:
    # Two SACKs: the reordering window is min_rtt / 4 = 10 ms, nothing is lost yet, and each
    # SACK lets one new segment out (limited transmit: cwnd 10, pipe 9). The third: three
    # segments SACKed, the window is 0, and all seven were sent before segment 10.
    result = simulate_transfer(this_kernel(Recovery.RATE_HALVING), Transfer(drops=HEAVY))
    first = result.events[:3]
    assert [e.newly_lost for e in first] == [0, 0, 7]
    assert [e.state for e in first] == [CaState.DISORDER, CaState.DISORDER, CaState.RECOVERY]
    assert [e.sent_new for e in first] == [1, 1, 0]
    assert result.entry is first[2] and result.acks_before_entry == 2
    # pipe is the two limited-transmit segments: rate halving holds cwnd at pipe + 1 = 3,
    # and the ACK that ends recovery grows it by one in slow start.
    assert (first[2].pipe, first[2].cwnd) == (2, 3)
    assert result.min_cwnd_in_recovery() == 3 and result.exit_cwnd == 4
    assert not any(e.kind == "reo-timer" for e in result.events)


def test_rack_with_a_ten_segment_receiver_collapses_rate_halving() -> None:
    # No window beyond the first ten segments: no limited transmit, pipe 0 when all seven
    # are marked, cwnd = pipe + 1 = 1, one retransmission per round trip.
    result = simulate_transfer(this_kernel(Recovery.RATE_HALVING),
                               Transfer(drops=HEAVY, rwnd_segments=10))
    entry = result.entry
    assert entry is not None and (entry.pipe, entry.cwnd, entry.sent_retrans) == (0, 1, 1)
    inside = [e for e in result.events if e.state is CaState.RECOVERY]
    assert [e.cwnd for e in inside] == [1] * 7
    assert [e.sent_retrans for e in inside] == [1] * 7
    assert result.exit_cwnd == 2  # min(1, ssthresh 7), + 1 in slow start on that ACK
    rack_fast = simulate_transfer(this_kernel(Recovery.RATE_HALVING), Transfer(drops=HEAVY))
    assert result.transfer_ms is not None and rack_fast.transfer_ms is not None
    assert result.transfer_ms > rack_fast.transfer_ms + 4 * 40  # four round trips more


def test_rack_with_reordering_one_starts_at_the_first_sack() -> None:
    # tcp_reordering=1: one SACKed segment is enough to close the window; segments 1-4 were
    # sent before segment 5.
    result = simulate_transfer(this_kernel(Recovery.RATE_HALVING, reordering=1),
                               Transfer(drops=HEAVY))
    entry = result.entry
    assert entry is not None and round(entry.time_ms, 4) == ACK_5 and entry.newly_lost == 4


@pytest.mark.parametrize("recovery, sent", [(Recovery.RATE_HALVING, (7, 0)),
                                            (Recovery.PRR, (1, 0))])
def test_rack_without_the_dupack_threshold_enters_on_its_timer(recovery: Recovery,
                                                               sent: tuple[int, int]) -> None:
    # tcp_recovery bit 0x4: the window stays 10 ms, and each of the three SACKs lets one new
    # segment out (11, 12, 13). At the third the oldest candidate, segment 1, has
    # 10 - 0.045 ms left: 9955 us -> ceil(9956 / 4000) = 3 jiffies, + 2 (TCP_TIMEOUT_MIN) =
    # 20 ms. At the timer all seven are lost (pipe 3). Rate halving's eBPF cong_control is
    # not called there: cwnd stays 10 and all seven retransmissions go at once; the kernel's
    # PRR runs tcp_cwnd_reduction(1 delivered): min(7 - 3, 1 + 0) = 1.
    result = simulate_transfer(this_kernel(recovery, rack_dupthresh=False),
                               Transfer(drops=HEAVY))
    assert [e.newly_lost for e in result.events[:3]] == [0, 0, 0]
    assert [e.sent_new for e in result.events[:3]] == [1, 1, 1]
    timer = result.entry
    assert timer is not None and timer.kind == "reo-timer"
    assert round(timer.time_ms, 4) == round(ACK_10 + 20, 4)
    assert timer.newly_lost == 7 and timer.pipe == 3
    assert (timer.sent_retrans, timer.sent_new) == sent


def test_dupthresh_marking_needs_three_sacks_above() -> None:
    # At the third SACK (5, 9, 10): 1-4 have three SACKed segments above, 6-8 two.
    result = simulate_transfer(this_kernel(Recovery.RATE_HALVING,
                                           marking=LossMarking.DUPTHRESH),
                               Transfer(drops=HEAVY))
    assert [e.newly_lost for e in result.events[:3]] == [0, 0, 4]


def test_linux_3_retransmits_an_unmarked_hole_when_nothing_new_may_go() -> None:
    # IW4, four segments, 1 and 2 lost, the receiver offers 4. SACK of 3: fackets 3, not yet
    # recovery. SACK of 4: fackets 4 > 3, recovery, 4 - 3 = 1 lost (segment 1): R1. The ACK of
    # R1 is partial: fackets 3, nothing marked, segment 2 is a hole below the highest SACK
    # and no new data may go: forward retransmission, R2. Segment 3 (sent at 0.010 ms) is
    # ACKed at 41.2132, 4 at 42.4164, R1 at 83.6196, R2 at 124.8228 ms. Without forward
    # retransmission the sender waits for the RTO.
    transfer = Transfer(size_bytes=4 * 1448, drops=frozenset({1, 2}), rwnd_segments=4)
    result = simulate_transfer(linux_3(Recovery.RFC6675, iw=4), transfer)
    assert [e.newly_lost for e in result.events[:3]] == [0, 1, 0]
    assert [e.sent_retrans for e in result.events[:3]] == [0, 1, 1]
    assert round(result.transfer_ms or 0, 4) == 124.8228 and result.timeouts == 0
    stuck = simulate_transfer(linux_3(Recovery.RFC6675, iw=4, forward_retransmit=False),
                              transfer)
    assert stuck.timeouts == 1


def test_a_lost_only_segment_waits_for_the_rto() -> None:
    # Nothing comes back: the RTO (200 ms + the 40 ms round trip) retransmits it.
    result = simulate_transfer(this_kernel(Recovery.PRR),
                               Transfer(size_bytes=1448, drops=frozenset({1})))
    assert [e.kind for e in result.events] == ["rto", "ack"]
    assert result.timeouts == 1 and round(result.transfer_ms or 0, 4) == 281.2032


def test_bad_models_are_refused() -> None:
    with pytest.raises(ValueError):
        SenderModel(LossMarking.RACK, Recovery.PRR, base="bbr")
    with pytest.raises(ValueError):
        Transfer(drops=frozenset({0}))
    with pytest.raises(ValueError):
        Transfer(rwnd_segments=0)


def test_the_papers_prr_adds_one_on_every_ack() -> None:
    # Linux 3.2-4.2's PRR (SSRB with prior_cwnd): on RFC 6937's burst example it sends what
    # SSRB sends (RecoverFS = prior_cwnd = FlightSize = 20 there).
    _, pipe, sent, _ = RFC6937_BURST["ssrb"]
    rows = simulate(Recovery.PRR, BURST_6937, PrrVariant.LINUX_SSRB)
    assert column(rows, "sent") == sent and column(rows, "pipe") == pipe


BASE = frozenset(range(11, 15))  # prr-fig2's base pattern: the first 4 of the second window


@pytest.mark.parametrize("base, ssthresh", [("cubic", 14), ("reno", 10)])
def test_base_pattern_at_64k_decides_by_the_gap_between_pipe_and_ssthresh(
        base: str, ssthresh: int) -> None:
    """After 4 losses in a window of 20 pipe is 15. Cubic's ssthresh (14) leaves RFC 3517 two
    silent ACKs, which fall where PRR's do behind the 4 retransmissions: both send new data
    from the 6th ACK, and rate halving stops at its floor, ssthresh. Reno's (10) leaves six:
    RFC 3517 waits 10 ACKs, PRR 8, and rate halving falls toward ssthresh / 2 and exits at 8."""
    transfer = Transfer(size_bytes=65536, drops=BASE)
    runs = {r: simulate_transfer(this_kernel(r, base=base), transfer)
            for r in (Recovery.RFC6675, Recovery.PRR, Recovery.RATE_HALVING)}
    assert all(r.entry is not None and r.entry.pipe == 15 for r in runs.values())
    assert runs[Recovery.RFC6675].exit_cwnd == runs[Recovery.PRR].exit_cwnd == ssthresh
    waited = {r: result.acks_waited() for r, result in runs.items()}
    if base == "cubic":
        assert waited == {Recovery.RFC6675: 6, Recovery.PRR: 6, Recovery.RATE_HALVING: 6}
        assert runs[Recovery.RATE_HALVING].exit_cwnd == 14
    else:
        assert waited == {Recovery.RFC6675: 10, Recovery.PRR: 8, Recovery.RATE_HALVING: 8}
        assert runs[Recovery.RATE_HALVING].exit_cwnd == 8


def test_acks_waited_is_every_ack_of_recovery_when_nothing_new_was_left() -> None:
    # 32 KB: the whole transfer is out before the base pattern's losses are found.
    result = simulate_transfer(this_kernel(Recovery.RFC6675), Transfer(drops=BASE))
    assert result.entry is not None and result.exit is not None
    inside = [e for e in result.events if e.kind == "ack"
              and result.entry.time_ms <= e.time_ms < result.exit.time_ms]
    assert not any(e.sent_new for e in inside)
    assert result.acks_waited() == len(inside) == 10
    assert simulate_transfer(this_kernel(Recovery.PRR), Transfer()).acks_waited() is None
