"""A fast link's emulator runs on a CPU of its own and its hosts' frames are steered off it
(topologies/cpu_placement.py); a slow link is left where the scheduler puts it."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mininet.net import Mininet

from kernel import receive_steering
from topologies.cpu_placement import place
from topologies.guarded_network import new_prefix
from topologies.link_side import LinkSide
from topologies.trace_link import TraceLink


def _two_hosts() -> tuple[Mininet, Any, Any]:
    prefix = new_prefix()
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
    return (net, net.addHost(f"{prefix}s", ip="10.78.0.1/24"),
            net.addHost(f"{prefix}r", ip="10.78.0.2/24"))


def _allowed_cpus(pid: int) -> str:
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    found = re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M)
    assert found, status
    return found.group(1)


def _link(tmp_path: Path, bw: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start a link of `bw` Mbit/s, ping across it; what it placed and what it recorded."""
    net, sender, receiver = _two_hosts()
    try:
        link = net.addLink(sender, receiver, cls=TraceLink, bw=bw, delay="1ms",
                           log_dir=tmp_path)
        net.start()
        out = sender.cmd("ping", "-n", "-c", "3", "-i", "0.2", "-W", "2", "10.78.0.2")
        assert " 0% packet loss" in out, out
        assert link.process is not None
        seen = {"facts": link.placement.facts(), "args": link.emulator_args(),
                "emulator_cpus": _allowed_cpus(link.process.pid),
                "rx": {i.name: receive_steering.receive_cpus(i.node, i.name)
                       for i in (link.intf1, link.intf2)}}
    finally:
        net.stop()
    return seen, json.loads((tmp_path / "link-stats.json").read_text())


def test_a_100_mbit_link_gets_a_cpu_and_steers_both_hosts_frames_off_it(tmp_path: Path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: nothing to place")
    if receive_steering.available() is not None:
        pytest.skip(receive_steering.available() or "")
    seen, stats = _link(tmp_path, 100)
    facts = seen["facts"]
    assert facts["placed"], facts
    cpu = facts["emulator_cpu"]
    assert stats["cpu"] == cpu
    assert seen["emulator_cpus"] == str(cpu)  # the timing loop's own thread
    assert cpu not in facts["host_rx_cpus"]
    assert all(got == set(facts["host_rx_cpus"]) for got in seen["rx"].values()), seen["rx"]
    # The claim went with the link: the next fast link can have the same CPU.
    again = place((LinkSide(rate_mbps=100.0),), True)
    assert again.emulator_cpu == cpu
    again.release()


def test_a_10_mbit_link_is_not_placed_and_says_why(tmp_path: Path):
    seen, stats = _link(tmp_path, 10)
    assert not seen["facts"]["placed"] and "24 Mbit/s" in seen["facts"]["why_not"]
    assert "--cpu" not in seen["args"] and stats["cpu"] is None
    assert all(got == set() for got in seen["rx"].values()), seen["rx"]


def test_a_cpu_the_emulator_cannot_have_fails_the_link_naming_it(tmp_path: Path):
    from topologies.cpu_placement import Placement
    from topologies.trace_link import EmulatorFailed
    net, sender, receiver = _two_hosts()
    try:
        link = net.addLink(sender, receiver, cls=TraceLink, data=LinkSide(rate_mbps=100.0),
                           ack=LinkSide(rate_mbps=100.0), log_dir=tmp_path)
        net.build()
        link._place = lambda: Placement(emulator_cpu=4095, host_rx_cpus=[0])
        with pytest.raises(EmulatorFailed, match="--cpu: cannot pin to CPU 4095"):
            link.start()
    finally:
        net.stop()
