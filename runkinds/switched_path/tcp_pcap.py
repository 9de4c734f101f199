"""One TCP connection read from a packet capture with dpkt: data segments, ACKs, SACK blocks.

The capture is taken with tcpdump on an interface of the sender or of the
receiver. A flow is the data direction of one connection (sender -> receiver);
everything is returned in its sequence space relative to the first data byte
(byte 0 is the byte after the SYN), so two captures of the same connection
line up.

Definitions (what a time-sequence figure plots):

- Data segment: a segment of the data direction with payload.
- Retransmission: a data segment whose whole range was sent before (it ends
  at or below snd.nxt so far). Everything else reaches new data and is an
  original, numbered 1, 2, ... in the order it was first sent: the numbering
  the drop plan uses (controllers/drop_plan.py counts the same way).
- ACK: a segment of the reverse direction with the ACK flag; its cumulative
  ACK and SACK blocks in the same relative sequence space.
- Header cwnd estimate: outstanding data = snd.nxt - highest cumulative ACK,
  in segments of the flow's MSS (the largest payload seen), after every data
  segment and ACK at the sender, as the 2015 reproduction plotted.
- A transmission's identity on the wire: (sequence number, length, IP ID,
  TCP timestamp value). A retransmission differs from its original in TSval
  (a later millisecond) and in IP ID, so a capture at the receiver tells which
  transmission of a range arrived.
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path

import dpkt

SEQ_MOD = 1 << 32
TCP_OPT_SACK = 5
TCP_OPT_TIMESTAMP = 8


class PcapError(ValueError):
    """The capture is missing, unreadable, or does not hold the connection asked for."""


@dataclass(frozen=True)
class Packet:
    """One IPv4 TCP segment as captured (absolute sequence numbers)."""

    time_s: float
    src: str
    sport: int
    dst: str
    dport: int
    seq: int
    ack: int
    flags: int
    length: int  # TCP payload bytes
    window: int
    ip_id: int
    tsval: int | None
    sack: tuple[tuple[int, int], ...]

    @property
    def syn(self) -> bool:
        return bool(self.flags & dpkt.tcp.TH_SYN)

    @property
    def has_ack(self) -> bool:
        return bool(self.flags & dpkt.tcp.TH_ACK)

    @property
    def fin(self) -> bool:
        return bool(self.flags & dpkt.tcp.TH_FIN)


@dataclass(frozen=True)
class DataSegment:
    time_s: float
    seq: int  # relative: 0 is the first data byte
    length: int
    retransmission: bool
    original: int | None  # 1, 2, ... for originals; None for retransmissions
    ip_id: int
    tsval: int | None

    @property
    def end(self) -> int:
        return self.seq + self.length

    def identity(self) -> tuple[int, int, int, int | None]:
        return (self.seq, self.length, self.ip_id, self.tsval)


@dataclass(frozen=True)
class Ack:
    time_s: float
    ack: int  # relative cumulative ACK (may exceed the data by one for a FIN)
    sack: tuple[tuple[int, int], ...]  # relative [start, end) blocks, as sent
    window: int


@dataclass(frozen=True)
class CwndPoint:
    time_s: float
    outstanding_bytes: int
    outstanding_segments: float


@dataclass
class Flow:
    """The data direction of one connection, as one capture saw it."""

    sender: tuple[str, int]
    receiver: tuple[str, int]
    isn: int | None  # the sender's initial sequence number (from its SYN), None if unseen
    syn_time_s: float | None
    data: list[DataSegment] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)

    @property
    def mss(self) -> int:
        return max((d.length for d in self.data), default=0)

    @property
    def originals(self) -> list[DataSegment]:
        return [d for d in self.data if not d.retransmission]

    @property
    def retransmissions(self) -> list[DataSegment]:
        return [d for d in self.data if d.retransmission]

    @property
    def bytes_sent(self) -> int:
        """Distinct payload bytes (snd.nxt at the end)."""
        return max((d.end for d in self.data), default=0)

    def start_time_s(self) -> float:
        """The SYN, else the first data segment: time zero of the flow's plots."""
        if self.syn_time_s is not None:
            return self.syn_time_s
        if self.data:
            return self.data[0].time_s
        raise PcapError("the flow has neither a SYN nor data")

    def time_acked(self, nbytes: int) -> float | None:
        """When the first cumulative ACK covering `nbytes` bytes was seen, or None."""
        for a in self.acks:
            if a.ack >= nbytes:
                return a.time_s
        return None

    def header_cwnd(self) -> list[CwndPoint]:
        """Outstanding data (snd.nxt - highest cumulative ACK) after every event at the sender."""
        mss = self.mss or 1
        events: list[tuple[float, int, int]] = []  # (time, order, index): ACKs before sends
        events += [(a.time_s, 0, i) for i, a in enumerate(self.acks)]
        events += [(d.time_s, 1, i) for i, d in enumerate(self.data)]
        events.sort()
        snd_nxt = 0
        highest_ack = 0
        points: list[CwndPoint] = []
        for time_s, kind, index in events:
            if kind == 0:
                highest_ack = max(highest_ack, self.acks[index].ack)
            else:
                snd_nxt = max(snd_nxt, self.data[index].end)
            outstanding = max(0, snd_nxt - min(highest_ack, snd_nxt))
            points.append(CwndPoint(time_s, outstanding, outstanding / mss))
        return points


