"""The kernel's own record of TCP sockets, read as `ss -tin` reads it: a sock_diag dump.

One NETLINK_SOCK_DIAG request (SOCK_DIAG_BY_FAMILY, IPv4 TCP, every state) asks for each
socket's `struct tcp_info` (INET_DIAG_INFO), its congestion control's name (INET_DIAG_CONG)
and what the congestion control reports of itself (the VEGASINFO bit: BBR answers with
INET_DIAG_BBRINFO, `struct tcp_bbr_info`, the numbers `ss` prints as
`bbr:(bw:...,mrtt:...,pacing_gain:...,cwnd_gain:...)`). This module builds the request and
parses the answer; kernel/socket_sampler.py sends it in a loop inside a host's namespace.

Layouts (include/uapi/linux/inet_diag.h, sock_diag.h, netlink.h):

    struct nlmsghdr          { u32 len; u16 type; u16 flags; u32 seq; u32 pid; }     16 bytes
    struct inet_diag_req_v2  { u8 family, protocol, ext, pad; u32 states; sockid; }  56 bytes
    struct inet_diag_sockid  { be16 sport, dport; be32 src[4], dst[4]; u32 if; u32 cookie[2]; }
    struct inet_diag_msg     { u8 family, state, timer, retrans; sockid;
                               u32 expires, rqueue, wqueue, uid, inode; }            72 bytes
    struct rtattr            { u16 len; u16 type; } then the payload, 4-byte aligned
    struct tcp_bbr_info      { u32 bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain; }
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from typing import Iterator

from schemes.transfer_endpoint import decode_tcp_info

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
INET_DIAG_INFO, INET_DIAG_VEGASINFO, INET_DIAG_CONG, INET_DIAG_BBRINFO = 2, 3, 4, 16
# ext is a bit per attribute, (1 << (attr - 1)); BBRINFO's bit does not fit in a byte, so
# BBR (like ss) answers the VEGASINFO bit with its own attribute.
EXT = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | \
    (1 << (INET_DIAG_CONG - 1))
ALL_STATES = 0xFFF
BBR_UNIT = 256  # BBR's gains are fixed point, 1.0 = 256

NLMSGHDR = struct.Struct("=IHHII")
REQ_V2 = struct.Struct("=BBBBI")  # followed by the sockid
SOCKID = struct.Struct(">HH16s16s")  # ports and addresses in network order; if, cookie native
SOCKID_TAIL = struct.Struct("=III")
DIAG_MSG_HEAD = struct.Struct("=BBBB")
DIAG_MSG_TAIL = struct.Struct("=IIIII")
RTATTR = struct.Struct("=HH")
BBR_INFO = struct.Struct("=IIIII")
DIAG_MSG_LEN = DIAG_MSG_HEAD.size + SOCKID.size + SOCKID_TAIL.size + DIAG_MSG_TAIL.size  # 72

# TCP states (include/net/tcp_states.h), as ss names them.
STATES = {1: "ESTAB", 2: "SYN-SENT", 3: "SYN-RECV", 4: "FIN-WAIT-1", 5: "FIN-WAIT-2",
          6: "TIME-WAIT", 7: "UNCONN", 8: "CLOSE-WAIT", 9: "LAST-ACK", 10: "LISTEN",
          11: "CLOSING", 12: "NEW-SYN-RECV"}


class SockDiagError(RuntimeError):
    """The kernel refused the dump, or answered something that is not one."""


@dataclass(frozen=True)
class SocketRecord:
    """One socket as the dump showed it."""

    local: str
    local_port: int
    remote: str
    remote_port: int
    state: int
    info: dict[str, int]  # struct tcp_info's fields (empty when the kernel sent none)
    cc: str | None
    bbr: tuple[int, int, int, int] | None  # (bw bytes/s, min_rtt us, pacing_gain, cwnd_gain)


def dump_request(seq: int = 1) -> bytes:
    """The request for every IPv4 TCP socket of the namespace with its info attributes."""
    sockid = SOCKID.pack(0, 0, bytes(16), bytes(16)) + SOCKID_TAIL.pack(0, 0, 0)
    body = REQ_V2.pack(socket.AF_INET, socket.IPPROTO_TCP, EXT, 0, ALL_STATES) + sockid
    return NLMSGHDR.pack(NLMSGHDR.size + len(body), SOCK_DIAG_BY_FAMILY,
                         NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body


def parse_messages(data: bytes) -> tuple[list[SocketRecord], bool]:
    """The sockets in one recv()'s worth of netlink messages, and whether the dump is done."""
    records: list[SocketRecord] = []
    offset = 0
    while offset + NLMSGHDR.size <= len(data):
        length, kind, _flags, _seq, _pid = NLMSGHDR.unpack_from(data, offset)
        if length < NLMSGHDR.size or offset + length > len(data):
            raise SockDiagError(f"a netlink message of {length} bytes at {offset} runs past "
                                f"the {len(data)} received")
        payload = data[offset + NLMSGHDR.size:offset + length]
        offset += (length + 3) & ~3
        if kind == NLMSG_DONE:
            return records, True
        if kind == NLMSG_ERROR:
            errno = -struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else 0
            raise SockDiagError(f"sock_diag refused the dump (errno {errno})")
        if kind == SOCK_DIAG_BY_FAMILY:
            records.append(parse_socket(payload))
    return records, False


