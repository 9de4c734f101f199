"""TraceLink reads as the docs promise: addLink(sender, receiver, cls=TraceLink, data_trace=...)."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from mininet.net import Mininet

from analysis.mahimahi_log import parse_log
from core.processes import pid_alive
from topologies.trace_link import TraceLink, TraceLinkOptionError
from topologies.guarded_network import new_prefix


def test_add_link_with_trace_files_carries_pings_with_the_fixed_delay(tmp_path: Path,
                                                                      fixed_trace: Path) -> None:
    prefix = new_prefix()
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
    try:
        sender = net.addHost(f"{prefix}s", ip="10.77.0.1/24")
        receiver = net.addHost(f"{prefix}r", ip="10.77.0.2/24")
        link = net.addLink(sender, receiver, cls=TraceLink, data_trace=fixed_trace,
                           ack_trace=str(fixed_trace), delay_ms=20, queue="infinite",
                           log_dir=tmp_path)
        net.build()
        link.start()
        out = sender.cmd("ping", "-c", "5", "-i", "0.2", "-W", "2", "10.77.0.2")
    finally:
        net.stop()
    rtts = [float(m) for m in re.findall(r"time=([0-9.]+) ms", out)]
    assert len(rtts) == 5, out
    # 20 ms each way plus, in each trace queue, the wait for the next opportunity of
    # the every-millisecond trace (0 to 1 ms): a ping is far below one opportunity,
    # so nothing else waits. The upper bound leaves room for timer noise.
    assert all(40.0 <= rtt < 60.0 for rtt in rtts), rtts
    log = parse_log(tmp_path / "data.log")
    assert log.departure_time.size >= 5  # the echo requests crossed the data trace queue


def test_a_direction_must_be_given_exactly_once(tmp_path: Path, fixed_trace: Path) -> None:
    prefix = new_prefix()
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
    try:
        sender = net.addHost(f"{prefix}s", ip="10.77.0.1/24")
        receiver = net.addHost(f"{prefix}r", ip="10.77.0.2/24")
        with pytest.raises(ValueError, match="exactly one of ack= .* and ack_trace="):
            net.addLink(sender, receiver, cls=TraceLink, data_trace=fixed_trace,
                        log_dir=tmp_path)
        with pytest.raises(FileNotFoundError, match="data_trace .* is not a file"):
            net.addLink(sender, receiver, cls=TraceLink, data_trace=tmp_path / "nope",
                        ack_trace=fixed_trace, log_dir=tmp_path)
    finally:
        net.stop()


# --- Mininet's own words, with TCLink's meaning -------------------------------------------

def _two_hosts() -> tuple[Mininet, Any, Any]:
    """A network and two Mininet hosts (mininet is untyped: the hosts are Any)."""
    prefix = new_prefix()
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
    sender = net.addHost(f"{prefix}s", ip="10.77.0.1/24")
    receiver = net.addHost(f"{prefix}r", ip="10.77.0.2/24")
    return net, sender, receiver


def _pings(host: Any, count: int = 8) -> list[float]:
    out = host.cmd("ping", "-n", "-c", str(count),
                   "-i", "0.2", "-W", "2", "10.77.0.2")
    rtts = [float(m) for m in re.findall(r"time=([0-9.]+) ms", out)]
    assert len(rtts) == count, out
    return rtts


def test_delay_20ms_gives_20ms_each_way_after_net_start_alone() -> None:
    net, sender, receiver = _two_hosts()
    try:
        link = net.addLink(sender, receiver, cls=TraceLink, delay="20ms")
        net.start()                       # nothing else: the link started itself
        rtts = _pings(sender)
        args = link.emulator_args()
    finally:
        net.stop()
    assert args[args.index("--a2b-delay-ms") + 1] == "20"
    assert args[args.index("--b2a-delay-ms") + 1] == "20"
    # 20 ms each way: 40 ms round trip, plus timer noise (no rate limit, no queue).
    print(f"delay='20ms': ping RTTs {rtts}")
    assert all(40.0 <= rtt < 48.0 for rtt in rtts), rtts
    assert link.process is not None and link.process.poll() is not None  # stopped by net.stop
    time.sleep(0.2)
    assert not pid_alive(link.middle.pid)  # and its namespace with it


def test_params1_and_params2_set_each_direction() -> None:
    net, sender, receiver = _two_hosts()
    try:
        link = net.addLink(sender, receiver, cls=TraceLink, params1={"delay": "5ms"},
                           params2={"delay": "35ms", "ip": "10.77.0.2/24"})
        net.start()
        rtts = _pings(sender)
        args = link.emulator_args()
    finally:
        net.stop()
    assert (args[args.index("--a2b-delay-ms") + 1], args[args.index("--b2a-delay-ms") + 1]) \
        == ("5", "35")
    assert all(40.0 <= rtt < 48.0 for rtt in rtts), rtts


def test_bw_10_gives_10_mbits(tmp_path: Path) -> None:
    net, sender, receiver = _two_hosts()
    try:
        net.addLink(sender, receiver, cls=TraceLink, bw=10, delay="5ms", log_dir=tmp_path)
        net.start()
        server = receiver.popen(["iperf3", "-s", "-1", "-J"], stdout=open(tmp_path / "s.json", "w"))
        time.sleep(0.5)
        client = sender.cmd("iperf3", "-c", "10.77.0.2", "-t", "4", "-J")
        server.wait(timeout=20)
    finally:
        net.stop()
    received = json.loads(client)["end"]["sum_received"]["bits_per_second"] / 1e6
    # TCP goodput over a 10 Mbit/s link of 1500-byte frames: 1448/1504 x 10 = 9.6 at best,
    # less the slow start at the beginning of 4 s.
    print(f"bw=10: iperf3 received {received:.2f} Mbit/s")
    assert 8.5 <= received <= 10.0, received


@pytest.mark.parametrize("words,message", [
    ({"loss": 1}, r"loss \(random loss is not emulated"),
    ({"jitter": "1ms"}, r"jitter \(delay is fixed"),
    ({"use_htb": True}, r"use_htb \(the rate is the emulator's own"),
    ({"enable_red": True}, r"enable_red \(the queue is droptail or infinite"),
    ({"colour": "red"}, r"colour \(unknown\)"),
    ({"params1": {"loss": 5}}, r"loss .* in params1"),
    ({"delay": 20}, r"with a unit, e.g. delay='20ms'"),
    ({"delay": "1.5ms"}, r"whole number of milliseconds"),
    ({"bw": -3}, r"bw=-3 must be a rate in Mbit/s > 0"),
    ({"max_queue_size": 0}, r"max_queue_size=0 must be a number of packets"),
    ({"delay": "20ms", "delay_ms": 10}, r"delay is given more than once"),
])
def test_words_it_would_ignore_are_refused(words: dict, message: str, tmp_path: Path) -> None:
    net, sender, receiver = _two_hosts()
    try:
        with pytest.raises(TraceLinkOptionError, match=message):
            net.addLink(sender, receiver, cls=TraceLink, **words)
        assert net.links == [] and list(sender.intfs) == []  # nothing was built
    finally:
        net.stop()


def test_bw_and_a_trace_for_one_direction_is_refused(tmp_path: Path, fixed_trace: Path) -> None:
    net, sender, receiver = _two_hosts()
    try:
        with pytest.raises(TraceLinkOptionError, match="data direction has both bw="):
            net.addLink(sender, receiver, cls=TraceLink, bw=10, data_trace=fixed_trace,
                        ack_trace=fixed_trace, log_dir=tmp_path)
    finally:
        net.stop()


def test_max_queue_size_is_a_droptail_queue_both_ways() -> None:
    net, sender, receiver = _two_hosts()
    try:
        link = net.addLink(sender, receiver, cls=TraceLink, bw=10, max_queue_size=25,
                           autostart=False)
        args = link.emulator_args()
    finally:
        net.stop()
    assert args[args.index("--a2b-queue") + 1] == "droptail:packets=25"
    assert args[args.index("--b2a-queue") + 1] == "droptail:packets=25"
    assert "--a2b-rate-mbps" in args and args[args.index("--a2b-rate-mbps") + 1] == "10"
