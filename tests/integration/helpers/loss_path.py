"""Three network namespaces in a line, with a bottleneck and a deterministic segment dropper.

The smallest path on which one TCP flow can be given an exact loss pattern:
sender -- router -- receiver over veth pairs. The router's link towards the
receiver is the bottleneck (tbf, 10 Mbit/s by default: a FIFO that never
reorders, one segment per 1.2 ms, so the receiver handles and ACKs each
segment before the next arrives). The bottleneck is in the router, not on the
sender's own interface: a queue there would hold the sender's skbs, and TCP
Small Queues would then hold back what the sender transmits on each ACK.
Offloads are off everywhere (segments are MSS-sized), and
kernel/segment_dropper.py sits on the receiver's ingress. The sender's
namespace runs without tail loss probes (tcp_early_retrans = 0), without saved
metrics, with IW10 on its route and buffers that never limit the flow; the
receiver's route announces a window that never limits it either.

`run_transfer` sends N bytes on one connection from a given client port with
a given congestion control set on the socket, and returns what
getsockopt(TCP_CONGESTION) reported on it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kernel.segment_dropper import SegmentDropper

SENDER_IP, RECEIVER_IP = "10.199.1.1", "10.199.2.2"
ROUTER_SENDER_SIDE, ROUTER_RECEIVER_SIDE = "10.199.1.2", "10.199.2.1"
SERVER_PORT = 5201

# The receiver reads nothing until the sender's data is all acknowledged: a socket its
# application holds (in recv) queues arriving segments in its backlog, which merges
# consecutive ones, and the sender then gets one ACK for two segments. Unread, every
# segment is handled on arrival and ACKed on its own (SACK for those past the hole).
_RECEIVER = r"""
import socket, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((sys.argv[1], int(sys.argv[2])))
srv.listen(1)
print("ready", flush=True)
conn, _ = srv.accept()
sys.stdin.readline()  # "go": the sender's data is acknowledged
total = 0
while True:
    chunk = conn.recv(1 << 16)
    if not chunk:
        break
    total += len(chunk)
conn.close()
print(total, flush=True)
"""

_SENDER = r"""
import fcntl, socket, struct, sys, termios, time
host, port, cport, cc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
nbytes = int(sys.argv[5])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", cport))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
s.connect((host, port))
used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
print(used, flush=True)
s.sendall(b"x" * nbytes)
# Close only once everything is acknowledged: after shutdown() the socket is in FIN_WAIT1,
# where the kernel handles ACKs outside tcp_rcv_established and tcp:tcp_probe goes silent.
while fcntl.ioctl(s.fileno(), termios.TIOCOUTQ, struct.pack("i", 0)) != struct.pack("i", 0):
    time.sleep(0.005)
