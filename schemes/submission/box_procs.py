"""The processes of one uid, found by scanning /proc, and ended.

A box's uid is its own (schemes/submission/box_users.py), so every process whose real,
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


def _field(status: bytes, name: bytes) -> list[bytes]:
    start = status.find(b"\n" + name + b":")
    if start < 0:
        return []
    end = status.find(b"\n", start + 1)
    return status[start + len(name) + 2:end if end > 0 else None].split()


def processes_of(uid: int, proc: Path = PROC) -> list[BoxProcess]:
    """Live processes (zombies left out: they have exited) with `uid` among their uids.
    Reads only each process's status (its first 1 KiB holds State and Uid): a machine runs
    hundreds, and a box looks twice in its life."""
    wanted = str(uid).encode()
    found = []
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/status", "rb") as f:
                status = b"\n" + f.read(1024)
            if wanted not in _field(status, b"Uid") or _field(status, b"State")[:1] in (
                    [b"Z"], [b"X"]):
                continue
            with open(f"{proc}/{name}/cmdline", "rb") as f:
                raw = f.read(400)
        except OSError:
            continue  # exited while we looked
        command = raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200]
        found.append(BoxProcess(int(name), command))
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
