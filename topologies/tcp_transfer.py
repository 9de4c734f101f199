"""One TCP transfer of exactly N bytes, with the congestion control set on the socket.

    python3 -m topologies.tcp_transfer receive --port P --out recv.json
    python3 -m topologies.tcp_transfer send --to IP --port P --bytes N --cc cubic --out send.json

The receiver accepts one connection, reads to the end and closes; the sender
sets TCP_CONGESTION on its socket before connecting, reads it back (a mismatch
fails the transfer), writes N bytes, half-closes, and waits for the receiver's
close: its `seconds` run from connect() to that close. One connection, no
control channel, so a drop plan keyed on the port sees only this flow.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from pathlib import Path

CHUNK = 16384
TCP_CONGESTION: int = getattr(socket, "TCP_CONGESTION", 13)  # Linux's value


def _write(path: Path, data: dict[str, object]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.rename(path)


def receive(port: int, out: Path, ready: Path | None = None, timeout_s: float = 120.0) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", port))
        srv.listen(1)
        srv.settimeout(timeout_s)
        if ready is not None:
            ready.write_text("listening\n")
        conn, peer = srv.accept()
        with conn:
            conn.settimeout(timeout_s)
            start = time.time()
            total = 0
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                total += len(data)
            end = time.time()
    _write(out, {"bytes": total, "peer": f"{peer[0]}:{peer[1]}", "first_accept": start,
                 "eof": end})
    return 0


def send(to: str, port: int, nbytes: int, cc: str, out: Path, timeout_s: float = 120.0) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        got = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 32).split(b"\0")[0].decode()
        if got != cc:
            _write(out, {"error": f"congestion control {got!r} on the socket, asked {cc!r}"})
            return 2
        s.settimeout(timeout_s)
        start = time.time()
        s.connect((to, port))
        local = s.getsockname()
        payload = bytes(CHUNK)
        left = nbytes
        while left > 0:
            left -= s.send(payload[:min(CHUNK, left)])
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):
            pass
        end = time.time()
        cc_after = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 32).split(b"\0")[0]
    _write(out, {"bytes": nbytes, "cc": got, "cc_after": cc_after.decode(), "start": start,
                 "end": end, "seconds": end - start, "local": f"{local[0]}:{local[1]}"})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="topologies.tcp_transfer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="role", required=True)
    r = sub.add_parser("receive")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--ready", type=Path)
    s = sub.add_parser("send")
    s.add_argument("--to", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--cc", default="cubic")
    s.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.role == "receive":
        return receive(args.port, args.out, args.ready)
    if args.bytes <= 0:
        parser.error("--bytes must be > 0")
    return send(args.to, args.port, args.bytes, args.cc, args.out)


if __name__ == "__main__":
    sys.exit(main())