def parse_socket(payload: bytes) -> SocketRecord:
    """One inet_diag_msg and its attributes."""
    if len(payload) < DIAG_MSG_LEN:
        raise SockDiagError(f"an inet_diag_msg of {len(payload)} bytes (at least "
                            f"{DIAG_MSG_LEN})")
    family, state, _timer, _retrans = DIAG_MSG_HEAD.unpack_from(payload, 0)
    sport, dport, src, dst = SOCKID.unpack_from(payload, DIAG_MSG_HEAD.size)
    info: dict[str, int] = {}
    cc: str | None = None
    bbr: tuple[int, int, int, int] | None = None
    for kind, value in _attributes(payload[DIAG_MSG_LEN:]):
        if kind == INET_DIAG_INFO:
            info = decode_tcp_info(value)
        elif kind == INET_DIAG_CONG:
            cc = value.split(b"\0", 1)[0].decode(errors="replace")
        elif kind == INET_DIAG_BBRINFO and len(value) >= BBR_INFO.size:
            bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = BBR_INFO.unpack_from(value)
            bbr = ((bw_hi << 32) | bw_lo, min_rtt, pacing_gain, cwnd_gain)
    size = 4 if family == socket.AF_INET else 16
    return SocketRecord(local=socket.inet_ntop(family, src[:size]), local_port=sport,
                        remote=socket.inet_ntop(family, dst[:size]), remote_port=dport,
                        state=state, info=info, cc=cc, bbr=bbr)


def _attributes(data: bytes) -> Iterator[tuple[int, bytes]]:
    offset = 0
    while offset + RTATTR.size <= len(data):
        length, kind = RTATTR.unpack_from(data, offset)
        if length < RTATTR.size or offset + length > len(data):
            raise SockDiagError(f"an attribute of {length} bytes at {offset} runs past the "
                                f"message's {len(data)}")
        yield kind, data[offset + RTATTR.size:offset + length]
        offset += (length + 3) & ~3


def inflight(info: dict[str, int]) -> int | None:
    """Packets in flight as the kernel counts them (tcp_packets_in_flight: sent and not
    acknowledged, less those SACKed or marked lost, plus retransmissions in flight)."""
    try:
        return info["unacked"] - info["sacked"] - info["lost"] + info["retrans"]
    except KeyError:
        return None


class SockDiag:
    """A NETLINK_SOCK_DIAG socket of the calling process's network namespace."""

    RECV_BYTES = 1 << 16

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        self.sock.settimeout(2.0)
        self.seq = 0

    def dump(self) -> list[SocketRecord]:
        """Every IPv4 TCP socket now."""
        self.seq += 1
        self.sock.send(dump_request(self.seq))
        records: list[SocketRecord] = []
        while True:
            try:
                got, done = parse_messages(self.sock.recv(self.RECV_BYTES))
            except socket.timeout:
                raise SockDiagError("sock_diag did not answer within 2 s") from None
            records += got
            if done:
                return records

    def close(self) -> None:
        self.sock.close()
