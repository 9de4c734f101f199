"""The one base every kind's network is built on: a start with a deadline, every process
recorded, and a teardown of exactly what was built.

A kind's network (runkinds/<kind>/network.py) subclasses `GuardedNetwork` and says only
what is its own: `_refuse()` (anything that can be refused before a node exists: a missing
switch, a controller that cannot start), `_build(net)` (its nodes and links, made with
`add_host`/`add_node`), `_stop_between()` (what it put between the hosts besides the
link) and `describe()`. The base owns the rest, so no network can start without a deadline
or leave a process behind:

- entering builds the network inside `start_deadline(start_timeout_s)`; any failure tears
  down what was built so far and raises, with the shell's or Mininet's own words;
- every node is one of the guarded classes (topologies/network_start.py), its PID recorded
  in the run's ActiveRun (`./repro clean` finds leftovers of a killed run by it);
- leaving stops the link first (its emulator flushes its logs), then `_stop_between()`,
  then every node; a node whose shell has died is skipped with a warning, the rest goes on.
"""
from __future__ import annotations

import logging
import secrets
from types import TracebackType
from typing import Any, Callable, Self

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host, Node

from core.active_runs import ActiveRun
from topologies.network_start import GuardedHost, GuardedNode, NetworkStartError, start_deadline
from topologies.trace_link import TraceLink

log = logging.getLogger(__name__)

# The whole set-up of a small network (hosts, the link's namespace, addresses, sysctls)
# takes a second or two; a kind whose set-up does more says so.
NETWORK_START_TIMEOUT_S = 60.0
# The two hosts of a path with one sender and one receiver (HostPair).
SENDER_IP = "10.0.0.1"
RECEIVER_IP = "10.0.0.2"


def new_prefix() -> str:
    """A short unique tag for one run's names: nodes <prefix>s, <prefix>r..., interfaces
    <prefix>s-eth0... (at most 15 bytes with the suffixes)."""
    return "nr" + secrets.token_hex(3)


class GuardedNetwork:
    """Context manager: builds the network on enter (with a deadline), tears it down on exit.

    Subclasses implement `_build(net)`; they never override `__enter__` or `__exit__`."""

    start_timeout_s: float = NETWORK_START_TIMEOUT_S
    # What the deadline's message calls this network ("the network of nr12ab34").
    what: str = "the network"

    def __init__(self, active: ActiveRun) -> None:
        self.active = active
        self.net: Mininet | None = None
        self.link: TraceLink | None = None
        self._nodes: list[Node] = []  # made outside Mininet's host list (a switch's node)

    @property
    def prefix(self) -> str:
        return self.active.prefix

    # ------------------------------------------------------------------ what a kind adds

    def _refuse(self) -> None:
        """Refuse, before anything is built, what this machine cannot serve (nothing here)."""

    def _build(self, net: Mininet) -> None:
        raise NotImplementedError

    def _stop_between(self) -> None:
        """What the network put between the hosts besides the link (nothing here)."""

    def describe(self) -> dict[str, Any]:
        return {}

    # ------------------------------------------------------------------ building blocks

    def add_host(self, net: Mininet, name: str, **params: Any) -> Host:
        """A guarded host in `net`, its PID recorded once it exists (after `net.build()`:
        `record_hosts`)."""
        return net.addHost(name, cls=GuardedHost, **params)

    def add_node(self, name: str) -> Node:
        """A guarded namespace of its own outside Mininet's host list (a switch), started
        now and recorded."""
        node = GuardedNode(name, inNamespace=True)
        self._nodes.append(node)
        self.active.add(node.pid, f"mininet:{node.name}")
        return node

    def record_hosts(self, net: Mininet) -> None:
        for host in net.hosts:
            self.active.add(host.pid, f"mininet:{host.name}")

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> Self:
        self._refuse()
        setLogLevel("warning")
        self.net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
        try:
            with start_deadline(self.start_timeout_s, f"{self.what} of {self.prefix}"):
                self._build(self.net)
        except BaseException:
            self._teardown()
            raise
        return self

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
        while self._nodes:
            _despite_dead_shells(self._nodes.pop().terminate)


def _despite_dead_shells(step: Callable[[], None]) -> None:
    try:
        step()
    except NetworkStartError as e:
        log.warning("teardown: %s", e)


class HostPair(GuardedNetwork):
    """A sender and a receiver named by the run's prefix (<prefix>s at SENDER_IP, <prefix>r
    at RECEIVER_IP), with the TraceLink between them (directly or not)."""

    def add_hosts(self, net: Mininet) -> tuple[Host, Host]:
        return (self.add_host(net, f"{self.prefix}s", ip=f"{SENDER_IP}/24"),
                self.add_host(net, f"{self.prefix}r", ip=f"{RECEIVER_IP}/24"))

    @property
    def sender(self) -> Host:
        assert self.net is not None
        return self.net.get(f"{self.prefix}s")

    @property
    def receiver(self) -> Host:
        assert self.net is not None
        return self.net.get(f"{self.prefix}r")
