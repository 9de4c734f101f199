"""TraceLink's checks that need no Mininet: its option error, the per-host delays and random
loss.

A TraceLink may give each far host a fixed delay of its own (several senders with
different round-trip times sharing one bottleneck, the kernel having no netem):

    TraceLink(..., data_delays_ms={"10.0.0.1": 40, "10.0.0.2": 53},
              ack_delays_ms={"10.0.0.1": 40, "10.0.0.2": 53})

The data direction (node1 to node2) picks the delay by a packet's IPv4 source, the
ack direction by its IPv4 destination, so both maps name the hosts on node1's side;
other packets get delay_ms.

Random loss (`data_loss=0.01`, `ack_loss=`, fractions in [0, 1); `loss_seed=`) takes each
packet leaving a direction's queue with that probability, as mahimahi's mm-loss does outside
mm-link, from a generator seeded by loss_seed (each direction its own stream): the queue and
its log still show every packet the link served, and the lost ones are logged there.

Kept apart from trace_link so that the checks and the flags they become can be tested
without Mininet.
"""
from __future__ import annotations

import ipaddress
from typing import Mapping

from core.errors import UsageError

# netrepro-link's own bounds (native/link/peer_delays.hh).
MAX_PEER_DELAYS = 256
MAX_DELAY_MS = 999_999_999
MAX_LOSS_SEED = 2**64 - 1  # --loss-seed (native/link/options.cc)


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


def check_loss(word: str, value: object) -> float | None:
    """A loss probability as TraceLink takes it (a fraction, 0 <= p < 1; None: no loss
    asked for). Raises TraceLinkOptionError naming the word and the value."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value < 1:
        raise TraceLinkOptionError(f"TraceLink: {word}={value!r} must be a loss probability "
                                   "in [0, 1), e.g. 0.01 for 1%")
    return float(value)


def check_loss_seed(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LOSS_SEED:
        raise TraceLinkOptionError(f"TraceLink: loss_seed={value!r} must be a whole number in "
                                   f"0..{MAX_LOSS_SEED}")
    return value


def loss_args(data: float | None, ack: float | None, seed: int) -> list[str]:
    """netrepro-link's flags for checked losses: the data direction is a2b, the ack one b2a;
    nothing when neither is asked for."""
    args: list[str] = []
    for flag, p in (("--a2b-loss", data), ("--b2a-loss", ack)):
        if p is not None:
            args += [flag, repr(p)]
    if args:
        args += ["--loss-seed", str(seed)]
    return args


def check_rate_steps(direction: str, steps: object, span_ms: int | None) -> None:
    """A fixed rate's steps as LinkSide holds them (((ms after the start, Mbit/s), ...)),
    checked as netrepro-link checks them: whole ms above 0, increasing, before the end of
    service (`span_ms`), rates above 0. Raises TraceLinkOptionError naming the step."""
    if not isinstance(steps, tuple):
        raise TraceLinkOptionError(f"TraceLink: the {direction} direction's rate_steps must "
                                   "be a tuple of (ms, Mbit/s) pairs")
    last = 0
    for step in steps:
        ok = isinstance(step, tuple) and len(step) == 2
        at_ms, rate = step if ok else (None, None)
        if not ok or isinstance(at_ms, bool) or not isinstance(at_ms, int) \
                or isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise TraceLinkOptionError(f"TraceLink: {direction} rate step {step!r} is not "
                                       "(whole ms, Mbit/s)")
        if not rate > 0:
            raise TraceLinkOptionError(f"TraceLink: {direction} rate step {step!r}: the rate "
                                       "must be above 0 Mbit/s")
        if not last < at_ms <= MAX_DELAY_MS:
            raise TraceLinkOptionError(f"TraceLink: {direction} rate step {step!r}: times are "
                                       "whole ms after the start, above 0 and increasing")
        if span_ms is not None and at_ms >= span_ms:
            raise TraceLinkOptionError(f"TraceLink: {direction} rate step {step!r} is at or "
                                       f"after the end of service ({span_ms} ms)")
        last = at_ms
