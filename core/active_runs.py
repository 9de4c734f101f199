"""A record of the processes each live run owns, so `repro clean` can remove exactly ours.

Every run writes var/active/<prefix>.json with its owner PID and the PIDs it
started (each with a piece of its command line, checked before any kill so a
recycled PID is never touched). A record whose owner is dead is a leftover.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from core.processes import pid_alive, stop_pid
from core.results import write_json

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
    bridges: list[str] = field(default_factory=list)   # Open vSwitch bridges the run made

    @property
    def path(self) -> Path:
        return self.directory / f"{self.prefix}.json"

    def add(self, pid: int, marker: str) -> None:
        self.processes[pid] = marker
        self._save()

    def add_bridge(self, name: str) -> None:
        """An OVS bridge to delete if the run dies (it must carry the run's prefix)."""
        if not name.startswith(self.prefix):
            raise ValueError(f"bridge {name!r} does not carry the run's prefix {self.prefix!r}")
        self.bridges.append(name)
        self._save()

    def _save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json(self.path, {"prefix": self.prefix, "owner": self.owner,
                               "processes": {str(k): v for k, v in self.processes.items()},
                               "bridges": self.bridges})

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def _delete_bridge(name: str) -> bool:
    try:
        done = subprocess.run(["ovs-vsctl", "--timeout=5", "--if-exists", "del-br", name],
                              capture_output=True, timeout=15)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def clean_leftovers(directory: Path,
                    delete_bridge: Callable[[str], bool] = _delete_bridge) -> list[str]:
    """Kill the processes of runs whose owner died, delete their OVS bridges; return what
    was done."""
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
                stop_pid(pid, grace_s=2.0)
                report.append(f"killed leftover {marker!r} (pid {pid}) of run {record['prefix']}")
        for bridge in record.get("bridges", []):
            # Only a name carrying the record's own prefix: the record cannot name another's.
            if str(bridge).startswith(str(record["prefix"])) and delete_bridge(str(bridge)):
                report.append(f"deleted leftover OVS bridge {bridge} of run {record['prefix']}")
        path.unlink(missing_ok=True)
        report.append(f"removed record of dead run {record['prefix']}")
    return report
