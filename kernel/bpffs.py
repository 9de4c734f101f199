"""bpffs inside a Mininet host, where tc pins the maps of the eBPF programs it attaches.

A host's mount namespace is a copy of the machine's with /sys mounted again. A bpffs
mounted on the machine (systemd does it at boot; `tc -n` does it on first use) is listed
there but cannot be written through: tc's `mkdir /sys/fs/bpf/tc` fails with ENOENT. A
bpffs mounted inside the host's own namespace works, and goes away with the host.
"""
from __future__ import annotations

from typing import Any

from core.errors import Unavailable

BPFFS = "/sys/fs/bpf"


def mount_private_bpffs(host: Any) -> None:
    """Mount a bpffs of the host's own over /sys/fs/bpf, in the host's mount namespace only."""
    out = host.cmd("mount", "-t", "bpf", "bpf", BPFFS, "&&", "echo", "mounted")
    if "mounted" not in out.split():
        raise Unavailable(f"{host.name}: cannot mount a bpffs at {BPFFS} in the host's mount "
                          f"namespace, where tc pins its eBPF programs' maps: {out.strip()}")
