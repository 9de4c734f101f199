"""The shared bottleneck: N senders into one switch port, and through it to one receiver.

    sender 01 --+
    sender 02 --+-- switch: a Linux bridge --[ netrepro-link ]-- receiver
    ...       --+                              the bridge's port towards the receiver:
                                               fixed rate, the run's queue, per-packet log

Long flows from several hosts meet at one switch port. Here the switch is a Linux bridge
(`ip link add ... type bridge`, built into the kernel; no Open vSwitch, no brctl) inside a
namespace of its own, and its port towards the receiver is the emulator: the port's rate,
its buffer and its marking are
netrepro-link's (a TraceLink from the switch to the receiver), which logs every packet's
enqueue and dequeue, so the queue's length is known at every packet.

The emulator carries the path's whole delay (the sender links have none: netem is not in
every kernel, and the emulator's delay is exact): `data_delay_ms` after the bottleneck queue,
`ack_delay_ms` before the ACKs' queue, whole milliseconds.

With `red` set, the bottleneck is the kernel's instead (where the kernel has RED):
runkinds/shared_bottleneck/red.py puts HTB at the port's rate and RED with ECN on the bridge's port
towards the emulator, whose own queue then never builds; a kernel without RED fails the
build, naming the missing qdisc.

Names carry the run's prefix (<prefix>01.. senders, <prefix>r the receiver, <prefix>w the
switch, <prefix>br its bridge, <prefix>we the emulator's node), so runs side by side never
collide; every interface lives in one of the run's namespaces, which teardown ends, so
nothing of it outlives the run. Every wait has a deadline.
"""
from __future__ import annotations

import json
import logging
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mininet.net import Mininet
from mininet.node import Host, Node

from core.active_runs import ActiveRun
from kernel.offloads import disable_offloads
from kernel.segments import SEGMENTS, one_segment_per_packet
from topologies.link_side import LinkSide
from runkinds.shared_bottleneck.red import RedMarking, install_red
from topologies.guarded_network import GuardedNetwork
from topologies.trace_link import TraceLink

log = logging.getLogger(__name__)

RECEIVER_IP = "10.0.0.1"
MAX_SENDERS = 99  # two digits in the senders' names keep interface names within 15 bytes
COMMAND_TIMEOUT_S = 15.0
FORWARDING_TIMEOUT_S = 10.0


class BottleneckError(RuntimeError):
    """The shared bottleneck could not be built; the message names the step and the output."""


def sender_ip(index: int) -> str:
    """Sender `index` (1..MAX_SENDERS): 10.0.0.2 and up (the receiver is 10.0.0.1)."""
    if not 1 <= index <= MAX_SENDERS:
        raise ValueError(f"sender {index}: 1..{MAX_SENDERS}")
    return f"10.0.0.{1 + index}"


def sender_name(prefix: str, index: int) -> str:
    return f"{prefix}{index:02d}"


