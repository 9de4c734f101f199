"""TraceLink reads as the docs promise: addLink(sender, receiver, cls=TraceLink, data_trace=...)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from mininet.net import Mininet

from analysis.mahimahi_log import parse_log
from topologies.trace_link import TraceLink
from topologies.trace_path import new_prefix


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