print("acked", flush=True)
s.shutdown(socket.SHUT_WR)
s.recv(1)
s.close()
"""


@dataclass
class LossPath:
    sender_ns: str
    receiver_ns: str
    sender_dev: str
    receiver_dev: str
    dropper: SegmentDropper

    def run_transfer(self, cc: str, client_port: int, nbytes: int,
                     timeout_s: float = 30.0) -> str:
        """One transfer; returns the congestion control the sender's socket reported."""
        receiver = subprocess.Popen(
            ["ip", "netns", "exec", self.receiver_ns, sys.executable, "-c", _RECEIVER,
             RECEIVER_IP, str(SERVER_PORT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        sender: subprocess.Popen[str] | None = None
        try:
            assert receiver.stdout is not None and receiver.stdin is not None
            if receiver.stdout.readline().strip() != "ready":
                raise RuntimeError(f"receiver did not start: {receiver.communicate()[1]}")
            sender = subprocess.Popen(
                ["ip", "netns", "exec", self.sender_ns, sys.executable, "-c", _SENDER,
                 RECEIVER_IP, str(SERVER_PORT), str(client_port), cc, str(nbytes)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert sender.stdout is not None
            used = sender.stdout.readline().strip()
            acked = sender.stdout.readline().strip()
            if acked != "acked":
                raise RuntimeError(f"sender failed: {sender.communicate(timeout=5)[1]}")
            receiver.stdin.write("go\n")
            receiver.stdin.flush()
            _, err = sender.communicate(timeout=timeout_s)
            if sender.returncode != 0:
                raise RuntimeError(f"sender failed: {err.strip()}")
            received = receiver.communicate(timeout=timeout_s)[0].strip()
            if received != str(nbytes):
                raise RuntimeError(f"receiver got {received!r} bytes, expected {nbytes}")
            return used
        finally:
            for proc in (sender, receiver):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.wait()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _in_ns(ns: str, *argv: str) -> None:
    subprocess.run(["ip", "netns", "exec", ns, *argv], check=True, capture_output=True,
                   text=True)


@contextmanager
def loss_path(dropper_obj: Path, tag: str | None = None, rate: str = "10mbit",
              sender_sysctls: dict[str, str] | None = None) -> Iterator[LossPath]:
    """Create the namespaces and links; remove exactly them afterwards.

    `sender_sysctls` replace or add to the sender namespace's settings below
    (e.g. net.ipv4.tcp_sack=0)."""
    tag = tag or f"{os.getpid() % 100000}"
    sender_ns, router_ns, receiver_ns = (f"nrloss-{tag}-s", f"nrloss-{tag}-m",
                                         f"nrloss-{tag}-r")
    sender_dev, router_in = f"nrls{tag}"[:15], f"nrlm{tag}"[:15]
    router_out, receiver_dev = f"nrln{tag}"[:15], f"nrlr{tag}"[:15]
    created: list[str] = []
    try:
        for ns in (sender_ns, router_ns, receiver_ns):
            _ip("netns", "add", ns)
            created.append(ns)
        _ip("link", "add", sender_dev, "netns", sender_ns, "type", "veth", "peer", "name",
            router_in, "netns", router_ns)
        _ip("link", "add", router_out, "netns", router_ns, "type", "veth", "peer", "name",
            receiver_dev, "netns", receiver_ns)
        for ns, dev, addr in ((sender_ns, sender_dev, f"{SENDER_IP}/24"),
                              (router_ns, router_in, f"{ROUTER_SENDER_SIDE}/24"),
                              (router_ns, router_out, f"{ROUTER_RECEIVER_SIDE}/24"),
                              (receiver_ns, receiver_dev, f"{RECEIVER_IP}/24")):
            _ip("-n", ns, "addr", "add", addr, "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _in_ns(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off")
        _in_ns(router_ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
        _ip("-n", sender_ns, "route", "add", "default", "via", ROUTER_SENDER_SIDE,
            "initcwnd", "10")
        _ip("-n", receiver_ns, "route", "add", "default", "via", ROUTER_RECEIVER_SIDE,
            "initrwnd", "1000")
        settings = {"net.ipv4.tcp_early_retrans": "0", "net.ipv4.tcp_no_metrics_save": "1",
                    "net.ipv4.tcp_sack": "1", "net.ipv4.tcp_ecn": "0",
                    # Buffers that never limit the flow: the sender always has data
                    # queued (a dupACK can clock out new data).
                    "net.ipv4.tcp_wmem": "4096 4194304 8388608", **(sender_sysctls or {})}
        for key, value in settings.items():
            _in_ns(sender_ns, "sysctl", "-q", "-w", f"{key}={value}")
        _in_ns(receiver_ns, "sysctl", "-q", "-w", "net.ipv4.tcp_rmem=4096 4194304 8388608")
        _in_ns(router_ns, "tc", "qdisc", "replace", "dev", router_out, "root", "tbf", "rate",
               rate, "burst", "1600", "limit", "2000000")
        dropper = SegmentDropper(dropper_obj, dev=receiver_dev, netns=receiver_ns,
                                 direction="ingress")
        path = LossPath(sender_ns, receiver_ns, sender_dev, receiver_dev, dropper)
        try:
            yield path
        finally:
            dropper.detach()
    finally:
        for ns in reversed(created):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
