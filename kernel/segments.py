"""One TCP segment per packet from a sender, as from a host whose NIC has no TSO.

Since Linux 4.17 TCP builds GSO packets whatever its device offers ("tcp: switch to GSO
being always on"), and the device cuts them into frames in software. With offloads off each
frame is still one segment, but the sender keeps TSO's timing: it defers sending until the
window lets a whole multi-segment packet go (tcp_tso_should_defer: a third of the window,
7 segments at 100 Mbit/s and a 1-ms round trip), then sends the segments back to back. A
device's gso_max_segs of 1 makes every packet TCP builds one segment, so each ACK releases
at once what it opens, as in the kernels Mininet-HiFi ran (measured in docs/dctcp.md, "The
senders' bursts").

The setting must be in place before a connection is made: TCP reads it when it routes.
"""
from __future__ import annotations

import re

from kernel.offloads import RunsCommands

SEGMENTS = 1
_SHOWN = re.compile(r"\bgso_max_segs (\d+)\b")


class SegmentsError(RuntimeError):
    """The interface's segments per packet could not be set (the message names it)."""


def gso_max_segs(shown: str) -> int | None:
    """gso_max_segs as `ip -d link show` prints it (None: not printed)."""
    m = _SHOWN.search(shown)
    return int(m.group(1)) if m else None


def one_segment_per_packet(node: RunsCommands, intf: str) -> None:
    """Set `intf`'s gso_max_segs to 1 and check it took."""
    said = node.cmd("ip", "link", "set", "dev", intf, "gso_max_segs", str(SEGMENTS))
    shown = node.cmd("ip", "-d", "link", "show", "dev", intf)
    now = gso_max_segs(shown)
    if now is None:
        raise SegmentsError(f"cannot read gso_max_segs of {intf}: {shown.strip()[:300]!r} "
                            "(iproute2's `ip -d link show` prints it)")
    if now != SEGMENTS:
        raise SegmentsError(
            f"{intf}: gso_max_segs is {now}, not {SEGMENTS}: `ip link set dev {intf} "
            f"gso_max_segs {SEGMENTS}` said {said.strip()[:300]!r}. Without it the senders "
            "send TSO-sized bursts (docs/dctcp.md, \"The senders' bursts\"); a kernel and "
            "iproute2 that can change gso_max_segs on a running interface are needed")
