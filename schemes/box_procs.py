"""The processes of one uid, found by scanning /proc, and ended.

A box's uid is its own (schemes/box_users.py), so every process whose real,
effective, saved or file-system uid is the box's belongs to the box, whatever
namespace or session it moved to.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class BoxProcess:
    pid: int
    command: str

    def describe(self) -> dict[str, object]:
        return {"pid": self.pid, "command": self.command}


def _uids(status: str) -> set[int]:
    for line in status.splitlines():
        if line.startswith("Uid:"):
            return {int(v) for v in line.split()[1:]}
    return set()


def _state(status: str) -> str:
    for line in status.splitlines():
        if line.startswith("State:"):
            return line.split()[1]
    return "?"


def processes_of(uid: int, proc: Path = PROC) -> list[BoxProcess]:
    """Live processes (zombies left out: they have exited) with `uid` among their uids."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            if uid not in _uids(status) or _state(status) in ("Z", "X"):
                continue
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # exited while we looked
        command = raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200]
        found.append(BoxProcess(int(entry.name), command))
    return sorted(found, key=lambda p: p.pid)


def signal_all(uid: int, sig: int, proc: Path = PROC) -> list[BoxProcess]:
    """Send `sig` to every process of `uid`; return those it was sent to."""
    sent = []
    for p in processes_of(uid, proc):
        try:
            os.kill(p.pid, sig)
            sent.append(p)
        except ProcessLookupError:
            pass
    return sent


def kill_all(uid: int, deadline_s: float = 10.0, proc: Path = PROC) -> list[BoxProcess]:
    """SIGKILL every process of `uid` until none is left (a fork bomb keeps forking while we
    look, so repeat); return every one found. Raises if any survives `deadline_s`."""
    killed: dict[int, BoxProcess] = {}
    end = time.monotonic() + deadline_s
    while True:
        left = processes_of(uid, proc)
        if not left:
            return sorted(killed.values(), key=lambda p: p.pid)
        if time.monotonic() > end:
            raise RuntimeError(f"{len(left)} process(es) of uid {uid} survived SIGKILL for "
                               f"{deadline_s:g} s: " + ", ".join(f"{p.pid} {p.command!r}"
                                                                 for p in left[:5]))
        for p in left:
            killed.setdefault(p.pid, p)
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
