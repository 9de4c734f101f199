"""pcap parsing and drop verification on small captures written here with dpkt."""
from __future__ import annotations

from pathlib import Path

import pytest

from runkinds.switched_path.drop_check import verify_drops
from runkinds.switched_path.tcp_pcap import PcapError, read_flow
from tests.unit.pcap_builder import MSS, Conversation, loss_run as _loss_run


def test_retransmissions_are_told_from_originals_and_originals_are_numbered(tmp_path: Path
                                                                            ) -> None:
    c = _loss_run({2, 3})
    flow = read_flow(c.write(tmp_path / "s.pcap"))
    assert [d.original for d in flow.originals] == list(range(1, 13))
    assert [(d.seq // MSS, d.retransmission) for d in flow.retransmissions] == \
        [(1, True), (2, True)]
    assert all(d.original is None for d in flow.retransmissions)
    assert flow.mss == MSS
    assert flow.bytes_sent == 12 * MSS
    assert flow.sender == ("10.0.0.1", 20001) and flow.receiver == ("10.0.0.2", 5001)
    assert flow.syn_time_s == pytest.approx(0.0)


def test_a_capture_of_headers_only_still_gives_payload_lengths(tmp_path: Path) -> None:
    c = _loss_run({2})
    flow = read_flow(c.write(tmp_path / "s.pcap", snaplen=96))
    assert flow.mss == MSS
    assert [d.original for d in flow.originals] == list(range(1, 13))


def test_a_segment_reaching_new_data_is_an_original(tmp_path: Path) -> None:
    c = Conversation()
    c.handshake()
    c.data(0.05, 0)
    c.data(0.06, 1)
    # Inside what was sent: a retransmission, even when repacketized.
    c._tcp(0.2, True, 1_000_001 + 100, 5_000_001, 0x18, payload=MSS)
    # Starts inside segment 1 and ends past it: it carries new data, so it counts (as the
    # drop plan counts it).
    c._tcp(0.3, True, 1_000_001 + MSS + 100, 5_000_001, 0x18, payload=MSS)
    flow = read_flow(c.write(tmp_path / "s.pcap"))
    assert [d.retransmission for d in flow.data] == [False, False, True, False]
    assert [d.original for d in flow.data] == [1, 2, None, 3]


def test_sack_blocks_are_read_relative_to_the_first_data_byte(tmp_path: Path) -> None:
    c = _loss_run({2, 3})
    flow = read_flow(c.write(tmp_path / "s.pcap"))
    with_sack = [a for a in flow.acks if a.sack]
    assert with_sack, "the dupACKs carry SACK blocks"
    assert with_sack[0].ack == 1 * MSS
    assert with_sack[0].sack == ((3 * MSS, 4 * MSS),)
    assert with_sack[-1].sack == ((3 * MSS, 10 * MSS),)
    assert flow.acks[-1].ack == 12 * MSS and flow.acks[-1].sack == ()


def test_header_cwnd_is_snd_nxt_minus_the_highest_ack_in_segments(tmp_path: Path) -> None:
    c = Conversation()
    c.handshake()
    for i in range(10):
        c.data(0.05 + i * 0.001, i)
    c.ack(0.1, 4)
    c.ack(0.101, 3)  # an old ACK arriving late never lowers the highest ACK
    c.data(0.102, 10)
    flow = read_flow(c.write(tmp_path / "s.pcap"))
    series = flow.header_cwnd()
    assert [p.outstanding_segments for p in series[-13:]] == \
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 6, 6, 7]
    assert series[-1].outstanding_bytes == 7 * MSS
    assert flow.time_acked(4 * MSS) == pytest.approx(0.1)
    assert flow.time_acked(5 * MSS) is None


def test_the_data_direction_is_the_side_that_opened(tmp_path: Path) -> None:
    c = _loss_run(set())
    flow = read_flow(c.write(tmp_path / "s.pcap"), server_port=5001)
    assert flow.sender[1] == 20001
    with pytest.raises(PcapError, match="no TCP segment to or from port 9"):
        read_flow(c.write(tmp_path / "s2.pcap"), server_port=9)


def test_a_missing_or_broken_capture_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PcapError, match="no capture"):
        read_flow(tmp_path / "none.pcap")
    (tmp_path / "bad.pcap").write_bytes(b"not a pcap at all, really")
    with pytest.raises(PcapError, match="not a readable pcap"):
        read_flow(tmp_path / "bad.pcap")


# ---------------------------------------------------------------- verdicts


def _flows(tmp_path: Path, drop: set[int], lost_at_receiver: set[str]):
    c = _loss_run(drop)
    sender = read_flow(c.write(tmp_path / "s.pcap"))
    receiver = read_flow(c.write(tmp_path / "r.pcap", skip_tags=lost_at_receiver))
    return sender, receiver


def test_exactly_the_planned_drops_are_valid(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, {1, 2, 3, 4, 5}, {"o1", "o2", "o3", "o4", "o5"})
    verdict = verify_drops(sender, receiver, [1, 2, 3, 4, 5], controller_log=[5, 4, 3, 2, 1])
    assert verdict.valid, verdict.reason()
    assert verdict.dropped == (1, 2, 3, 4, 5)
    assert verdict.retransmitted == (1, 2, 3, 4, 5)
    assert verdict.lost_retransmissions == 0


def test_nothing_dropped_is_invalid(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, set(), set())
    verdict = verify_drops(sender, receiver, [1, 2])
    assert not verdict.valid
    assert "nothing was dropped" in verdict.reason()


def test_something_else_dropped_is_invalid(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, {3}, {"o3"})
    verdict = verify_drops(sender, receiver, [2])
    assert not verdict.valid
    assert "segments 3 were dropped but not planned" in verdict.reason()
    assert "planned segments 2 were not dropped" in verdict.reason()


def test_a_lost_retransmission_is_invalid(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, {2}, {"o2", "r2"})
    verdict = verify_drops(sender, receiver, [2])
    assert not verdict.valid
    assert verdict.lost_retransmissions == 1
    assert "retransmissions were lost" in verdict.reason()


def test_a_drop_never_retransmitted_is_invalid(tmp_path: Path) -> None:
    c = _loss_run(set())
    sender = read_flow(c.write(tmp_path / "s.pcap"))
    receiver = read_flow(c.write(tmp_path / "r.pcap", skip_tags={"o12"}))
    verdict = verify_drops(sender, receiver, [12])
    assert not verdict.valid
    assert "dropped segments 12 were never retransmitted" in verdict.reason()


def test_a_plan_beyond_the_flow_is_invalid(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, {1}, {"o1"})
    verdict = verify_drops(sender, receiver, [1, 40])
    assert not verdict.valid
    assert "the flow sent only 12 original segments; the plan names 40" in verdict.reason()


def test_the_controller_log_must_agree(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, {1, 2}, {"o1", "o2"})
    verdict = verify_drops(sender, receiver, [1, 2], controller_log=[1])
    assert not verdict.valid
    assert "the controller's log says it dropped 1, the plan was 1,2" in verdict.reason()
    assert verify_drops(sender, receiver, [1, 2], controller_log=[]).valid is False


def test_a_capture_that_lost_packets_is_invalid(tmp_path: Path) -> None:
    sender, receiver = _flows(tmp_path, {1}, {"o1"})
    verdict = verify_drops(sender, receiver, [1], capture_drops={"receiver": 3, "sender": 0})
    assert not verdict.valid
    assert "the receiver capture lost 3 packets" in verdict.reason()
    assert verify_drops(sender, receiver, [1], capture_drops={"receiver": 0}).valid
