"""Read socket-samples.csv (kernel/socket_sampler.py): the kernel's record of a sender's
sockets every N ms, and BBR's state in it.

Each connection's samples come back as arrays, times CLOCK_MONOTONIC seconds like the
emulator's logs. BBR v1 (Linux's tcp_bbr.c) reports its pacing and cwnd gains, fixed point
with 1.0 = 256, and its mode is a function of the two (the mode itself is not exported):

    STARTUP    pacing 739 (2/ln 2 = 2.885)   cwnd 739
    DRAIN      pacing 88 (1/2.885)           cwnd 739
    PROBE_BW   pacing 320, 192 or 256        cwnd 512 (2)   the gain cycle 5/4, 3/4, 1 x 6
    PROBE_RTT  pacing 256                    cwnd 256 (1)

so `bbr_mode` reads the mode the kernel was in at each sample from the kernel's own numbers.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernel.socket_samples import COLUMNS, FILE

STARTUP, DRAIN, PROBE_BW, PROBE_RTT, UNKNOWN = "startup", "drain", "probe_bw", "probe_rtt", ""
BBR_UNIT = 256
HIGH_GAIN = 739  # bbr_high_gain: BBR_UNIT * 2885 / 1000 + 1
DRAIN_GAIN = 88  # bbr_drain_gain: BBR_UNIT * 1000 / 2885
CWND_GAIN = 2 * BBR_UNIT
_NUMERIC = [c for c in COLUMNS if c not in ("state", "cc")]


class SocketSamplesError(ValueError):
    """A file that is not the sampler's; the message names it."""


@dataclass(frozen=True, eq=False)
class Connection:
    """One connection's samples (one entry per sample, NaN where the kernel gave nothing)."""

    local_port: int
    remote_port: int
    cc: str
    state: np.ndarray  # str
    columns: dict[str, np.ndarray]  # every numeric column of COLUMNS

    def __getitem__(self, column: str) -> np.ndarray:
        return self.columns[column]

    @property
    def time_s(self) -> np.ndarray:
        return self.columns["time_s"]

    def __len__(self) -> int:
        return int(self.time_s.size)

    def established(self) -> np.ndarray:
        return self.state == "ESTAB"


def read_samples(path: Path) -> dict[tuple[int, int], Connection]:
    """Every connection in the file, by (local port, remote port)."""
    rows: dict[tuple[int, int], list[dict[str, str]]] = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or list(reader.fieldnames) != list(COLUMNS):
            raise SocketSamplesError(f"{path}: not a socket-samples file (its header is "
                                     f"{reader.fieldnames})")
        for row in reader:
            if None in row.values():
                continue  # a last line cut short by a kill
            rows.setdefault((int(row["local_port"]), int(row["remote_port"])), []).append(row)
    return {key: _connection(key, found) for key, found in rows.items()}


def _connection(key: tuple[int, int], rows: list[dict[str, str]]) -> Connection:
    columns = {c: np.array([float(r[c]) if r[c] != "" else np.nan for r in rows])
               for c in _NUMERIC}
    ccs = [r["cc"] for r in rows if r["cc"]]
    return Connection(local_port=key[0], remote_port=key[1], cc=ccs[-1] if ccs else "",
                      state=np.array([r["state"] for r in rows]), columns=columns)


def data_connection(run_dir: Path, port: int | None) -> Connection | None:
    """The data connection's samples in `run_dir` (a flow's folder): the one from `port`,
    else the one that acknowledged the most bytes (iperf3's control connection carries
    little); None without samples."""
    path = Path(run_dir) / FILE
    if not path.is_file():
        return None
    found = read_samples(path)
    if port is not None:
        return next((c for (local, _), c in found.items() if local == port), None)
    if not found:
        return None
    return max(found.values(), key=lambda c: float(np.nanmax(c["bytes_acked"]))
               if np.isfinite(c["bytes_acked"]).any() else -1.0)


def bbr_mode(pacing_gain: np.ndarray, cwnd_gain: np.ndarray) -> np.ndarray:
    """BBR v1's mode at each sample from its two gains (module docstring); "" where the
    gains are missing or match no mode."""
    mode = np.full(pacing_gain.shape, UNKNOWN, dtype=object)
    mode[(pacing_gain == HIGH_GAIN) & (cwnd_gain == HIGH_GAIN)] = STARTUP
    mode[(pacing_gain == DRAIN_GAIN) & (cwnd_gain == HIGH_GAIN)] = DRAIN
    mode[np.isin(pacing_gain, (320, 192, 256)) & (cwnd_gain == CWND_GAIN)] = PROBE_BW
    mode[(pacing_gain == BBR_UNIT) & (cwnd_gain == BBR_UNIT)] = PROBE_RTT
    return mode


def window_limits(c: Connection) -> dict[str, float] | None:
    """The share (%) of the connection's busy time its receiver's window and its send buffer
    limited it, from its last sample (the kernel's counters run from the connection's
    start); None before it was busy."""
    busy = c["busy_us"]
    known = np.nonzero(np.isfinite(busy) & (busy > 0))[0]
    if known.size == 0:
        return None
    last = known[-1]
    return {"rwnd_pct": 100.0 * float(c["rwnd_limited_us"][last]) / float(busy[last]),
            "sndbuf_pct": 100.0 * float(c["sndbuf_limited_us"][last]) / float(busy[last]),
            "busy_ms": float(busy[last]) / 1000.0}