def read_packets(path: Path) -> list[Packet]:
    """Every IPv4 TCP segment in a pcap (Ethernet or Linux cooked link type)."""
    if not path.is_file():
        raise PcapError(f"no capture at {path}")
    packets: list[Packet] = []
    try:
        with open(path, "rb") as f:
            reader = dpkt.pcap.Reader(f)
            linktype = reader.datalink()
            for ts, buf in reader:
                ip = _ip_of(buf, linktype)
                if ip is None or not isinstance(ip.data, dpkt.tcp.TCP):
                    continue
                packets.append(_packet(float(ts), ip, ip.data))
    except (ValueError, dpkt.dpkt.NeedData, dpkt.dpkt.UnpackError) as e:
        raise PcapError(f"{path}: not a readable pcap ({e})") from e
    return packets


def _ip_of(buf: bytes, linktype: int) -> dpkt.ip.IP | None:
    if linktype == dpkt.pcap.DLT_EN10MB:
        frame = dpkt.ethernet.Ethernet(buf)
        return frame.data if isinstance(frame.data, dpkt.ip.IP) else None
    if linktype == dpkt.pcap.DLT_LINUX_SLL:
        frame = dpkt.sll.SLL(buf)
        return frame.data if isinstance(frame.data, dpkt.ip.IP) else None
    if linktype == dpkt.pcap.DLT_RAW or linktype == 101:  # LINKTYPE_RAW
        return dpkt.ip.IP(buf) if buf[:1] and buf[0] >> 4 == 4 else None
    raise PcapError(f"unsupported capture link type {linktype}")


def _packet(ts: float, ip: dpkt.ip.IP, tcp: dpkt.tcp.TCP) -> Packet:
    sack: list[tuple[int, int]] = []
    tsval: int | None = None
    for kind, data in dpkt.tcp.parse_opts(tcp.opts):
        if kind == TCP_OPT_SACK and len(data) % 8 == 0:
            for i in range(0, len(data), 8):
                left, right = struct.unpack("!II", data[i:i + 8])
                sack.append((left, right))
        elif kind == TCP_OPT_TIMESTAMP and len(data) == 8:
            tsval = struct.unpack("!I", data[:4])[0]
    # The payload's length from the headers: captures keep the headers only (snap length).
    length = ip.len - 4 * ip.hl - 4 * tcp.off
    return Packet(time_s=ts, src=socket.inet_ntoa(ip.src), sport=tcp.sport,
                  dst=socket.inet_ntoa(ip.dst), dport=tcp.dport, seq=tcp.seq, ack=tcp.ack,
                  flags=tcp.flags, length=length, window=tcp.win, ip_id=ip.id,
                  tsval=tsval, sack=tuple(sack))


