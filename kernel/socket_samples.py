"""The kernel's record of a run's TCP sockets every N ms: the run option, its file, its process.

A RunSpec option `socket_sample_ms` (part of the run's id) asks a TCP run to sample its
sender's sockets to the receiver every N ms, from before the connection opens to the end:
kernel/socket_sampler.py runs in the sender's namespace and writes socket-samples.csv into
the flow's folder (each socket's state, struct tcp_info and, for BBR, its bandwidth filter,
min RTT and gains: what `ss -tin` prints). analysis/socket_samples.py reads it. Off unless
asked for: a sample costs the sender's namespace one sock_diag dump.
"""
from __future__ import annotations

import logging
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from core.paths import REPO_ROOT
from core.processes import stop_child
from kernel import socket_sampler

log = logging.getLogger(__name__)

OPTION = "socket_sample_ms"
FILE = "socket-samples.csv"
COLUMNS = socket_sampler.COLUMNS
PYTHON = "/usr/bin/python3"
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 5, 1000
READY_TIMEOUT_S = 10.0
STOP_GRACE_S = 5.0
# The sampler stops by itself this long after the run should have ended.
SAFETY_MARGIN_S = 60.0


class SocketSamplerError(RuntimeError):
    """The sampler would not start (the message names its output)."""


def check_interval(value: object) -> int:
    """The option's value, checked (ValueError naming the range)."""
    if isinstance(value, bool) or not isinstance(value, int) or \
            not MIN_INTERVAL_MS <= value <= MAX_INTERVAL_MS:
        raise ValueError(f"{OPTION}={value!r}: a whole number of ms in "
                         f"{MIN_INTERVAL_MS}..{MAX_INTERVAL_MS}")
    return value


class SocketSampler:
    """kernel/socket_sampler.py in a host's namespace, for one run."""

    def __init__(self, host: Any, receiver_ip: str, out_dir: Path, interval_ms: int,
                 for_s: float, on_process: Callable[[int, str], None]) -> None:
        self.host = host
        self.receiver_ip = receiver_ip
        self.path = Path(out_dir) / FILE
        self.interval_ms = check_interval(interval_ms)
        self.for_s = for_s + SAFETY_MARGIN_S
        self.on_process = on_process
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start sampling, and return once the file has its header (the first sample is
        taken then)."""
        err = open(self.path.with_suffix(".stderr"), "wb")
        proc: subprocess.Popen[bytes] = self.host.popen(
            [PYTHON, "-m", socket_sampler.__name__, "--dst", self.receiver_ip,
             "--interval-ms", str(self.interval_ms), "--out", str(self.path),
             "--for-s", f"{self.for_s:g}"],
            stdout=err, stderr=err, cwd=str(REPO_ROOT))
        err.close()
        self.proc = proc
        self.on_process(proc.pid, "socket_sampler")
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not (self.path.is_file() and self.path.stat().st_size > 0):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SocketSamplerError(f"the socket sampler did not start: {self._tail()}")
            time.sleep(0.02)

    def stop(self) -> dict[str, Any]:
        """Stop it (it flushes its file); what meta.json records of it."""
        if self.proc is None:
            return {"status": "not started"}
        code = stop_child(self.proc, grace_s=STOP_GRACE_S)
        self.proc = None
        return {"status": "recorded" if code == 0 else f"exited with status {code}",
                "file": FILE, "interval_ms": self.interval_ms, "source": "sock_diag "
                "(INET_DIAG_INFO, INET_DIAG_CONG, INET_DIAG_BBRINFO), as ss -tin reads it",
                "log": self._tail()}

    def _tail(self) -> str:
        try:
            return self.path.with_suffix(".stderr").read_text(errors="replace").strip()[-300:]
        except OSError:
            return "(no output)"
