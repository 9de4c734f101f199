"""The few header fields the drop plan needs, read from a raw Ethernet frame.

Both controller adapters hand the packet-in's bytes here, so POX and os-ken see
a segment the same way (no dependence on either one's packet library).
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

ETH_IPV4 = 0x0800
ETH_VLAN = 0x8100
IPPROTO_TCP = 6
TCP_FIN, TCP_SYN, TCP_RST, TCP_ACK = 0x01, 0x02, 0x04, 0x10


@dataclass(frozen=True)
class TcpSegment:
    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    payload_len: int

    @property
    def syn(self) -> bool:
        return bool(self.flags & TCP_SYN)

    @property
    def fin(self) -> bool:
        return bool(self.flags & TCP_FIN)

    @property
    def has_ack(self) -> bool:
        return bool(self.flags & TCP_ACK)


def parse_tcp(frame: bytes) -> TcpSegment | None:
    """The TCP segment in an Ethernet frame, or None (not IPv4/TCP, a fragment, truncated)."""
    if len(frame) < 14:
        return None
    offset = 12
    (ethertype,) = struct.unpack_from("!H", frame, offset)
    offset += 2
    if ethertype == ETH_VLAN and len(frame) >= 18:
        (ethertype,) = struct.unpack_from("!H", frame, offset + 2)
        offset += 4
    if ethertype != ETH_IPV4 or len(frame) < offset + 20:
        return None
    version_ihl, proto = frame[offset], frame[offset + 9]
    (total_len,) = struct.unpack_from("!H", frame, offset + 2)
    (frag,) = struct.unpack_from("!H", frame, offset + 6)
    ihl = (version_ihl & 0x0F) * 4
    if version_ihl >> 4 != 4 or ihl < 20 or proto != IPPROTO_TCP or frag & 0x1FFF or frag & 0x2000:
        return None
    src = socket.inet_ntoa(frame[offset + 12:offset + 16])
    dst = socket.inet_ntoa(frame[offset + 16:offset + 20])
    tcp = offset + ihl
    if len(frame) < tcp + 20 or total_len < ihl + 20:
        return None
    sport, dport, seq, ack, off_flags = struct.unpack_from("!HHIIH", frame, tcp)
    data_offset = (off_flags >> 12) * 4
    if data_offset < 20 or total_len < ihl + data_offset:
        return None
    return TcpSegment(src, dst, sport, dport, seq, ack, off_flags & 0x3F,
                      total_len - ihl - data_offset)
