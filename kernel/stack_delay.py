"""How late a TCP run's end hosts processed what arrived: the kernel's own record, per host.

A TCP endpoint reacts to an ACK (or answers data) in the kernel, not in its process: the
NET_RX softirq that processes the segment runs TCP's code, which sends what the window now
allows in the same pass. On this path the softirq normally runs at once, inside the
emulator's own send call (the trace shows `netif_rx`, `netif_receive_skb` and the data's
`net_dev_xmit` in the emulator's task within some 40 us). It is late only when the kernel
defers it to `ksoftirqd`, which then waits for a CPU like any other task. So the measure of
a TCP host's lateness is the time from a segment entering the host's stack (`net:netif_rx`,
when the emulator hands it over) to the stack processing it (`net:netif_receive_skb`), per
packet, on each host's interface, with how many of them ran in `ksoftirqd`.

The events come from the run's own tracefs instance (kernel/tcp_probe_recorder.py), filtered
on the two interface names, whose lines this module turns into a histogram as they arrive
(bounded memory: a count per microsecond value). Lines are taken apart with string methods,
not a regular expression: a loaded run brings a few thousand of them a second.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

EVENTS = ("net/netif_rx", "net/netif_receive_skb")
_MARK = ": netif_"
_RX = "rx"
_PROCESSED = "receive_skb"
PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
WHAT = ("a segment entering the host's stack (net:netif_rx) to the stack processing it "
        "(net:netif_receive_skb): the NET_RX softirq TCP reacts in")


def interface_filter(interfaces: Mapping[str, str]) -> str:
    """The tracefs filter that keeps the events of these interfaces only."""
    return " || ".join(f'name == "{name}"' for name in interfaces.values())


def percentiles(counts: Mapping[int, int]) -> dict[str, int]:
    """Nearest-rank p50, p90, p99, max and count of microsecond values given as counts, as
    the native programs' LatencyHistogram reports them (0 for an empty one)."""
    total = sum(counts.values())
    out = {name: 0 for name, _ in PERCENTILES}
    out.update(max=max(counts, default=0), count=total)
    if not total:
        return out
    ranks = [(name, max(1, math.ceil(q * total))) for name, q in PERCENTILES]
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        while ranks and seen >= ranks[0][1]:
            out[ranks.pop(0)[0]] = value
    return out


@dataclass
class _Host:
    interface: str
    delays: Counter[int] = field(default_factory=Counter)
    in_ksoftirqd: int = 0
    pending: dict[str, int] = field(default_factory=dict)  # skbaddr -> netif_rx time, us


class StackDelayMeter:
    """Pairs each interface's netif_rx with the netif_receive_skb of the same buffer."""

    def __init__(self, interfaces: Mapping[str, str]) -> None:
        """`interfaces`: role ("sender", "receiver") -> interface name."""
        self._hosts = {name: _Host(name) for name in interfaces.values()}
        self._roles = dict(interfaces)
        self.unmatched = 0  # processed with no entry on record (it entered before we traced)

    def feed(self, line: str) -> bool:
        """One trace line; False when it is not a netif event of ours (for another reader)."""
        mark = line.find(_MARK)
        if mark < 0:
            return False
        head, rest = line[:mark], line[mark + len(_MARK):]
        kind, _, fields = rest.partition(": ")
        parts = fields.split()
        if len(parts) < 2 or not parts[0].startswith("dev=") or \
                not parts[1].startswith("skbaddr="):
            return False
        host = self._hosts.get(parts[0][4:])
        if host is None:
            return False
        stamp = head[head.rfind(" ") + 1:]
        seconds, _, micros = stamp.partition(".")
        if not (seconds.isdigit() and micros.isdigit() and len(micros) == 6):
            return False
        time_us = int(seconds) * 1_000_000 + int(micros)
        skb = parts[1][8:]
        if kind == _RX:
            host.pending[skb] = time_us
        elif kind == _PROCESSED:
            entered = host.pending.pop(skb, None)
            if entered is None:
                self.unmatched += 1
            else:
                host.delays[max(0, time_us - entered)] += 1
                if "ksoftirqd/" in head:
                    host.in_ksoftirqd += 1
        else:
            return False
        return True

    def facts(self) -> dict[str, Any]:
        """Per role: the interface, the delay's percentiles (us) and the ksoftirqd count."""
        out: dict[str, Any] = {"what": WHAT, "unmatched": self.unmatched}
        for role, name in self._roles.items():
            host = self._hosts[name]
            out[role] = {"interface": name, "stack_delay_us": percentiles(host.delays),
                         "in_ksoftirqd": host.in_ksoftirqd}
        return out
