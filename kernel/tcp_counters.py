"""A network namespace's TCP counters (TcpExt and Tcp: timeouts, retransmissions, segments),
read at the end of a run from a host in it: the namespace is the run's own, so they count
the run's connections only."""
from __future__ import annotations

from typing import Any


def read_tcp_counters(host: Any) -> dict[str, int]:
    """The host's namespace's counters as {"TcpExt.TCPTimeouts": n, "Tcp.RetransSegs": n...}
    (`host.cmd` runs a command in it)."""
    return parse_tcp_counters(host.cmd("cat", "/proc/net/netstat", "/proc/net/snmp"))


def parse_tcp_counters(text: str) -> dict[str, int]:
    """/proc/net/netstat and /proc/net/snmp: pairs of a names line and a values line."""
    counters: dict[str, int] = {}
    lines = text.splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        prefix, _, keys = names.partition(":")
        vprefix, _, nums = values.partition(":")
        if prefix != vprefix or prefix not in ("TcpExt", "Tcp"):
            continue
        for key, value in zip(keys.split(), nums.split()):
            try:
                counters[f"{prefix}.{key}"] = int(value)
            except ValueError:
                pass
    return counters
