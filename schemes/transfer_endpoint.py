#!/usr/bin/python3
"""Both ends of a transfer of exactly N bytes on one TCP connection (run inside Mininet hosts).

    transfer_endpoint.py receiver --port P --bytes N --out FILE.json
    transfer_endpoint.py sender --dst IP --port P --cport C --bytes N --cc NAME --out FILE.json

The sender sets the congestion control on its socket before connecting
(TCP_CONGESTION), reads it back, binds the given client port (so the run's
tcp_probe filter and drop plan match this connection alone), writes N bytes,
and waits for the receiver's one-byte reply, which the receiver sends once it
has read all N bytes: the reply is an incoming segment while the connection is
still established, so tcp_probe samples the window after the last ACK, and
TCP_INFO is read then. Both ends write one JSON object; nothing else crosses
the path (no control connection).

Standalone on purpose: it runs under /usr/bin/python3 in a host's namespace
and imports nothing from the project.
"""
from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time
# Linux's TCP_CONGESTION, the same constant socket re-exports; typed in _socket's stub only.
from _socket import TCP_CONGESTION

CHUNK = 1 << 16
ACCEPT_TIMEOUT_S = 30.0
IO_TIMEOUT_S = 120.0
TCP_INFO_LEN = 256
# struct tcp_info (include/uapi/linux/tcp.h), in order; 'B' u8, 'I' u32, 'Q' u64.
TCP_INFO_FIELDS = (
    ("state", "B"), ("ca_state", "B"), ("retransmits", "B"), ("probes", "B"),
    ("backoff", "B"), ("options", "B"), ("wscale", "B"), ("app_limited_flags", "B"),
    ("rto", "I"), ("ato", "I"), ("snd_mss", "I"), ("rcv_mss", "I"), ("unacked", "I"),
    ("sacked", "I"), ("lost", "I"), ("retrans", "I"), ("fackets", "I"),
    ("last_data_sent", "I"), ("last_ack_sent", "I"), ("last_data_recv", "I"),
    ("last_ack_recv", "I"), ("pmtu", "I"), ("rcv_ssthresh", "I"), ("rtt", "I"),
    ("rttvar", "I"), ("snd_ssthresh", "I"), ("snd_cwnd", "I"), ("advmss", "I"),
    ("reordering", "I"), ("rcv_rtt", "I"), ("rcv_space", "I"), ("total_retrans", "I"),
    ("pacing_rate", "Q"), ("max_pacing_rate", "Q"), ("bytes_acked", "Q"),
    ("bytes_received", "Q"), ("segs_out", "I"), ("segs_in", "I"), ("notsent_bytes", "I"),
    ("min_rtt", "I"), ("data_segs_in", "I"), ("data_segs_out", "I"),
    ("delivery_rate", "Q"), ("busy_time", "Q"), ("rwnd_limited", "Q"),
    ("sndbuf_limited", "Q"), ("delivered", "I"), ("delivered_ce", "I"),
    ("bytes_sent", "Q"), ("bytes_retrans", "Q"), ("dsack_dups", "I"), ("reord_seen", "I"),
    ("rcv_ooopack", "I"), ("snd_wnd", "I"),
)


def decode_tcp_info(raw: bytes) -> dict[str, int]:
    """The fields of struct tcp_info that `raw` holds (older kernels return fewer)."""
    out: dict[str, int] = {}
    offset = 0
    for name, code in TCP_INFO_FIELDS:
        size = struct.calcsize(code)
        # Native alignment: u64 fields are 8-aligned in the kernel's struct.
        offset = (offset + size - 1) // size * size
        if offset + size > len(raw):
            break
        out[name] = struct.unpack_from("=" + code, raw, offset)[0]
        offset += size
    return out


def tcp_info(sock: socket.socket) -> dict[str, int]:
    return decode_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))


def congestion_control(sock: socket.socket) -> str:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
    return raw.split(b"\0", 1)[0].decode()


def run_receiver(port: int, nbytes: int) -> dict:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(1)
    print("listening", flush=True)
    listener.settimeout(ACCEPT_TIMEOUT_S)
    conn, peer = listener.accept()
    listener.close()
    conn.settimeout(IO_TIMEOUT_S)
    accepted = time.time()
    received = 0
    first = last = None
    while received < nbytes:
        chunk = conn.recv(min(CHUNK, nbytes - received))
        if not chunk:
            break
        if first is None:
            first = time.time()
        received += len(chunk)
        last = time.time()
    if received == nbytes:
        conn.sendall(b"k")
    extra = 0
    while True:  # until the sender closes; anything more is a protocol error
        chunk = conn.recv(CHUNK)
        if not chunk:
            break
        extra += len(chunk)
    conn.close()
    return {"role": "receiver", "bytes": received, "bytes_expected": nbytes,
            "bytes_after_expected": extra, "peer": f"{peer[0]}:{peer[1]}",
            "accepted_s": accepted, "first_byte_s": first, "last_byte_s": last}


def run_sender(dst: str, port: int, cport: int, nbytes: int, cc: str) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    sock.bind(("0.0.0.0", cport))
    sock.settimeout(IO_TIMEOUT_S)
    started = time.time()
    sock.connect((dst, port))
    connected = time.time()
    cc_read = congestion_control(sock)
    sock.sendall(b"\0" * nbytes)
    written = time.time()
    reply = sock.recv(1)
    replied = time.time()
    info = tcp_info(sock)
    cc_after = congestion_control(sock)
    sock.close()
    return {"role": "sender", "bytes": nbytes, "cc_set": cc, "cc_read": cc_read,
            "cc_read_at_end": cc_after, "reply": reply.decode(errors="replace"),
            "local_port": cport, "started_s": started, "connected_s": connected,
            "written_s": written, "reply_s": replied, "tcp_info": info}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="role", required=True)
    rx = sub.add_parser("receiver")
    rx.add_argument("--port", type=int, required=True)
    rx.add_argument("--bytes", type=int, required=True)
    rx.add_argument("--out", required=True)
    tx = sub.add_parser("sender")
    tx.add_argument("--dst", required=True)
    tx.add_argument("--port", type=int, required=True)
    tx.add_argument("--cport", type=int, required=True)
    tx.add_argument("--bytes", type=int, required=True)
    tx.add_argument("--cc", required=True)
    tx.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        if args.role == "receiver":
            result = run_receiver(args.port, args.bytes)
        else:
            result = run_sender(args.dst, args.port, args.cport, args.bytes, args.cc)
    except OSError as e:
        result = {"role": args.role, "error": f"{type(e).__name__}: {e}"}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    return 1 if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
