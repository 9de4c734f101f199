"""The kernel's HTB shaper as tc arguments: one class at a rate on an interface's egress,
feeding the leaf qdisc the caller names (RED for DCTCP's `--queue red`, a pfifo for the
bench's comparison with the emulator)."""
from __future__ import annotations

from typing import Sequence


def htb_rate_steps(dev: str, rate_mbps: float, leaf: Sequence[str],
                   burst_bytes: int | None = None) -> list[list[str]]:
    """tc arguments (without "tc"): HTB at the root of `dev`, class 1:1 at `rate_mbps` (ceil
    the same), then `leaf` ("handle X: <qdisc> ...") under it. `burst_bytes` sets burst and
    cburst; None keeps HTB's default (rate / HZ + MTU, several frames back to back)."""
    rate = f"{rate_mbps:g}mbit"
    burst = ([] if burst_bytes is None
             else ["burst", f"{burst_bytes}b", "cburst", f"{burst_bytes}b"])
    return [["qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1"],
            ["class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
             "rate", rate, "ceil", rate, *burst],
            ["qdisc", "add", "dev", dev, "parent", "1:1", *leaf]]
