"""What a trial's box may send: a token bucket on its Mininet host's interface, before the
emulated link.

A box's sender shares the network namespace of the run's sender host, whose interface has
no queue of its own: without one, a box can hand the kernel frames as fast as it can make
them (650,000 a second from two processes, measured), and the kernel then spends the time
of those frames outside the box's CPU quota (the link's softirqs, the emulator's socket
dropping them). So the interface gets a token bucket (`tbf`):

- a rate of 200 Mbit/s and a bucket of 16 MiB, over what the window cap can put in flight
  (10,000 datagrams of 1,504 bytes: 14.3 MiB). A sender that keeps its window has sent at
  most what the link carried plus that window, so it is never held while its link carries
  under 200 Mbit/s: the fastest 100-ms stretch of any bundled trace carries 89 Mbit/s
  (TMobile-LTE-driving), the fastest fixed rate the emulator runs in real time is 100
  Mbit/s. Rate and bucket are also what a flood costs the machine outside the box: each
  frame let through costs a softirq on the link's path. With 1 Gbit/s and 64 MiB, a box
  flooding at its full CPU (two processes) kept a third of a 2-core machine in softirqs and
  its honest neighbour's end hosts late (reaction p99 1.8 to 2.3 ms, against 0.35 to 0.9
  ms beside an honest neighbour); with 200 Mbit/s, 9% in softirqs, and 1.0 to 1.1 ms with
  the 64-MiB bucket (whose first burst the flood has too), 0.47 to 0.96 ms with 16 MiB;
- a queue of 1 MiB behind it: a sender beyond the rate waits on its own socket's buffer,
  in its own box, as on a full link.

The box (no capabilities) cannot change it. `tc` is run in the host's namespace with a
deadline, and what it set is read back.
"""
from __future__ import annotations

import subprocess
from typing import Any

from schemes.base import SchemeUnavailable
from schemes.submission.limits import WINDOW_CAP_DATAGRAMS

RATE_MBPS = 200
RATE = f"{RATE_MBPS}mbit"
RATE_SHOWN = f"rate {RATE_MBPS}Mbit"  # as `tc qdisc show` prints it
BURST_BYTES = 16 << 20
assert BURST_BYTES > WINDOW_CAP_DATAGRAMS * 1504  # the window a sender may keep in flight
BACKLOG_BYTES = 1 << 20
TC_TIMEOUT_S = 10.0
PATH = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}


def _tc(pid: int, *args: str) -> str:
    argv = ["nsenter", f"--target={pid}", "--net", "--", "tc", *args]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TC_TIMEOUT_S,
                              env=PATH)
    except subprocess.TimeoutExpired:
        raise SchemeUnavailable(f"`tc {' '.join(args)}` in the sender's host did not finish "
                                f"within {TC_TIMEOUT_S:g} s") from None
    except OSError as e:
        raise SchemeUnavailable(f"cannot run tc (iproute2) in the sender's host: {e}") from None
    if done.returncode != 0:
        raise SchemeUnavailable(f"`tc {' '.join(args)}` in the sender's host failed: "
                                f"{done.stderr.strip() or done.returncode}")
    return done.stdout


def limit_egress(host: Any) -> dict[str, str]:
    """Put the token bucket on `host`'s interface; what it set, for the box's record."""
    pid = getattr(host, "pid", None)
    intf = host.defaultIntf() if hasattr(host, "defaultIntf") else None
    if not isinstance(pid, int) or intf is None:
        raise SchemeUnavailable(f"host {getattr(host, 'name', host)} has no process or "
                                "interface to limit what its box sends")
    _tc(pid, "qdisc", "replace", "dev", intf.name, "root", "tbf", "rate", RATE,
        "burst", str(BURST_BYTES), "limit", str(BACKLOG_BYTES))
    shown = _tc(pid, "qdisc", "show", "dev", intf.name).strip()
    if not shown.startswith("qdisc tbf") or RATE_SHOWN not in shown:
        raise SchemeUnavailable(f"the sender's host kept no token bucket on {intf.name}: "
                                f"tc shows {shown!r}")
    return {"interface": intf.name, "qdisc": shown.splitlines()[0]}
