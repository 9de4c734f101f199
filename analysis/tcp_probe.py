"""The kernel's view of one TCP sender, read back: tcp-probe.csv and tcp-cong-state.csv as arrays.

The format and the writer live in core/tcp_probe_format.py (measurement).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.tcp_probe_format import (CONG_STATE_COLUMNS, CONG_STATE_FILE, PROBE_COLUMNS, PROBE_FILE,
                                   CongStateChange, ProbeFormatError)


@dataclass(frozen=True, eq=False)
class ProbeTrace:
    """tcp-probe.csv as arrays (one element per incoming segment at the sender)."""

    time_s: np.ndarray
    snd_cwnd: np.ndarray
    ssthresh: np.ndarray
    srtt_us: np.ndarray
    snd_nxt: np.ndarray
    snd_una: np.ndarray
    snd_wnd: np.ndarray
    ca_state: np.ndarray
    state_changes: tuple[CongStateChange, ...] = ()

    def __len__(self) -> int:
        return int(self.time_s.size)


def read_probe(run_dir: Path) -> ProbeTrace | None:
    """The run's probe trace, or None when the run has no tcp-probe.csv."""
    path = run_dir / PROBE_FILE
    if not path.exists():
        return None
    with open(path, newline="") as f:
        header = f.readline().strip().split(",")
        if tuple(header) != PROBE_COLUMNS:
            raise ProbeFormatError(f"{path}: header {header} is not {list(PROBE_COLUMNS)}")
        body = f.read()
    data: np.ndarray = np.zeros((0, len(PROBE_COLUMNS)))
    if body.strip():
        try:
            data = np.loadtxt(body.splitlines(), delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as e:
            raise ProbeFormatError(f"{path}: {e}") from e
        if data.shape[1] != len(PROBE_COLUMNS):
            raise ProbeFormatError(f"{path}: rows have {data.shape[1]} columns, "
                                   f"expected {len(PROBE_COLUMNS)}")
    columns = {name: data[:, i] for i, name in enumerate(PROBE_COLUMNS)}
    ints = {name: columns[name].astype(np.int64) for name in PROBE_COLUMNS if name != "time_s"}
    return ProbeTrace(time_s=columns["time_s"], state_changes=tuple(_read_states(run_dir)),
                      **ints)


def _read_states(run_dir: Path) -> list[CongStateChange]:
    path = run_dir / CONG_STATE_FILE
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or tuple(rows[0]) != CONG_STATE_COLUMNS:
        raise ProbeFormatError(f"{path}: header is not {list(CONG_STATE_COLUMNS)}")
    try:
        return [CongStateChange(float(t), int(s)) for t, s in rows[1:]]
    except ValueError as e:
        raise ProbeFormatError(f"{path}: {e}") from e
