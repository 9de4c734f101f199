"""DCTCP's alpha during a run, sampled into the run folder as dctcp-alpha.csv.

One sampler, two sources, and the file says which one it read:

- netrepro's bpf_dctcp (native/bpf/dctcp.bpf.c) cannot report through get_info, so it
  publishes each socket's state in its map `dctcp_alpha`, keyed by the socket's network
  namespace (inode) and addresses. `BpfMapAlphaSource` reads the sending socket's entry
  with the bpf() system call (kernel/bpf_map.py).
- the kernel's dctcp reports alpha to `ss -ti` as
  `dctcp:(ce_state:S,alpha:A,ab_ecn:E,ab_tot:T)`; `SsAlphaSource` reads the data
  connection's line in the sender's namespace.

Times are CLOCK_MONOTONIC seconds, like data.log and tcp-probe.csv. Alpha is a fraction
(the kernel's 1/1024 units divided by 1024).
"""
from __future__ import annotations

import csv
import logging
import os
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from core.ss_output import detail_lines
from kernel.bpf_map import BpfMap, BpfMapError, MapInfo, find_maps

log = logging.getLogger(__name__)

ALPHA_FILE = "dctcp-alpha.csv"
ALPHA_COLUMNS = ("time_s", "alpha", "updates", "delivered", "delivered_ce", "reductions",
                 "losses", "last_update_s")
ALPHA_UNITS = 1024
MAP_NAME = "dctcp_alpha"
SOURCE_MAP = f"bpf map {MAP_NAME} (netrepro's bpf_dctcp)"
SOURCE_SS = "ss -tino dctcp:(...) (the kernel's dctcp)"

# struct dctcp_key and struct dctcp_export of native/bpf/dctcp.bpf.c (host byte order
# except the addresses, which are in network order).
KEY = struct.Struct("=I4s4sHH")
EXPORT_FIELDS = ("init_ns", "update_ns", "release_ns", "alpha", "updates", "window_delivered",
                 "window_delivered_ce", "delivered", "delivered_ce", "reductions",
                 "last_reduction_cwnd", "last_reduction_alpha", "last_reduction_ssthresh",
                 "ce_state", "ce_changes", "delayed_acks_sent", "losses")
EXPORT = struct.Struct("=QQQ14I")


@dataclass(frozen=True)
class AlphaReading:
    """One look at the sending socket. None: the source does not report that field."""

    time_s: float
    alpha: float
    updates: int | None = None
    delivered: int | None = None
    delivered_ce: int | None = None
    reductions: int | None = None
    losses: int | None = None
    last_update_s: float | None = None

    def row(self) -> list[str]:
        return ["" if v is None else (f"{v:.6f}" if isinstance(v, float) else str(v))
                for v in (self.time_s, self.alpha, self.updates, self.delivered,
                          self.delivered_ce, self.reductions, self.losses, self.last_update_s)]


class AlphaSource(Protocol):
    name: str
    period_s: float

    def read(self) -> AlphaReading | None:
        """The socket's state now; None while the socket is not there (yet)."""

    def final(self) -> dict[str, Any]:
        """What the source knows at the end beyond alpha (counters of both ends)."""


# ------------------------------------------------------------------ bpf_dctcp's map

@dataclass(frozen=True)
class SocketKey:
    """A socket as bpf_dctcp keys it: its namespace and its four addresses."""

    netns: int
    local_ip: str
    remote_ip: str
    local_port: int | None  # None: any port (the newest such socket is read)
    remote_port: int | None

    @property
    def exact(self) -> bool:
        return self.local_port is not None and self.remote_port is not None

    def pack(self) -> bytes:
        assert self.local_port is not None and self.remote_port is not None
        return KEY.pack(self.netns, socket.inet_aton(self.local_ip),
                        socket.inet_aton(self.remote_ip), self.local_port, self.remote_port)

    def matches(self, raw: bytes) -> bool:
        netns, local, remote, lport, rport = KEY.unpack(raw)
        return (netns == self.netns and local == socket.inet_aton(self.local_ip)
                and remote == socket.inet_aton(self.remote_ip)
                and self.local_port in (None, lport) and self.remote_port in (None, rport))


def unpack_export(raw: bytes) -> dict[str, int]:
    return dict(zip(EXPORT_FIELDS, EXPORT.unpack(raw[:EXPORT.size])))


def netns_inode(pid: int) -> int:
    """The inode of a process's network namespace: what bpf_dctcp keys sockets by."""
    return os.stat(f"/proc/{pid}/ns/net").st_ino