@dataclass(frozen=True)
class BottleneckConfig:
    """What the run asks of the network."""

    senders: int
    rate_mbps: float
    data_delay_ms: int  # after the bottleneck queue (towards the receiver)
    ack_delay_ms: int  # before the ACKs' queue (towards the senders)
    queue: str  # the emulator's queue on the bottleneck port (data direction)
    span_ms: int  # the emulator serves nothing later than this after its start
    red: RedMarking | None = None  # tc RED on the bridge's port instead (where it exists)
    # Each sender's own round trip (ms), when they differ: its packets' delays in the
    # emulator, rtt // 2 after the queue and the rest before the ACKs' queue. None: every
    # sender has the path's (data_delay_ms + ack_delay_ms).
    sender_rtts_ms: tuple[int, ...] | None = None
    # TCP at the senders builds one-segment packets (kernel/segments.py); False: as the
    # kernel builds them (GSO, sent in TSO-sized bursts).
    one_segment_packets: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.senders <= MAX_SENDERS:
            raise ValueError(f"senders: {self.senders} is not within 1..{MAX_SENDERS}")
        if self.sender_rtts_ms is not None and len(self.sender_rtts_ms) != self.senders:
            raise ValueError(f"sender_rtts_ms: {len(self.sender_rtts_ms)} round trips for "
                             f"{self.senders} senders")

    def delays_ms(self) -> tuple[dict[str, int], dict[str, int]] | None:
        """(data delay by sender address, ACK delay by sender address), or None when every
        sender has the path's delays."""
        if self.sender_rtts_ms is None:
            return None
        ips = [sender_ip(i) for i in range(1, self.senders + 1)]
        return ({ip: rtt // 2 for ip, rtt in zip(ips, self.sender_rtts_ms)},
                {ip: rtt - rtt // 2 for ip, rtt in zip(ips, self.sender_rtts_ms)})


def run(node: Any, argv: list[str], what: str, stdin: str | None = None,
        timeout_s: float = COMMAND_TIMEOUT_S) -> str:
    """Run a command in a node's namespace; BottleneckError naming `what` on failure or when
    it does not finish in time."""
    proc = node.popen(argv, stdin=subprocess.PIPE if stdin is not None else None,
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(stdin.encode() if stdin is not None else None,
                                  timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise BottleneckError(f"{what}: `{' '.join(argv)}` in {node.name} did not finish "
                              f"within {timeout_s:g} s") from None
    text = out.decode(errors="replace")
    if proc.returncode != 0:
        raise BottleneckError(f"{what}: `{' '.join(argv)}` in {node.name} failed (exit "
                              f"{proc.returncode}): {text.strip()}")
    return text


class SharedBottleneck(GuardedNetwork):
    """The shared bottleneck's network: the senders, the bridge, the bottleneck link."""

    what = "the shared bottleneck"

    def __init__(self, config: BottleneckConfig, *, emulator: Path, log_dir: Path,
                 active: ActiveRun, refuse_placement: str | None = None) -> None:
        """`refuse_placement`: why the bottleneck's link must not take a CPU for its emulator
        (topologies/cpu_placement.py), or None."""
        super().__init__(active)
        self.refuse_placement = refuse_placement
        self.config = config
        self.emulator = emulator
        self.log_dir = log_dir
        self.switch: Node | None = None
        self.senders: list[Host] = []
        self.receiver: Host | None = None
        self.red_facts: dict[str, Any] | None = None

    @property
    def bridge(self) -> str:
        return f"{self.prefix}br"

    @property
    def uplink(self) -> str:
        """The bridge's port towards the receiver (the emulator's side A)."""
        assert self.link is not None
        return self.link.intf1.name

    def _build(self, net: Mininet) -> None:
        c = self.config
        self.switch = self.add_node(f"{self.prefix}w")
        self.receiver = self.add_host(net, f"{self.prefix}r", ip=f"{RECEIVER_IP}/24")
        # The bottleneck first: it takes the switch's port 0, so its node is <prefix>we.
        per_sender = c.delays_ms()
        self.link = TraceLink(
            self.switch, self.receiver, data=LinkSide(rate_mbps=c.rate_mbps),
            ack=LinkSide(rate_mbps=c.rate_mbps), emulator=self.emulator,
            params1={"delay": f"{c.data_delay_ms}ms"}, params2={"delay": f"{c.ack_delay_ms}ms"},
            queue=c.queue, ack_queue="infinite", span_ms=c.span_ms, queue_log=True,
            log_dir=self.log_dir, on_process=self.active.add,
            refuse_placement=self.refuse_placement,
            data_delays_ms=None if per_sender is None else per_sender[0],
            ack_delays_ms=None if per_sender is None else per_sender[1])
        for i in range(1, c.senders + 1):
            sender = self.add_host(net, sender_name(self.prefix, i), ip=f"{sender_ip(i)}/24")
            net.addLink(sender, self.switch)
            self.senders.append(sender)
        net.build()
        self.record_hosts(net)
        for node in [*self.senders, self.receiver, self.switch]:
            # IPv6 chatter (router solicitations, MLD) would cross the bottleneck too.
            run(node, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                       "net.ipv6.conf.default.disable_ipv6=1"], "turning IPv6 off")
        for node in [*self.senders, self.receiver]:
            # No ssthresh cached from an earlier connection to the same host shapes a flow's
            # slow start (several flows of a host go to one receiver).
            run(node, ["sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"],
                "turning TCP's metrics cache off")
        self._bridge()
        self._static_neighbours()
        if c.red is not None:
            # Before the emulator: a kernel without RED fails here, naming it.
            self.red_facts = install_red(self.switch, self.uplink, c.red, c.rate_mbps)

    def _bridge(self) -> None:
        """The switch: every port of the switch's namespace in one bridge, offloads off on
        every interface a data packet crosses (so one packet is one frame), all forwarding."""
        assert self.switch is not None and self.link is not None
        switch = self.switch
        ports = [intf.name for intf in switch.intfList() if intf.name != "lo"]
        run(switch, ["ip", "link", "add", "name", self.bridge, "type", "bridge",
                     "stp_state", "0", "forward_delay", "0", "mcast_snooping", "0",
                     "mcast_querier", "0"], "creating the bridge")
        for port in ports:
            run(switch, ["ip", "link", "set", port, "master", self.bridge], "adding a port")
        for node, intf in [(s, s.defaultIntf().name) for s in self.senders] + \
                [(switch, p) for p in ports if p != self.uplink]:
            disable_offloads(node, intf)  # the uplink's and the receiver's: TraceLink.start
        if self.config.one_segment_packets:
            for sender in self.senders:  # before any connection: TCP reads it as it routes
                one_segment_per_packet(sender, sender.defaultIntf().name)
        for port in [*ports, self.bridge]:
            run(switch, ["ip", "link", "set", port, "up"], "bringing the bridge up")
        deadline = time.monotonic() + FORWARDING_TIMEOUT_S
        while True:
            states = self.port_states()
            if all(states.get(p) == "forwarding" for p in ports):
                return
            if time.monotonic() > deadline:
                raise BottleneckError(f"bridge {self.bridge}: ports not forwarding after "
                                      f"{FORWARDING_TIMEOUT_S:g} s: {states}")
            time.sleep(0.05)

    def port_states(self) -> dict[str, str]:
        assert self.switch is not None
        shown = run(self.switch, ["bridge", "-j", "link", "show"], "reading the bridge's ports")
        return {entry.get("ifname"): entry.get("state") for entry in json.loads(shown or "[]")}

    def _static_neighbours(self) -> None:
        """Static ARP between each sender and the receiver, and the bridge's forwarding
        entries made static: no broadcast or flood crosses the bottleneck."""
        assert self.receiver is not None and self.switch is not None
        receiver_if = self.receiver.defaultIntf()
        lines = []
        for sender in self.senders:
            intf = sender.defaultIntf()
            run(sender, ["ip", "neigh", "replace", RECEIVER_IP, "lladdr", receiver_if.MAC(),
                         "dev", intf.name, "nud", "permanent"], "static ARP on a sender")
            lines.append(f"neigh replace {sender.IP()} lladdr {intf.MAC()} dev "
                         f"{receiver_if.name} nud permanent")
        run(self.receiver, ["ip", "-batch", "-"], "static ARP on the receiver",
            stdin="\n".join(lines) + "\n")
        fdb = [f"fdb replace {self.receiver.defaultIntf().MAC()} dev {self.uplink} master "
               "static"]
        for sender in self.senders:
            port = sender.defaultIntf().link.intf2.name  # the switch's end of its link
            fdb.append(f"fdb replace {sender.defaultIntf().MAC()} dev {port} master static")
        run(self.switch, ["bridge", "-batch", "-"], "static forwarding entries",
            stdin="\n".join(fdb) + "\n")

    # ------------------------------------------------------------------ the run

    def start(self) -> None:
        """Start the emulator (offloads off on its side of the path first)."""
        assert self.link is not None
        self.link.start()

    def check_alive(self) -> None:
        assert self.link is not None
        self.link.check_alive()

    def describe(self) -> dict[str, Any]:
        c = self.config
        return {"kind": "shared bottleneck", "senders": c.senders,
                "switch": f"Linux bridge {self.bridge} in {self.prefix}w (STP off, static "
                          "forwarding entries)",
                "bottleneck": f"netrepro-link on the bridge's port {self.uplink}",
                "rate_mbps": c.rate_mbps, "queue": c.queue, "ack_queue": "infinite",
                "delays_ms": {"sender_links": 0, "data_after_queue": c.data_delay_ms,
                              "ack_before_queue": c.ack_delay_ms},
                "sender_rtts_ms": (None if c.sender_rtts_ms is None else
                                   {sender_ip(i): r
                                    for i, r in enumerate(c.sender_rtts_ms, 1)}),
                "delay_where": "in the emulator, whole milliseconds (the sender links "
                               "have none)",
                "receiver_ip": RECEIVER_IP,
                "sender_segments_per_packet": (SEGMENTS if c.one_segment_packets else
                                               "as TCP builds them (GSO: TSO-sized bursts)"),
                "red": self.red_facts}
