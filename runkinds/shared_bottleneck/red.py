"""The kernel's RED as the marking queue, where the kernel has it (`--queue red`).

Mininet-HiFi marked with HTB at the link rate feeding RED (limit 1,000,000 B, min 30000,
max 35000, avpkt 1500, burst 20, probability 1, ecn): about K = 20 packets. RED marks on an
average of the queue, not on its instantaneous length (with burst ~ min/avpkt its weight is
large, so it follows the queue closely), marks only ECN-capable packets and drops the others
in the marking region. Here, for a threshold K: min = K x avpkt, max = min + 5000 B (as
Mininet-HiFi's 30000/35000 at K = 20), burst K + 1 (tc refuses burst <= min/avpkt - 1),
probability 1, the port's rate as the bandwidth, and a limit of the buffer's packets in
full frames. HTB counts full 1514-byte frames, so at the same nominal rate it is 0.7% slower
than the emulator behind it (1504 bytes per packet): the queue builds in RED, not in the
emulator.

Not every kernel has RED (CONFIG_NET_SCH_RED): where `tc` does not know the qdisc, the run
fails with `RedUnavailable`, naming the qdisc and the fix. Nothing falls back to the
emulator's marking silently.

RED's queue is read by polling `tc -s -j qdisc show` (as Mininet-HiFi did, every 10 ms) into
red-queue.csv: `time_s` (CLOCK_MONOTONIC) and the qdisc's `qlen` (packets), `backlog`
(bytes), `drops` and `marked` (cumulative).
"""
from __future__ import annotations

import csv
import json
import logging
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import Unavailable
from kernel.htb import htb_rate_steps

log = logging.getLogger(__name__)

FRAME_BYTES = 1514  # a full Ethernet frame, as tc counts it
AVPKT = 1500
MAX_ABOVE_MIN = 5000
RED_HANDLE = "10:"
QUEUE_FILE = "red-queue.csv"
QUEUE_COLUMNS = ("time_s", "qlen", "backlog_bytes", "drops", "marked")
POLL_S = 0.01
COMMAND_TIMEOUT_S = 10.0


class RedUnavailable(Unavailable):
    """This kernel has no RED qdisc (or tc refused it); the message says what and the fix."""


@dataclass(frozen=True)
class RedMarking:
    """RED set to mark above about `k` packets, over a buffer of `packets` packets."""

    k: int
    packets: int

    def qdisc_args(self, rate_mbps: float) -> list[str]:
        low = self.k * AVPKT
        return ["red", "limit", str(self.packets * FRAME_BYTES), "min", str(low),
                "max", str(low + MAX_ABOVE_MIN), "avpkt", str(AVPKT), "burst", str(self.k + 1),
                "bandwidth", f"{rate_mbps:g}mbit", "probability", "1", "ecn"]

    def describe(self, rate_mbps: float) -> str:
        return "tc " + " ".join(self.qdisc_args(rate_mbps))


def _tc(node: Any, args: list[str]) -> tuple[int, str]:
    proc = node.popen(["tc", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return 124, f"tc {' '.join(args)} did not finish within {COMMAND_TIMEOUT_S:g} s"
    return proc.returncode, out.decode(errors="replace").strip()


def install_red(node: Any, dev: str, red: RedMarking, rate_mbps: float) -> dict[str, Any]:
    """HTB at `rate_mbps` feeding RED on `dev` in the node's namespace; the facts for
    meta.json. RedUnavailable when tc does not know RED (or refuses it)."""
    for args in htb_rate_steps(dev, rate_mbps, ["handle", RED_HANDLE,
                                                *red.qdisc_args(rate_mbps)]):
        status, out = _tc(node, args)
        if status != 0:
            qdisc = "RED" if "red" in args else "HTB"
            unknown = "unknown" in out.lower()
            raise RedUnavailable(
                f"--queue red: `tc {' '.join(args)}` failed (exit {status}): {out}. "
                + (f"This kernel has no {qdisc} qdisc (sch_{qdisc.lower()}): use a kernel "
                   f"built with CONFIG_NET_SCH_{qdisc} (or `modprobe sch_{qdisc.lower()}` "
                   "where it is a module), or --queue ecn, netrepro-link's own threshold "
                   "marking" if unknown else
                   "tc refused the settings; the run's K and buffer are in the command"))
    status, shown = _tc(node, ["qdisc", "show", "dev", dev])
    return {"marked_by": "tc red (kernel)", "qdisc": red.describe(rate_mbps),
            "htb_rate_mbit": rate_mbps, "dev": dev, "shown": shown}


def red_counters(text: str) -> dict[str, int] | None:
    """The RED qdisc's qlen, backlog, drops and marks from `tc -s -j qdisc show` output."""
    for qdisc in json.loads(text or "[]"):
        if qdisc.get("kind") == "red":
            xstats = qdisc.get("xstats") or {}
            return {"qlen": int(qdisc.get("qlen", 0)),
                    "backlog_bytes": int(qdisc.get("backlog", 0)),
                    "drops": int(qdisc.get("drops", 0)),
                    "marked": int(xstats.get("marked", qdisc.get("marked", 0)))}
    return None


class RedQueueSampler:
    """Polls RED's queue every POLL_S into QUEUE_FILE until stopped."""

    def __init__(self, node: Any, dev: str, out_dir: Path) -> None:
        self.node = node
        self.dev = dev
        self.path = out_dir / QUEUE_FILE
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.samples = 0
        self.error: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="red-queue", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=COMMAND_TIMEOUT_S * 2)
        return {"file": QUEUE_FILE, "period_s": POLL_S, "samples": self.samples,
                "error": self.error}

    def _loop(self) -> None:
        with open(self.path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(QUEUE_COLUMNS)
            while not self._stop.is_set():
                status, out = _tc(self.node, ["-s", "-j", "qdisc", "show", "dev", self.dev])
                now = time.monotonic()
                try:
                    counters = red_counters(out) if status == 0 else None
                except ValueError as e:
                    counters, self.error = None, f"tc's JSON unreadable: {e}"
                if counters is not None:
                    writer.writerow([f"{now:.6f}", *(counters[c] for c in QUEUE_COLUMNS[1:])])
                    self.samples += 1
                elif status != 0:
                    self.error = out
                self._stop.wait(POLL_S)
