"""Turn segmentation/checksum offloads off on an interface and check they stayed off.

With offloads on, a raw socket sees 64 KB super-frames (GRO/TSO) or frames whose
checksum was never filled in (tx checksumming), and the emulator would then count
or forward the wrong thing.
"""
from __future__ import annotations

from typing import Protocol

# ethtool -K short names and the feature names `ethtool -k` prints for them.
_FEATURES = {
    "tso": "tcp-segmentation-offload",
    "gso": "generic-segmentation-offload",
    "gro": "generic-receive-offload",
    "tx": "tx-checksumming",
    "rx": "rx-checksumming",
}


class OffloadError(RuntimeError):
    pass


class RunsCommands(Protocol):
    def cmd(self, *args: str) -> str: ...


def disable_offloads(node: RunsCommands, intf: str) -> None:
    args = ["ethtool", "-K", intf]
    for short in _FEATURES:
        args += [short, "off"]
    node.cmd(*args)
    shown = node.cmd("ethtool", "-k", intf)
    still_on = [name for name in _FEATURES.values() if f"{name}: on" in shown]
    if "Features for" not in shown:
        raise OffloadError(f"cannot read offloads of {intf}: {shown.strip()!r} "
                           "(is ethtool installed?)")
    if still_on:
        raise OffloadError(f"offloads still on for {intf}: {', '.join(still_on)}")
