"""The two-host path: sender -- TraceLink -- receiver, on the guarded network base.

Node names carry a per-run prefix so concurrent runs never collide, and teardown removes
exactly the nodes, links and processes this path created (topologies/guarded_network.py).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mininet.net import Mininet

from core.active_runs import ActiveRun
from kernel import tcp_buffers
from topologies.guarded_network import RECEIVER_IP, SENDER_IP, HostPair
from topologies.link_conditions import LinkConditions
from topologies.trace_link import LinkSide, TraceLink

__all__ = ["RECEIVER_IP", "SENDER_IP", "TracePath"]

log = logging.getLogger(__name__)


class TracePath(HostPair):
    """The trace path's network: its link's sides, delay, queue and conditions (random loss;
    a rate step is in its data side), the hosts' TCP buffers."""

    def __init__(self, *, data: LinkSide, ack: LinkSide, emulator: Path, log_dir: Path,
                 delay_ms: int, queue: str, once: bool, active: ActiveRun,
                 span_ms: int | None = None,
                 tcp_buffer_profile: str = tcp_buffers.MACHINE, queue_log: bool = False,
                 conditions: LinkConditions | None = None,
                 data_path: str | None = None, refuse_placement: str | None = None) -> None:
        tcp_buffers.profile_of(tcp_buffer_profile)  # an unknown name fails before building
        self.tcp_buffer_profile = tcp_buffer_profile
        self.link_options: dict[str, Any] = dict(
            data=data, ack=ack, emulator=emulator, log_dir=log_dir, delay_ms=delay_ms,
            queue=queue, once=once, span_ms=span_ms, queue_log=queue_log, on_process=active.add,
            data_path=data_path, refuse_placement=refuse_placement,
            **(conditions or LinkConditions()).link_words())
        super().__init__(active)

    def _build(self, net: Mininet) -> None:
        sender, receiver = self.add_hosts(net)
        self.link = net.addLink(sender, receiver, cls=TraceLink, **self.link_options)
        net.build()
        self.record_hosts(net)
        for host in (sender, receiver):
            # IPv6 chatter (router solicitations, MLD) would cross the link too.
            host.cmd("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            tcp_buffers.apply(host, self.tcp_buffer_profile)
        # Static ARP: no broadcast has to cross the emulated link.
        net.staticArp()
