"""The two-host path every trace experiment uses: sender -- TraceLink -- receiver.

Node names carry a per-run prefix so concurrent runs never collide, and
teardown removes exactly the nodes, links and processes this path created.
"""
from __future__ import annotations

import logging
import secrets
from pathlib import Path
from types import TracebackType
from typing import Any, Callable

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host

from core.active_runs import ActiveRun
from kernel import tcp_buffers
from topologies.network_start import GuardedHost, NetworkStartError, start_deadline
from topologies.trace_link import LinkSide, TraceLink

log = logging.getLogger(__name__)

SENDER_IP = "10.0.0.1"
RECEIVER_IP = "10.0.0.2"
# The whole set-up (hosts, the link's namespace, addresses, sysctls); it takes a second or
# two. A node's shell that dies fails it at once (topologies/network_start.py).
NETWORK_START_TIMEOUT_S = 60.0


def new_prefix() -> str:
    """A short unique tag: node names are <prefix>s/r/e, interface names <prefix>s-eth0."""
    return "nr" + secrets.token_hex(3)


class HostPair:
    """What every path here shares: the run's prefix, a sender and a receiver named by it
    (<prefix>s at SENDER_IP, <prefix>r at RECEIVER_IP) in the path's Mininet, the TraceLink
    between them (directly or not), and the teardown on exit: the link stopped, then what
    `_stop_between` stops, then the hosts."""

    active: ActiveRun
    net: Mininet | None
    link: TraceLink | None

    @property
    def prefix(self) -> str:
        return self.active.prefix

    def add_hosts(self, net: Mininet) -> tuple[Host, Host]:
        return (net.addHost(f"{self.prefix}s", cls=GuardedHost, ip=f"{SENDER_IP}/24"),
                net.addHost(f"{self.prefix}r", cls=GuardedHost, ip=f"{RECEIVER_IP}/24"))

    @property
    def sender(self) -> Host:
        assert self.net is not None
        return self.net.get(f"{self.prefix}s")

    @property
    def receiver(self) -> Host:
        assert self.net is not None
        return self.net.get(f"{self.prefix}r")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._teardown()

    def _teardown(self) -> None:
        # A node whose shell died cannot be asked to remove anything: the rest goes on.
        if self.link is not None:
            _despite_dead_shells(self.link.stop)
        _despite_dead_shells(self._stop_between)
        if self.net is not None:
            for host in self.net.hosts:
                _despite_dead_shells(host.terminate)
            self.net = None

    def _stop_between(self) -> None:
        """What the path put between the hosts besides the link (nothing here)."""


def _despite_dead_shells(step: Callable[[], None]) -> None:
    try:
        step()
    except NetworkStartError as e:
        log.warning("teardown: %s", e)


class TracePath(HostPair):
    """Context manager: builds the network on enter, tears it down on exit."""

    def __init__(self, *, data: LinkSide, ack: LinkSide, emulator: Path, log_dir: Path,
                 delay_ms: int, queue: str, once: bool, active: ActiveRun,
                 span_ms: int | None = None,
                 tcp_buffer_profile: str = tcp_buffers.MACHINE, queue_log: bool = False) -> None:
        tcp_buffers.profile_of(tcp_buffer_profile)  # an unknown name fails before building
        self.tcp_buffer_profile = tcp_buffer_profile
        self.link_options: dict[str, Any] = dict(
            data=data, ack=ack, emulator=emulator, log_dir=log_dir, delay_ms=delay_ms,
            queue=queue, once=once, span_ms=span_ms, queue_log=queue_log, on_process=active.add)
        self.active = active
        self.net: Mininet | None = None
        self.link: TraceLink | None = None

    def __enter__(self) -> "TracePath":
        setLogLevel("warning")
        self.net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
        try:
            with start_deadline(NETWORK_START_TIMEOUT_S, f"the network of {self.prefix}"):
                self._build(self.net)
        except BaseException:
            self._teardown()
            raise
        return self

    def _build(self, net: Mininet) -> None:
        sender, receiver = self.add_hosts(net)
        self.link = net.addLink(sender, receiver, cls=TraceLink, **self.link_options)
        net.build()
        for host in (sender, receiver):
            self.active.add(host.pid, f"mininet:{host.name}")
            # IPv6 chatter (router solicitations, MLD) would cross the link too.
            host.cmd("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            tcp_buffers.apply(host, self.tcp_buffer_profile)
        # Static ARP: no broadcast has to cross the emulated link.
        net.staticArp()
