"""A fast link's CPU placement: which links get one, claims side by side, and steering."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernel.receive_steering import (ReceiveSteeringError, cpu_mask, mask_cpus, steer_all,
                                     steer_receive)
from topologies.cpu_placement import PLACE_ABOVE_MBPS, place
from topologies.link_side import LinkSide

FAST = (LinkSide(rate_mbps=100.0), LinkSide(rate_mbps=100.0))


def test_the_mask_is_the_kernels_bitmap_text_and_reads_back():
    assert cpu_mask([0]) == "00000001"
    assert cpu_mask([0, 1]) == "00000003"
    assert cpu_mask([1, 33]) == "00000002,00000002"
    for cpus in ({0}, {1}, {0, 2, 5}, {3, 40, 63}):
        assert mask_cpus(cpu_mask(cpus)) == cpus
    assert mask_cpus("0") == set()
    with pytest.raises(ValueError):
        cpu_mask([])


def test_only_a_fast_fixed_rate_real_time_link_is_placed(tmp_path: Path):
    slow = (LinkSide(rate_mbps=10.0), LinkSide(rate_mbps=10.0))
    assert not place(slow, True, allowed={0, 1}, claims_dir=tmp_path).placed
    # The rate the emulator spins above: exactly at it is not fast enough.
    edge = (LinkSide(rate_mbps=PLACE_ABOVE_MBPS), LinkSide(rate_mbps=1.0))
    assert not place(edge, True, allowed={0, 1}, claims_dir=tmp_path).placed
    stepped = (LinkSide(rate_mbps=10.0, rate_steps=((1000, 50.0),)), LinkSide(rate_mbps=1.0))
    got = place(stepped, True, allowed={0, 1}, claims_dir=tmp_path)
    assert got.placed
    got.release()
    not_realtime = place(FAST, False, allowed={0, 1}, claims_dir=tmp_path)
    assert not not_realtime.placed and "not real-time" in (not_realtime.why_not or "")
    traces = (LinkSide(trace=Path("a.trace")), LinkSide(trace=Path("b.trace")))
    assert not place(traces, True, allowed={0, 1}, claims_dir=tmp_path).placed


def test_a_placement_says_why_not_when_the_machine_cannot(tmp_path: Path):
    no_rps = place(FAST, True, allowed={0, 1}, claims_dir=tmp_path, steering="no RPS here")
    assert no_rps.facts() == {"placed": False, "why_not": "no RPS here"}
    one = place(FAST, True, allowed={3}, claims_dir=tmp_path)
    assert not one.placed and "one CPU" in (one.why_not or "")


def test_links_side_by_side_never_share_the_emulators_cpu(tmp_path: Path):
    first = place(FAST, True, allowed={0, 1, 2, 3}, claims_dir=tmp_path)
    assert first.facts() == {"placed": True, "emulator_cpu": 3, "host_rx_cpus": [0, 1, 2]}
    second = place(FAST, True, allowed={0, 1, 2, 3}, claims_dir=tmp_path)
    assert (second.emulator_cpu, second.host_rx_cpus) == (2, [0, 1])
    first.release()
    third = place(FAST, True, allowed={0, 1, 2, 3}, claims_dir=tmp_path)
    assert (third.emulator_cpu, third.host_rx_cpus) == (3, [0, 1])
    second.release()
    third.release()


def test_two_cpus_hold_one_placed_link_and_the_second_says_why(tmp_path: Path):
    first = place(FAST, True, allowed={0, 1}, claims_dir=tmp_path)
    second = place(FAST, True, allowed={0, 1}, claims_dir=tmp_path)
    assert first.placed and not second.placed
    assert "none is left for the end hosts" in (second.why_not or "")
    first.release()
    assert place(FAST, True, allowed={0, 1}, claims_dir=tmp_path).placed


def test_a_claim_held_by_another_process_is_respected_and_dies_with_it(tmp_path: Path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
         str(tmp_path / "cpu1.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        got = place(FAST, True, allowed={0, 1, 2}, claims_dir=tmp_path)
        assert (got.emulator_cpu, got.host_rx_cpus) == (2, [0])
        got.release()
    finally:
        holder.kill()
        holder.wait(timeout=10)
    deadline = time.monotonic() + 5
    while True:
        got = place(FAST, True, allowed={0, 1, 2}, claims_dir=tmp_path)
        if got.host_rx_cpus == [0, 1] or time.monotonic() > deadline:
            break
        got.release()
    assert got.host_rx_cpus == [0, 1]
    got.release()


class FakeHost:
    """A host whose shell answers the steering script with the given lines."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.commands: list[tuple[str, ...]] = []

    def cmd(self, *args: str) -> str:
        self.commands.append(args)
        return self.out