class BpfMapAlphaSource:
    """The sending socket's entry in bpf_dctcp's map, and the receiving socket's at the end.

    Every map named dctcp_alpha is searched (an unregistered registration's map can linger
    while old sockets hold it); of the entries for the socket, only those created since
    `since_ns` count, the newest first."""

    name = SOURCE_MAP

    def __init__(self, sender: SocketKey, receiver: SocketKey | None, since_ns: int,
                 period_s: float = 0.05,
                 maps: Callable[[], list[MapInfo]] = lambda: find_maps(MAP_NAME),
                 opener: Callable[[MapInfo], BpfMap] = BpfMap) -> None:
        self.sender = sender
        self.receiver = receiver
        self.since_ns = since_ns
        self.period_s = period_s
        self._maps = maps
        self._opener = opener
        self._open: list[BpfMap] = []

    def read(self) -> AlphaReading | None:
        entry = self._entry(self.sender)
        if entry is None:
            return None
        return AlphaReading(time.monotonic(), entry["alpha"] / ALPHA_UNITS, entry["updates"],
                            entry["delivered"], entry["delivered_ce"], entry["reductions"],
                            entry["losses"], entry["update_ns"] / 1e9 if entry["update_ns"]
                            else None)

    def final(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sender_entry": self._entry(self.sender)}
        if self.receiver is not None:
            out["receiver_entry"] = self._entry(self.receiver)
        self.close()
        return out

    def close(self) -> None:
        for opened in self._open:
            opened.close()
        self._open = []

    def _entry(self, key: SocketKey) -> dict[str, int] | None:
        if not self._open:
            self._open_maps()
        best: dict[str, int] | None = None
        for opened in self._open:
            try:
                found = self._entries(opened, key)
            except BpfMapError as e:
                log.debug("%s", e)
                continue
            for entry in found:
                if entry["init_ns"] >= self.since_ns and \
                        (best is None or entry["init_ns"] > best["init_ns"]):
                    best = entry
        return best

    @staticmethod
    def _entries(opened: BpfMap, key: SocketKey) -> list[dict[str, int]]:
        if key.exact:
            raw = opened.lookup(key.pack())
            return [] if raw is None else [unpack_export(raw)]
        found = []
        for raw_key in opened.keys():
            if key.matches(raw_key):
                raw = opened.lookup(raw_key)
                if raw is not None:
                    found.append(unpack_export(raw))
        return found

    def _open_maps(self) -> None:
        for info in self._maps():
            if (info.key_size, info.value_size) != (KEY.size, _padded(EXPORT.size)):
                raise BpfMapError(
                    f"map {info.name} (id {info.map_id}) has keys of {info.key_size} and "
                    f"values of {info.value_size} bytes, this reader expects {KEY.size} and "
                    f"{_padded(EXPORT.size)}: it was built from another dctcp.bpf.c")
            try:
                self._open.append(self._opener(info))
            except BpfMapError as e:
                log.debug("%s", e)  # gone since it was listed


def _padded(size: int) -> int:
    return (size + 7) // 8 * 8


# ------------------------------------------------------------ the kernel's dctcp

_DCTCP_INFO = re.compile(r"dctcp:\(ce_state:(\d+),alpha:(\d+),ab_ecn:(\d+),ab_tot:(\d+)\)")
_FIELD = re.compile(r"\b(delivered|delivered_ce):(\d+)")


def parse_ss_dctcp(text: str, local_port: int | None) -> dict[str, int] | None:
    """The dctcp:(...) of the connection from `local_port` (else the first that has one) in
    `ss -tin` output, with its delivered and delivered_ce counters where ss prints them."""
    for port, _peer, line in detail_lines(text):
        if local_port is not None and port != local_port:
            continue
        found = _DCTCP_INFO.search(line)
        if found is None:
            continue
        info = dict(zip(("ce_state", "alpha", "ab_ecn", "ab_tot"), map(int, found.groups())))
        info.update({k: int(v) for k, v in _FIELD.findall(line)})
        return info
    return None


class SsAlphaSource:
    """`ss -tin` in the sender's namespace: the kernel's dctcp reports alpha there."""

    name = SOURCE_SS

    def __init__(self, run_ss: Callable[[], str], local_port: int | None,
                 period_s: float = 0.2) -> None:
        self._run_ss = run_ss
        self.local_port = local_port
        self.period_s = period_s
        self._last: dict[str, int] | None = None

    def read(self) -> AlphaReading | None:
        info = parse_ss_dctcp(self._run_ss(), self.local_port)
        if info is None:
            return None
        self._last = info
        return AlphaReading(time.monotonic(), info["alpha"] / ALPHA_UNITS,
                            delivered=info.get("delivered"),
                            delivered_ce=info.get("delivered_ce"))

    def final(self) -> dict[str, Any]:
        return {"sender_ss_dctcp": self._last}


# ---------------------------------------------------------------------- the sampler

class DctcpAlphaSampler:
    """Samples a source every `source.period_s` from start() to stop() into ALPHA_FILE."""

    def __init__(self, source: AlphaSource, out_dir: Path) -> None:
        self.source = source
        self.path = out_dir / ALPHA_FILE
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._samples = 0
        self._alphas: list[float] = []
        self._last: AlphaReading | None = None
        self._error: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="dctcp-alpha", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> dict[str, Any]:
        """End sampling (within `timeout_s`) and say what was recorded."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
            if self._thread.is_alive():
                self._error = f"the sampler did not stop within {timeout_s:g} s"
        facts: dict[str, Any] = {"source": self.source.name, "file": ALPHA_FILE,
                                 "period_s": self.source.period_s, "samples": self._samples}
        try:
            facts.update(self.source.final())
        except (BpfMapError, OSError) as e:
            facts["final_error"] = str(e)
        if self._error is not None:
            facts.update(status="failed", reason=self._error)
        elif self._samples == 0:
            facts.update(status="no samples",
                         reason=f"{self.source.name} never showed the sending socket")
        else:
            facts["status"] = "recorded"
        if self._alphas:
            facts.update(alpha_last=self._alphas[-1],
                         alpha_mean=sum(self._alphas) / len(self._alphas))
        return facts

    def _loop(self) -> None:
        with open(self.path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(ALPHA_COLUMNS)
            while not self._stop.is_set():
                try:
                    reading = self.source.read()
                except (BpfMapError, OSError) as e:
                    self._error = f"reading {self.source.name} failed: {e}"
                    log.warning("%s", self._error)
                    return
                if reading is not None:
                    writer.writerow(reading.row())
                    f.flush()
                    self._samples += 1
                    self._alphas.append(reading.alpha)
                    self._last = reading
                self._stop.wait(self.source.period_s)
