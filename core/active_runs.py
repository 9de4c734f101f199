"""A record of the processes each live run owns, so `repro clean` can remove exactly ours.

Every run writes var/active/<prefix>.json with its owner PID and the PIDs it
started (each with a piece of its command line, checked before any kill so a
recycled PID is never touched). A record whose owner is dead is a leftover.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.results import pid_alive, write_json

log = logging.getLogger(__name__)


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return raw.replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class ActiveRun:
    """The live record of one run's processes."""

    directory: Path
    prefix: str
    owner: int = field(default_factory=os.getpid)
    processes: dict[int, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.directory / f"{self.prefix}.json"

    def add(self, pid: int, marker: str) -> None:
        self.processes[pid] = marker
        self._save()

    def _save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json(self.path, {"prefix": self.prefix, "owner": self.owner,
                               "processes": {str(k): v for k, v in self.processes.items()}})

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def clean_leftovers(directory: Path) -> list[str]:
    """Kill the processes of runs whose owner died; return what was done."""
    report: list[str] = []
    if not directory.is_dir():
        return report
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        if pid_alive(int(record["owner"])):
            continue
        for pid_text, marker in record.get("processes", {}).items():
            pid = int(pid_text)
            if pid_alive(pid) and marker in _cmdline(pid):
                _terminate(pid)
                report.append(f"killed leftover {marker!r} (pid {pid}) of run {record['prefix']}")
        path.unlink(missing_ok=True)
        report.append(f"removed record of dead run {record['prefix']}")
    return report


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(20):
            if not pid_alive(pid):
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