def read_flow(path: Path, server_port: int | None = None) -> Flow:
    """The data direction of the connection in `path` that carried the most payload.

    With `server_port`, only connections to that port are considered (the
    sender is the side that connected). The sender is the side that sent the
    SYN without ACK; without it, the side that sent more payload.
    """
    return flow_from_packets(read_packets(path), server_port, source=str(path))


def flow_from_packets(packets: list[Packet], server_port: int | None = None,
                      source: str = "the capture") -> Flow:
    sender, receiver = _pick_direction(packets, server_port, source)
    forward = [p for p in packets if (p.src, p.sport, p.dst, p.dport) == (*sender, *receiver)]
    reverse = [p for p in packets if (p.src, p.sport, p.dst, p.dport) == (*receiver, *sender)]
    syn = next((p for p in forward if p.syn and not p.has_ack), None)
    if syn is not None:
        base = (syn.seq + 1) % SEQ_MOD
    else:
        first_data = next((p for p in forward if p.length > 0), None)
        if first_data is None:
            raise PcapError(f"{source}: the connection {sender} -> {receiver} has neither a "
                            "SYN nor data")
        base = first_data.seq
    flow = Flow(sender=sender, receiver=receiver, isn=None if syn is None else syn.seq,
                syn_time_s=None if syn is None else syn.time_s)
    snd_nxt = 0
    originals = 0
    for p in forward:
        if p.length == 0 or p.syn:
            continue
        rel = _rel(p.seq, base)
        retransmission = rel + p.length <= snd_nxt
        number = None
        if not retransmission:
            originals += 1
            number = originals
        snd_nxt = max(snd_nxt, rel + p.length)
        flow.data.append(DataSegment(p.time_s, rel, p.length, retransmission, number,
                                     p.ip_id, p.tsval))
    for p in reverse:
        if not p.has_ack or p.syn:
            continue
        flow.acks.append(Ack(p.time_s, _rel(p.ack, base),
                             tuple((_rel(a, base), _rel(b, base)) for a, b in p.sack),
                             p.window))
    return flow


def _rel(seq: int, base: int) -> int:
    """A sequence number relative to `base`, wrapping; slightly before base stays negative."""
    rel = (seq - base) % SEQ_MOD
    return rel - SEQ_MOD if rel >= SEQ_MOD // 2 else rel


def _pick_direction(packets: list[Packet], server_port: int | None, source: str
                    ) -> tuple[tuple[str, int], tuple[str, int]]:
    payload: dict[tuple[str, int, str, int], int] = {}
    opener: dict[frozenset, tuple[str, int, str, int]] = {}
    for p in packets:
        key = (p.src, p.sport, p.dst, p.dport)
        if server_port is not None and server_port not in (p.sport, p.dport):
            continue
        payload[key] = payload.get(key, 0) + p.length
        if p.syn and not p.has_ack:
            opener.setdefault(frozenset([(p.src, p.sport), (p.dst, p.dport)]), key)
    if not payload:
        where = f" to or from port {server_port}" if server_port is not None else ""
        raise PcapError(f"{source}: no TCP segment{where}")
    connections: dict[frozenset, int] = {}
    for (s, sp, d, dp), n in payload.items():
        conn = frozenset([(s, sp), (d, dp)])
        connections[conn] = connections.get(conn, 0) + n
    conn = max(connections, key=lambda c: connections[c])
    if conn in opener:
        s, sp, d, dp = opener[conn]
        if server_port is None or dp == server_port:
            return (s, sp), (d, dp)
    (a, b) = sorted(conn)
    ab, ba = payload.get((*a, *b), 0), payload.get((*b, *a), 0)
    return (a, b) if ab >= ba else (b, a)
