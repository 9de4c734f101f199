"""Find a running `./repro one` in var/active, for tests that break a run on purpose."""
from __future__ import annotations

import json
import time

from core.paths import REPO_ROOT


def wait_for_process(owner: int, marker: str, timeout_s: float = 30) -> dict:
    """The record of the run owned by `owner` once it lists a process with this marker."""
    active = REPO_ROOT / "var" / "active"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in active.glob("*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # being written
            if record.get("owner") == owner and marker in record.get("processes", {}).values():
                return record
        time.sleep(0.1)
    raise AssertionError(f"run {owner} never recorded a {marker} process in {active}")


def pid_of(record: dict, marker: str) -> int:
    return next(int(pid) for pid, m in record["processes"].items() if m == marker)
