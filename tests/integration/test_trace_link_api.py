"""TraceLink reads as the docs promise: addLink(sender, receiver, cls=TraceLink, data_trace=...)."""
from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mininet.net import Mininet

from analysis.mahimahi_log import parse_log
from analysis.queue_log import parse_queue_log
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
    ({"loss": 1}, r"loss \(TCLink's loss \(a percentage"),
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


# --- A delay per far host ----------------------------------------------------------------

def test_each_far_address_gets_its_own_delay_both_ways(tmp_path: Path) -> None:
    """Three source addresses on one sender ping the receiver at the same time, two with
    delays of their own each way and one with the link's: every round trip is its two
    delays, and packets with a shorter delay overtake those with a longer one."""
    data = {"10.77.0.1": 10, "10.77.0.3": 35}
    ack = {"10.77.0.1": 5, "10.77.0.3": 20}
    default_ms = 12
    expected_ms = {"10.77.0.1": 15, "10.77.0.3": 55, "10.77.0.4": 2 * default_ms}
    count = 20
    net, sender, receiver = _two_hosts()
    try:
        # 100 Mbit/s: a ping waits at most one 120-us opportunity per queue, and the
        # emulator's loop runs real-time.
        link = net.addLink(sender, receiver, cls=TraceLink, bw=100, delay_ms=default_ms,
                           data_delays_ms=data, ack_delays_ms=ack, queue_log=True,
                           log_dir=tmp_path)
        net.start()
        out_if, in_if = link.intf1, link.intf2
        for address in ("10.77.0.3", "10.77.0.4"):
            sender.cmd("ip", "addr", "add", f"{address}/24", "dev", out_if.name)
        # Static neighbours: an ARP exchange would add to the first round trips.
        for address in expected_ms:
            receiver.cmd("ip", "neigh", "replace", address, "lladdr", out_if.MAC(),
                         "dev", in_if.name)
        sender.cmd("ip", "neigh", "replace", "10.77.0.2", "lladdr", in_if.MAC(),
                   "dev", out_if.name)
        pings = {address: sender.popen(["ping", "-n", "-c", str(count), "-i", "0.05",
                                        "-W", "2", "-I", address, "10.77.0.2"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for address in expected_ms}
        outputs = {address: p.communicate(timeout=30)[0].decode() for address, p in pings.items()}
        args = link.emulator_args()
    finally:
        net.stop()
    assert args[args.index("--a2b-delay-by-src") + 1] == "10.77.0.1=10,10.77.0.3=35"
    assert args[args.index("--b2a-delay-by-dst") + 1] == "10.77.0.1=5,10.77.0.3=20"
    for address, want in expected_ms.items():
        rtts = [float(m) for m in re.findall(r"time=([0-9.]+) ms", outputs[address])]
        median = sorted(rtts)[len(rtts) // 2]
        print(f"{address}: configured {want} ms, ping RTTs {min(rtts):.3f}-{max(rtts):.3f} ms "
              f"(median {median:.3f})")
        assert len(rtts) == count, outputs[address]
        # Never early. Typically late by the two queues' wait for an opportunity (at most
        # 0.24 ms), the emulator's lateness and the hosts' stacks: the median. One ping
        # alone is not judged late: a stall of the virtual CPU (up to 4 ms measured on
        # an idle 2-core VM) lengthens it in the hosts, where the emulator's log below
        # shows each echo request held exactly its delay.
        assert all(want <= rtt for rtt in rtts), (address, rtts)
        assert median < want + 1.0, (address, rtts)

    stats = json.loads((tmp_path / "link-stats.json").read_text())
    assert stats["a2b"]["delay_by_src_ms"] == data
    assert stats["b2a"]["delay_by_dst_ms"] == ack
    print("lateness (us): a2b", stats["a2b"]["lateness_us"], "b2a", stats["b2a"]["lateness_us"])
    assert "# delay by source (ms; other frames: the delay above): 10.77.0.1=10,10.77.0.3=35" \
        in (tmp_path / "data.log").read_text().splitlines()
    # The data direction is queue then delay: each echo request was released exactly its
    # source's delay after it left the queue, and the shorter delays overtook the longer.
    q = parse_queue_log(tmp_path / "data-queue.log")
    held_ms = (q.release_us - q.departure_us) / 1000
    assert sorted(held_ms.tolist()) == sorted([10.0, 35.0, 12.0] * count)
    assert (np.diff(q.sent_us) < 0).any()  # sorted by arrival: some later arrival left first
    # Sent on time: a stall of the virtual CPU makes one or two of the 60 late by a few
    # ms (1.4 ms seen on an idle VM), so the typical and the 90th percentile are judged.
    late_us = q.sent_us - q.release_us
    print(f"echo requests sent late by (us): median {np.median(late_us):.0f}, "
          f"p90 {np.percentile(late_us, 90):.0f}, max {late_us.max()}")
    assert np.median(late_us) < 200 and np.percentile(late_us, 90) < 1000, late_us.tolist()
