"""TraceLink's checks that need no Mininet: its option error and the per-host delays.

A TraceLink may give each far host a fixed delay of its own (several senders with
different round-trip times sharing one bottleneck, the kernel having no netem):

    TraceLink(..., data_delays_ms={"10.0.0.1": 40, "10.0.0.2": 53},
              ack_delays_ms={"10.0.0.1": 40, "10.0.0.2": 53})

The data direction (node1 to node2) picks the delay by a packet's IPv4 source, the
ack direction by its IPv4 destination, so both maps name the hosts on node1's side;
other packets get delay_ms. Kept apart from trace_link so that the checks and the
flags they become can be tested without Mininet.
"""
from __future__ import annotations

import ipaddress
from typing import Mapping

from core.errors import UsageError

# netrepro-link's own bounds (native/link/peer_delays.hh).
MAX_PEER_DELAYS = 256
MAX_DELAY_MS = 999_999_999


class TraceLinkOptionError(UsageError):
    """A keyword TraceLink does not honour, or two that contradict each other."""


def check_peer_delays(word: str, value: object) -> dict[str, int]:
    """A per-host delay map as TraceLink takes it ({IPv4 address: whole ms}), checked as
    netrepro-link checks it; None is no map. Raises TraceLinkOptionError naming the value."""
    if value is None:
        return {}
    example = f"e.g. {word}={{'10.0.0.2': 40}}"
    if not isinstance(value, Mapping):
        raise TraceLinkOptionError(f"TraceLink: {word}={value!r} must map IPv4 addresses to "
                                   f"whole milliseconds, {example}")
    if len(value) > MAX_PEER_DELAYS:
        raise TraceLinkOptionError(f"TraceLink: {word} lists {len(value)} addresses; the "
                                   f"emulator takes at most {MAX_PEER_DELAYS}")
    checked: dict[str, int] = {}
    for address, ms in value.items():
        if not isinstance(address, str) or not _is_dotted_quad(address):
            raise TraceLinkOptionError(f"TraceLink: {word}: {address!r} is not an IPv4 address "
                                       f"written as a dotted quad, {example}")
        if isinstance(ms, bool) or not isinstance(ms, int) or not 0 <= ms <= MAX_DELAY_MS:
            raise TraceLinkOptionError(f"TraceLink: {word}: the delay of {address} ({ms!r}) "
                                       f"must be a whole number of ms in 0..{MAX_DELAY_MS}")
        checked[address] = ms
    return checked


def _is_dotted_quad(text: str) -> bool:
    """Four decimal octets as `ip` prints them (no leading zeros, no spaces)."""
    try:
        return str(ipaddress.IPv4Address(text)) == text
    except ValueError:
        return False


def peer_delay_args(data: Mapping[str, int], ack: Mapping[str, int]) -> list[str]:
    """netrepro-link's flags for checked maps: the data direction (a2b) by source, the ack
    direction (b2a) by destination; nothing for an empty map."""
    args: list[str] = []
    for flag, delays in (("--a2b-delay-by-src", data), ("--b2a-delay-by-dst", ack)):
        if delays:
            args += [flag, ",".join(f"{address}={ms}" for address, ms in delays.items())]
    return args
