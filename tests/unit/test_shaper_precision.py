"""bench link (f): the gap rule both shapers are judged by, the capture's reading, refusals."""
from __future__ import annotations

from pathlib import Path

import dpkt
import pytest

from bench.shaper_precision import (EXTRA_BYTES, check_cc, departures, difference,
                                    gaps_within)
from core.errors import Unavailable

RATE = 100.0
IP_LEN = 1500


def frame_s(extra: int, ip_len: int = IP_LEN) -> float:
    return (ip_len + extra) * 8 / (RATE * 1e6)


def paced(count: int, step_s: float, start: float = 1000.0) -> list[float]:
    return [start + i * step_s for i in range(count)]


def judge(times: list[float], extra: int) -> dict:
    return gaps_within(times, [IP_LEN] * len(times), RATE, extra, settle_s=0.0, tail_s=0.0)


def test_frames_on_their_shapers_schedule_are_all_within() -> None:
    for shaper, extra in EXTRA_BYTES.items():
        r = judge(paced(1000, frame_s(extra)), extra)
        assert r["gaps"] == 999 and r["within_10pct"] == 999 and r["fraction"] == 1.0, shaper
        assert r["abs_error_p99_us"] == 0.0


def test_one_late_frame_spoils_the_gap_before_and_after_it() -> None:
    times = paced(101, frame_s(4))
    times[50] += 30e-6  # 30 us late against a 120.32-us gap: both neighbours' gaps off 25%
    r = judge(times, 4)
    assert r["gaps"] == 100 and r["within_10pct"] == 98


def test_a_late_frame_within_the_tolerance_spoils_nothing() -> None:
    times = paced(101, frame_s(4))
    times[50] += 11e-6  # 10% of 120.32 us is 12.03 us
    assert judge(times, 4)["within_10pct"] == 100


def test_each_shaper_is_judged_on_its_own_byte_basis() -> None:
    # Paced on HTB's basis (the Ethernet frame, 121.12 us): exact for HTB; 0.8 us off
    # (0.7%, within) on the emulator's (IP length + 4, 120.32 us).
    times = paced(200, frame_s(EXTRA_BYTES["htb"]))
    assert judge(times, EXTRA_BYTES["htb"])["abs_error_p50_us"] == 0.0
    assert judge(times, EXTRA_BYTES["emulator"])["abs_error_p50_us"] == pytest.approx(0.8, abs=0.05)
    # Smaller frames take less time: the second frame of each gap sets what the gap should be.
    lengths = [IP_LEN, 500] * 100
    times = [1000.0]
    for n in lengths[1:]:
        times.append(times[-1] + frame_s(14, n))
    r = gaps_within(times, lengths, RATE, 14, settle_s=0.0, tail_s=0.0)
    assert r["fraction"] == 1.0


def test_slow_start_and_the_end_are_left_out() -> None:
    step = frame_s(14)
    times = paced(40000, step)  # ~4.8 s
    times[10] += 60e-6  # in the first 1.5 s
    times[-10] += 60e-6  # in the last second
    r = gaps_within(times, [IP_LEN] * len(times), RATE, 14, settle_s=1.5, tail_s=1.0)
    assert r["fraction"] == 1.0
    assert r["gaps"] == pytest.approx((times[-1] - times[0] - 2.5) / step, abs=2)


def test_too_few_frames_give_no_fraction() -> None:
    assert judge([1000.0], 4)["fraction"] is None
    assert gaps_within(paced(10, frame_s(4)), [IP_LEN] * 10, RATE, 4)["fraction"] is None


def test_the_capture_is_read_for_ipv4_frames_only(tmp_path: Path) -> None:
    pcap = tmp_path / "receiver.pcap"
    ip = dpkt.ip.IP(src=b"\x0a\x00\x00\x01", dst=b"\x0a\x00\x00\x02", p=dpkt.ip.IP_PROTO_TCP,
                    data=dpkt.tcp.TCP(sport=40000, dport=5201, data=b"x" * 1448))
    ip.len = len(bytes(ip))
    eth_ip = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6,
                                    type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
    eth_arp = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\xff" * 6,
                                     type=dpkt.ethernet.ETH_TYPE_ARP, data=dpkt.arp.ARP())
    with open(pcap, "wb") as f:
        w = dpkt.pcap.Writer(f)
        w.writepkt(bytes(eth_ip), ts=1000.0)
        w.writepkt(bytes(eth_arp), ts=1000.0001)
        w.writepkt(bytes(eth_ip)[:128], ts=1000.000121)  # snapped: the IP header still tells
    times, lengths = departures(pcap)
    assert lengths == [ip.len, ip.len] == [20 + 20 + 1448] * 2
    assert times == pytest.approx([1000.0, 1000.000121], abs=1e-7)


def test_a_kernel_without_cubic_is_refused_naming_it() -> None:
    check_cc("reno cubic bbr")
    with pytest.raises(Unavailable, match="needs TCP cubic.*available: reno bbr"):
        check_cc("reno bbr\n")


def test_the_difference_needs_both_shapers() -> None:
    assert difference([{"shaper": "emulator", "fraction": 0.93},
                       {"shaper": "htb", "fraction": 0.95}]) == -0.02
    assert difference([{"shaper": "emulator", "fraction": 0.93},
                       {"shaper": "htb", "fraction": None}]) is None
    assert difference([{"shaper": "htb", "fraction": 0.95}]) is None


def test_htb_paces_every_frame_at_the_rate() -> None:
    pytest.importorskip("mininet")
    from topologies.trace_link import htb_commands
    qdisc, cls, leaf = htb_commands("m-eth1", 100.0, 1000)
    assert qdisc[:8] == ["tc", "qdisc", "add", "dev", "m-eth1", "root", "handle", "1:"]
    assert "htb" in qdisc and qdisc[-2:] == ["default", "1"]
    words = dict(zip(cls[::1], cls[1::1]))
    assert words["rate"] == words["ceil"] == "100mbit"
    assert words["burst"] == words["cburst"] == "1514b"  # one frame: no back-to-back bursts
    assert leaf[-3:] == ["pfifo", "limit", "1000"] and leaf[leaf.index("parent") + 1] == "1:1"
