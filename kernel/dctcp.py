"""What a DCTCP run needs of its two hosts, and the evidence that it got it.

DCTCP works only with ECN negotiated and with DCTCP on both ends (the receiver's CE
echo is part of the algorithm; Linux's Documentation/networking/dctcp.rst). iperf3
sets `-C` on its data socket only after connect() (checked with strace on iperf3 3.12),
so the SYN would leave without DCTCP's request for ECN, and the iperf3 server has no
`-C` at all. A per-namespace default (`net.ipv4.tcp_congestion_control`) cannot name a
control outside `tcp_allowed_congestion_control` (EPERM), a machine-wide list. So each
host gets a route to the other with `congctl <name>` in its own namespace: every
connection between the two then runs DCTCP from its SYN, which the sender sends with ECT
and ECE/CWR (the control needs ECN), and the receiver accepts (its route names a
control that needs ECN, which is what makes Linux accept an ECT SYN). Nothing
machine-wide changes; `net.ipv4.tcp_ecn` is only read, in both namespaces.

Each run records the routes, both namespaces' ECN settings, and what the data
connection's two sockets negotiated (`ss -tino`: `ecn` on both, `ecnseen` where ECT data
arrived), and samples alpha (kernel/dctcp_alpha.py). A run whose sockets did not both run
the requested DCTCP, or did not negotiate ECN, is invalid with that reason.
"""
from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from core.endpoints import Endpoints, MininetHost
from core.errors import RunInvalid, Unavailable
from kernel.dctcp_alpha import (AlphaSource, BpfMapAlphaSource, DctcpAlphaSampler, SocketKey,
                                SsAlphaSource, netns_inode)

log = logging.getLogger(__name__)

DCTCP_NAMES = ("dctcp", "bpf_dctcp")
ECN_SYSCTLS = ("tcp_ecn", "tcp_ecn_fallback")
SS_SENDER_FILE = "ss-ecn-sender.txt"
SS_RECEIVER_FILE = "ss-ecn-receiver.txt"
SS_FIRST_S = 1.0  # the first look at the sockets, after the sender starts
SS_AGAIN_S = 0.5
SS_FOR_S = 30.0
COMMAND_TIMEOUT_S = 10.0
# Words of `ss -tino` that are flags, not the congestion control's name.
_SS_FLAGS = {"ts", "sack", "ecn", "ecnseen", "fastopen", "cong_alg"}


def is_dctcp(kernel_name: str) -> bool:
    return kernel_name in DCTCP_NAMES


@dataclass(frozen=True)
class SsSocket:
    """One connection of `ss -tino`: its ports, congestion control and option flags."""

    local_port: int | None
    peer_port: int | None
    cc: str | None
    flags: frozenset[str]
    bytes_total: int  # bytes_acked + bytes_received: to find the busiest connection

    def facts(self) -> dict[str, Any]:
        return {"local_port": self.local_port, "peer_port": self.peer_port, "cc": self.cc,
                "ecn": "ecn" in self.flags, "ecnseen": "ecnseen" in self.flags}


def parse_ss(text: str) -> list[SsSocket]:
    sockets: list[SsSocket] = []
    ports: tuple[int | None, int | None] = (None, None)
    for line in text.splitlines():
        if line[:1] and not line[:1].isspace():
            words = line.split()
            ports = (_port(words[3]) if len(words) > 3 else None,
                     _port(words[4]) if len(words) > 4 else None)
            continue
        words = line.split()
        if not words:
            continue
        flags = frozenset(w for w in words if w in _SS_FLAGS)
        names = [w for w in words if ":" not in w and w not in _SS_FLAGS]
        total = sum(int(w.split(":")[1]) for w in words
                    if w.split(":")[0] in ("bytes_acked", "bytes_received")
                    and w.split(":")[1].isdigit())
        sockets.append(SsSocket(ports[0], ports[1], names[0] if names else None, flags, total))
    return sockets


def find_socket(text: str, local_port: int | None, peer_port: int | None) -> SsSocket | None:
    """The connection between these ports (either None: any); the busiest if several."""
    found = [s for s in parse_ss(text) if local_port in (None, s.local_port)
             and peer_port in (None, s.peer_port)]
    return max(found, key=lambda s: s.bytes_total) if found else None


