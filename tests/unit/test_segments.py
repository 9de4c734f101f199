"""One segment per packet at a sender: set, read back, and refused loudly."""
from __future__ import annotations

import pytest

from kernel.segments import SegmentsError, gso_max_segs, one_segment_per_packet

SHOWN = ("2: s1-eth0@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP\n"
         "    link/ether 02:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff link-netnsid 0 promiscuity 0\n"
         "    veth addrgenmode eui64 numtxqueues 1 numrxqueues 1 gso_max_size 65536 "
         "gso_max_segs {segs} tso_max_size 524280 tso_max_segs 65535 gro_max_size 65536\n")


class Node:
    """Answers `ip` as a kernel that keeps (or ignores) what it is told."""

    def __init__(self, keeps: bool = True, shown: str | None = None) -> None:
        self.keeps, self.shown, self.segs = keeps, shown, 65535
        self.calls: list[tuple[str, ...]] = []

    def cmd(self, *args: str) -> str:
        self.calls.append(args)
        if args[:3] == ("ip", "link", "set"):
            if not self.keeps:
                return "Error: argument \"gso_max_segs\" is wrong: Invalid GSO max segs\n"
            self.segs = int(args[-1])
            return ""
        return self.shown if self.shown is not None else SHOWN.format(segs=self.segs)


def test_the_setting_is_read_as_ip_prints_it() -> None:
    assert gso_max_segs(SHOWN.format(segs=1)) == 1
    assert gso_max_segs(SHOWN.format(segs=65535)) == 65535
    # tso_max_segs beside it is not mistaken for it
    assert gso_max_segs("tso_max_segs 65535") is None


def test_a_sender_is_set_to_one_segment_and_checked() -> None:
    node = Node()
    one_segment_per_packet(node, "s1-eth0")
    assert node.calls[0] == ("ip", "link", "set", "dev", "s1-eth0", "gso_max_segs", "1")
    assert node.calls[1] == ("ip", "-d", "link", "show", "dev", "s1-eth0")


def test_a_kernel_that_refuses_fails_the_build_naming_the_setting() -> None:
    with pytest.raises(SegmentsError, match=r"s1-eth0: gso_max_segs is 65535, not 1.*"
                                            r"Invalid GSO max segs.*TSO-sized bursts"):
        one_segment_per_packet(Node(keeps=False), "s1-eth0")


def test_an_interface_that_does_not_print_the_setting_is_refused() -> None:
    with pytest.raises(SegmentsError, match="cannot read gso_max_segs of s1-eth0"):
        one_segment_per_packet(Node(shown="Device \"s1-eth0\" does not exist.\n"), "s1-eth0")