def test_steering_reads_back_what_the_kernel_reports():
    host = FakeHost("rps=00000001\r\nsysfs-index=7\r\nlink-index=7\r\n")
    assert steer_receive(host, "h1-eth0", [0]) == {0}
    script = host.commands[0][-1]
    assert "00000001" in script and "h1-eth0/queues/rx-0/rps_cpus" in script
    with pytest.raises(ReceiveSteeringError, match="the kernel reports"):
        steer_receive(FakeHost("rps=00000002\nsysfs-index=7\nlink-index=7\n"), "h1-eth0", [0])


def test_steering_refuses_another_namespaces_interface_and_a_failed_write():
    with pytest.raises(ReceiveSteeringError, match="sysfs shows interface 3"):
        steer_receive(FakeHost("rps=00000001\nsysfs-index=3\nlink-index=7\n"), "h1-eth0", [0])
    with pytest.raises(ReceiveSteeringError, match="Permission denied"):
        steer_receive(FakeHost("sh: 1: cannot create: Permission denied\n"), "h1-eth0", [0])


def test_the_shared_bottleneck_is_placed_only_when_asked_and_never_under_ebpf():
    pytest.importorskip("mininet")  # the measure module builds on it
    from runkinds.shared_bottleneck.measure import placement_refused
    builtin = {"cc_provider": "builtin", "cc_requested": "bbr"}
    assert placement_refused(True, builtin) is None
    assert "not asked" in (placement_refused(False, builtin) or "")
    ebpf = {"cc_provider": "ebpf", "cc_requested": "dctcp"}
    assert "dctcp is an eBPF" in (placement_refused(True, ebpf) or "")


def test_an_ebpf_congestion_control_is_never_placed_whatever_the_path():
    from topologies.cpu_placement import refused_for
    assert refused_for({"cc_provider": "builtin", "cc_requested": "cubic"}) is None
    assert refused_for({}) is None  # a scheme that is not a kernel TCP (sprout, a box)
    assert "hybla is an eBPF" in (refused_for({"cc_provider": "ebpf",
                                               "cc_requested": "hybla"}) or "")


class ScriptedHost(FakeHost):
    """A host whose shell answers each steering script in turn."""

    def __init__(self, *outs: str) -> None:
        super().__init__("")
        self.outs = list(outs)

    def cmd(self, *args: str) -> str:
        self.commands.append(args)
        return self.outs.pop(0)


STEERED_0 = "rps=00000001\nsysfs-index=7\nlink-index=7\n"
STEERING_OFF = "rps=00000000\nsysfs-index=7\nlink-index=7\n"


def test_a_path_is_never_left_half_steered():
    sender = ScriptedHost(STEERED_0, STEERING_OFF)
    receiver = ScriptedHost("sh: 1: cannot create: Permission denied\n")
    with pytest.raises(ReceiveSteeringError, match="Permission denied") as e:
        steer_all([(sender, "s-eth0"), (receiver, "r-eth0")], [0])
    assert "turned back" not in str(e.value)
    # The sender's interface, steered first, was turned off again (mask 0, read back empty).
    assert "echo 0 > /sys/class/net/s-eth0/queues/rx-0/rps_cpus" in sender.commands[1][-1]


def test_an_interface_that_cannot_be_turned_back_off_is_named():
    sender = ScriptedHost(STEERED_0, "sh: 1: cannot create: Read-only file system\n")
    receiver = ScriptedHost("sh: 1: cannot create: Permission denied\n")
    with pytest.raises(ReceiveSteeringError,
                       match="s-eth0 could not be turned back off .still steered to CPUs .0.."):
        steer_all([(sender, "s-eth0"), (receiver, "r-eth0")], [0])
