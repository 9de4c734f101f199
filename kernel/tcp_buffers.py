"""The TCP buffer limits a path's hosts run with: the machine's, or a named kernel's defaults.

A network namespace starts with the machine's limits (copied at its creation since Linux
4.15), and over an infinite queue a loss-based flow stops growing only at the receive
window, whose ceiling comes from `tcp_rmem`'s maximum: a machine setting then sets TCP's
standing queue, hence its delay. Machines differ widely (4 MB in Linux 3.2, 6 MB in later
3.x kernels, 32 MB in kernels since 2025, 16 MB on many tuned cloud images), so the Sprout
experiments pin their hosts to the defaults of the kernel the paper measured (Linux 3.2.0).

The profile is a RunSpec option (`tcp_buffers`), so it is part of the run's id.
"""
from __future__ import annotations

import shlex
from typing import Any, Mapping

OPTION = "tcp_buffers"
MACHINE = "machine"
LINUX_3_2 = "linux-3.2"

# Linux 3.2's tcp_init() on a machine with enough memory: tcp_rmem and tcp_wmem maxima of
# 4 MB, and tcp_adv_win_scale 2 (a quarter of the buffer kept for overhead, so a receive
# window of at most 3 MB). Later 3.x kernels moved to 6 MB and scale 1: the same 3 MB window.
# Kernels from 6.6 ignore tcp_adv_win_scale and derive the window from the measured
# payload-to-buffer ratio; the limits still bound it.
#
# A receiver that starts wide: every socket's receive buffer is 32 MB from the start (tcp_rmem's
# default, not only its maximum), as `iperf3 -w` gives one socket without needing the
# machine-wide net.core.rmem_max. Autotuning grows a buffer from what the application reads
# each round trip; under heavy random loss the holes stop the reads, the buffer stays small
# and the window, not the path, holds the flow back. Measured (BBR, 100 Mbit/s, 100 ms, 20 s):
# window-limited 2.4% and 3.8% of the busy time at 5% and 20% loss with the machine's 16 MB
# maximum, 1.9% and 1.7% starting at 16 MB, 0.0% at 32 MB (docs/bbr.md).
WIDE_START = "wide-start"
PROFILES: dict[str, dict[str, str]] = {
    MACHINE: {},
    LINUX_3_2: {"tcp_rmem": "4096 87380 4194304", "tcp_wmem": "4096 16384 4194304",
                "tcp_adv_win_scale": "2"},
    WIDE_START: {"tcp_rmem": "4096 33554432 33554432"},
}
# How figures and reports state the profile.
PROFILE_TEXT = {MACHINE: "the machine's TCP buffer limits",
                LINUX_3_2: "Linux 3.2's TCP buffer limits (4 MB)",
                WIDE_START: "32 MB receive buffers from the start"}
READ = ("tcp_rmem", "tcp_wmem", "tcp_adv_win_scale")
UNREADABLE = "unreadable"


class TcpBuffersError(RuntimeError):
    """A profile that cannot be set in a host's namespace (the message names the setting)."""


def profile_of(name: str) -> Mapping[str, str]:
    if name not in PROFILES:
        raise TcpBuffersError(f"unknown TCP buffer profile {name!r}: expected one of "
                              + ", ".join(PROFILES))
    return PROFILES[name]


def apply(host: Any, name: str) -> None:
    """Set the profile's limits in the host's namespace and check they took: a value the
    kernel refused would leave the machine's in place, silently."""
    for key, value in profile_of(name).items():
        host.cmd("sysctl -qw " + shlex.quote(f"net.ipv4.{key}={value}"))
        got = _read_one(host, key)
        if got != value:
            raise TcpBuffersError(
                f"{host.name}: net.ipv4.{key} reads {got!r} after setting {value!r} for the "
                f"{name} TCP buffer profile; this kernel does not accept it per namespace "
                f"(run with --tcp-buffers {MACHINE} to use the machine's limits)")


def read(host: Any) -> dict[str, str]:
    """The host's limits as the kernel reports them (min, default, max bytes)."""
    return {key: _read_one(host, key) for key in READ}


def _read_one(host: Any, key: str) -> str:
    words = host.cmd(f"cat /proc/sys/net/ipv4/{key}").split()
    return " ".join(words) if words and all(w.lstrip("-").isdigit() for w in words) else UNREADABLE
