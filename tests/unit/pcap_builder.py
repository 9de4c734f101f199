"""Small TCP captures written with dpkt, for the pcap analysis tests.

A `Conversation` builds one connection packet by packet (the sender at
10.0.0.1:20001, the receiver at 10.0.0.2:5001) and writes any subset of its
packets as a pcap, so a test can write the sender's capture and, with some
transmissions left out, the receiver's.
"""
from __future__ import annotations

import socket
import struct
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

import dpkt

SENDER = ("10.0.0.1", 20001)
RECEIVER = ("10.0.0.2", 5001)
ISN_S = 1_000_000
ISN_R = 5_000_000
MSS = 1448


@dataclass
class Frame:
    time_s: float
    buf: bytes
    tag: str = ""


@dataclass
class Conversation:
    frames: list[Frame] = field(default_factory=list)
    ip_id: int = 100
    tsval: int = 1000

    def _tcp(self, t: float, forward: bool, seq: int, ack: int, flags: int, payload: int = 0,
             sack: tuple[tuple[int, int], ...] = (), tag: str = "", ts: bool = True) -> None:
        src, dst = (SENDER, RECEIVER) if forward else (RECEIVER, SENDER)
        opts = b""
        if ts:
            opts += b"\x01\x01\x08\x0a" + struct.pack("!II", self.tsval + int(t * 1000), 0)
        if sack:
            opts += b"\x01\x01" + bytes([5, 2 + 8 * len(sack)])
            opts += b"".join(struct.pack("!II", a, b) for a, b in sack)
        tcp = dpkt.tcp.TCP(sport=src[1], dport=dst[1], seq=seq % (1 << 32), ack=ack,
                           flags=flags, win=1000, opts=opts, data=b"x" * payload)
        tcp.off = (20 + len(opts)) // 4
        self.ip_id += 1
        ip = dpkt.ip.IP(src=socket.inet_aton(src[0]), dst=socket.inet_aton(dst[0]),
                        p=dpkt.ip.IP_PROTO_TCP, id=self.ip_id, data=tcp)
        ip.len = 20 + len(bytes(tcp))
        eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6,
                                     type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
        self.frames.append(Frame(t, bytes(eth), tag))

    def handshake(self, t: float = 0.0, rtt: float = 0.04) -> None:
        self._tcp(t, True, ISN_S, 0, dpkt.tcp.TH_SYN, tag="syn")
        self._tcp(t + rtt, False, ISN_R, ISN_S + 1, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK,
                  tag="synack")
        self._tcp(t + rtt, True, ISN_S + 1, ISN_R + 1, dpkt.tcp.TH_ACK, tag="ack")

    def data(self, t: float, index: int, tag: str = "", length: int = MSS) -> None:
        """Segment `index` (0-based position in the byte stream, MSS-sized)."""
        self._tcp(t, True, ISN_S + 1 + index * MSS, ISN_R + 1,
                  dpkt.tcp.TH_ACK | dpkt.tcp.TH_PUSH, payload=length, tag=tag)

    def ack(self, t: float, segments: int, sack: tuple[tuple[int, int], ...] = (),
            tag: str = "") -> None:
        """A cumulative ACK for `segments` whole segments, SACK blocks in segment indexes."""
        blocks = tuple((ISN_S + 1 + a * MSS, ISN_S + 1 + b * MSS) for a, b in sack)
        self._tcp(t, False, ISN_R + 1, ISN_S + 1 + segments * MSS, dpkt.tcp.TH_ACK,
                  sack=blocks, tag=tag)

    def write(self, path: Path, skip_tags: AbstractSet[str] = frozenset(),
              linktype: int = dpkt.pcap.DLT_EN10MB, snaplen: int | None = None) -> Path:
        """Write the frames; with `snaplen`, each cut to that many bytes as tcpdump -s does."""
        with open(path, "wb") as f:
            writer = dpkt.pcap.Writer(f, linktype=linktype, snaplen=snaplen or 65535)
            for frame in self.frames:
                if frame.tag and frame.tag in skip_tags:
                    continue
                buf = frame.buf if snaplen is None else frame.buf[:snaplen]
                writer.writepkt(buf, ts=frame.time_s)
        return path


def loss_run(drop: set[int], n: int = 12) -> Conversation:
    """IW10 of segments 0..9 (originals 1..10), segments in `drop` (1-based) lost;
    SACKed ACKs for what arrives, then the lost ones retransmitted and the rest sent."""
    c = Conversation()
    c.handshake()
    t = 0.05
    for i in range(10):
        c.data(t + i * 0.001, i, tag=f"o{i + 1}")
    t = 0.1
    cum = 0
    sacked: list[tuple[int, int]] = []
    for i in range(10):
        if i + 1 in drop:
            continue
        if cum == i:
            cum = i + 1
            c.ack(t + i * 0.001, cum)
        else:
            sacked.append((i, i + 1))
            c.ack(t + i * 0.001, cum, sack=((min(a for a, _ in sacked), i + 1),))
    t = 0.15
    for k, i in enumerate(sorted(d - 1 for d in drop)):
        c.data(t + k * 0.001, i, tag=f"r{i + 1}")
    for i in range(10, n):
        c.data(t + 0.02 + i * 0.001, i, tag=f"o{i + 1}")
    c.ack(0.25, n)
    return c