def _port(address: str) -> int | None:
    try:
        return int(address.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return None


def _run(host: MininetHost, argv: list[str]) -> tuple[int, str]:
    """Run a command in the host's namespace: (exit status, stdout and stderr)."""
    proc = host.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return 124, f"`{' '.join(argv)}` did not finish within {COMMAND_TIMEOUT_S:g} s"
    return proc.returncode, out.decode(errors="replace")


def route_with_congctl(host: MininetHost, peer_ip: str, cc: str) -> str:
    """A host route to the peer naming `cc`, set in the host's namespace and read back."""
    status, out = _run(host, ["ip", "-j", "route", "get", peer_ip])
    try:
        dev = json.loads(out)[0]["dev"]
    except (ValueError, IndexError, KeyError, TypeError):
        raise Unavailable(f"{host.name}: `ip -j route get {peer_ip}` gave no device "
                          f"(exit {status}): {out.strip()}") from None
    status, out = _run(host, ["ip", "route", "replace", f"{peer_ip}/32", "dev", dev,
                              "congctl", cc])
    if status != 0:
        raise Unavailable(f"{host.name}: `ip route replace {peer_ip}/32 dev {dev} "
                          f"congctl {cc}` failed (exit {status}): {out.strip()}; DCTCP "
                          "needs both hosts' connections to run it (iproute2 with "
                          "congctl support)")
    _, shown = _run(host, ["ip", "route", "show", f"{peer_ip}/32"])
    shown = " ".join(shown.split())
    if f"congctl {cc}" not in shown:
        raise Unavailable(f"{host.name}: the route to {peer_ip} reads {shown!r} after "
                          f"setting congctl {cc}: this kernel ignored it")
    return shown


def ecn_settings(host: MininetHost) -> dict[str, str]:
    """The namespace's ECN sysctls as the kernel reports them."""
    out = {}
    for key in ECN_SYSCTLS:
        status, text = _run(host, ["cat", f"/proc/sys/net/ipv4/{key}"])
        out[key] = text.strip() if status == 0 else "unreadable"
    return out


class DctcpRun:
    """Set up, watched and verified alongside one iperf3 run of DCTCP."""

    def __init__(self, kernel_name: str, provider: str, server_port: int) -> None:
        self.kernel_name = kernel_name
        self.provider = provider
        self.server_port = server_port
        self.facts: dict[str, Any] = {}
        self.client_port: int | None = None
        self.sampler: DctcpAlphaSampler | None = None
        self.alpha_facts: dict[str, Any] = {"status": "not started"}
        self.ss_sender = ""
        self.ss_receiver = ""
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None

    # ------------------------------------------------------------ the run

    def setup(self, ends: Endpoints) -> None:
        """Before the receiver starts: DCTCP on every connection between the two hosts."""
        sender_ip = ends.sender.IP()
        self.facts = {
            "receiver_cc_from": "a route to the sender with congctl in the receiver's "
                                "namespace",
            "routes": {"sender": route_with_congctl(ends.sender, ends.receiver_ip,
                                                    self.kernel_name),
                       "receiver": route_with_congctl(ends.receiver, sender_ip,
                                                      self.kernel_name)},
            "ecn_settings": {"sender": ecn_settings(ends.sender),
                             "receiver": ecn_settings(ends.receiver)}}

    def start(self, ends: Endpoints, client_port: int | None) -> None:
        """With the sender: sample alpha, and look at both ends' sockets."""
        self.client_port = client_port
        self.sampler = DctcpAlphaSampler(self._alpha_source(ends, client_port), ends.out_dir)
        self.sampler.start()
        self._watch = threading.Thread(target=self._watch_sockets, args=(ends,),
                                       name="dctcp-sockets", daemon=True)
        self._watch.start()

    def stop(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.join(timeout=COMMAND_TIMEOUT_S * 2 + SS_AGAIN_S)
        if self.sampler is not None:
            self.alpha_facts = self.sampler.stop()
            self.sampler = None

    def verify(self, receiver_cc_from_iperf: str | None) -> dict[str, Any]:
        """The facts of the run; RunInvalid when the two sockets did not both run
        `kernel_name` with ECN negotiated."""
        sender = find_socket(self.ss_sender, self.client_port, self.server_port)
        receiver = find_socket(self.ss_receiver, self.server_port, self.client_port)
        facts = dict(self.facts, alpha=self.alpha_facts,
                     sender_socket=sender.facts() if sender else None,
                     receiver_socket=receiver.facts() if receiver else None,
                     receiver_cc_from_iperf3=receiver_cc_from_iperf)
        settings = self.facts.get("ecn_settings", {})
        if sender is None or receiver is None:
            missing = "sender's" if sender is None else "receiver's"
            raise RunInvalid(f"DCTCP unverified: the data connection was not in the {missing} "
                             f"`ss -tino` samples ({SS_SENDER_FILE}, {SS_RECEIVER_FILE})")
        if "ecn" not in sender.flags or "ecn" not in receiver.flags:
            raise RunInvalid(
                f"ECN was not negotiated on the data connection (ss: sender "
                f"{sorted(sender.flags)}, receiver {sorted(receiver.flags)}; tcp_ecn: sender "
                f"{settings.get('sender')}, receiver {settings.get('receiver')}); DCTCP "
                f"needs it, and {self.kernel_name} without it runs as {sender.cc}")
        for side, cc in (("receiver's socket (ss)", receiver.cc),
                         ("receiver's socket (iperf3)", receiver_cc_from_iperf)):
            if cc is not None and cc != self.kernel_name:
                raise RunInvalid(f"DCTCP needs both ends: the {side} ran {cc!r}, "
                                 f"not {self.kernel_name}")
        if "ecnseen" not in receiver.flags:
            raise RunInvalid("the receiver never saw an ECN-capable packet: something on the "
                             "path cleared the ECN field, so no mark could reach DCTCP")
        return facts

    # ----------------------------------------------------------- helpers

    def _alpha_source(self, ends: Endpoints, client_port: int | None) -> AlphaSource:
        if self.provider == "ebpf":
            since = time.monotonic_ns()
            sender_ip = ends.sender.IP()
            sender = SocketKey(netns_inode(_pid(ends.sender)), sender_ip, ends.receiver_ip,
                               client_port, self.server_port)
            receiver = SocketKey(netns_inode(_pid(ends.receiver)), ends.receiver_ip,
                                 sender_ip, self.server_port, client_port)
            return BpfMapAlphaSource(sender, receiver, since)
        argv = ["ss", "-tino", "dst", ends.receiver_ip]
        return SsAlphaSource(lambda: _run(ends.sender, argv)[1], client_port)

    def _watch_sockets(self, ends: Endpoints) -> None:
        """`ss -tino` on both hosts until the data connection shows on both."""
        self._stop.wait(SS_FIRST_S)
        deadline = time.monotonic() + SS_FOR_S
        while True:
            sender = _run(ends.sender, ["ss", "-tino", "dst", ends.receiver_ip])[1]
            # No address filter here: the server's sockets are IPv4-mapped IPv6 ones.
            receiver = _run(ends.receiver, ["ss", "-tino"])[1]
            seen = (find_socket(sender, self.client_port, self.server_port),
                    find_socket(receiver, self.server_port, self.client_port))
            # A look after the connection closed must not replace one that saw it.
            if seen[0] is not None or not self.ss_sender:
                self.ss_sender = sender
            if seen[1] is not None or not self.ss_receiver:
                self.ss_receiver = receiver
            if all(s is not None and s.cc == self.kernel_name for s in seen) \
                    or self._stop.is_set() or time.monotonic() > deadline:
                break
            self._stop.wait(SS_AGAIN_S)
        (ends.out_dir / SS_SENDER_FILE).write_text(self.ss_sender)
        (ends.out_dir / SS_RECEIVER_FILE).write_text(self.ss_receiver)


def _pid(host: MininetHost) -> int:
    pid = getattr(host, "pid", None)
    if not isinstance(pid, int):
        raise Unavailable(f"{host.name}: no process id, so its namespace is unknown")
    return pid
