"""Processes: whether one runs, what /proc says of it, and how to stop one.

One helper each, used by every part that starts programs (schemes, the link
emulator, captures, controllers, the cleanup of killed runs), so "stop" means
the same everywhere: a polite signal, a bounded wait, then SIGKILL and a
bounded wait for the exit.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

# After SIGKILL the exit is asynchronous; a process in uninterruptible sleep can take a while.
KILL_WAIT_S = 5.0


@dataclass(frozen=True)
class ProcessState:
    """The fields of /proc/<pid>/stat the project reads."""

    state: str  # R, S, D, Z, X, ...
    start_time: str  # clock ticks after boot: with the pid, names one process for ever


def process_state(pid: int) -> ProcessState | None:
    """What /proc says of `pid`, or None when it is gone (or unreadable)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name in parentheses may hold spaces or ')': fields resume after the last ')'.
    fields = stat[stat.rfind(")") + 1:].split()
    if len(fields) < 20:
        return None
    return ProcessState(state=fields[0], start_time=fields[19])


def pid_alive(pid: int) -> bool:
    """Whether `pid` runs. A zombie does not: it has exited and waits only for its parent
    (for an orphan, the machine's init, which may reap late) to collect its status."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    found = process_state(pid)
    return found is None or found.state not in ("Z", "X")


def stop_child(proc: "subprocess.Popen[bytes] | subprocess.Popen[str]", grace_s: float,
               first: int = signal.SIGTERM, group: bool = False) -> int:
    """Stop a child we started: `first` (SIGTERM, or SIGINT for tcpdump), wait up to
    `grace_s`, then SIGKILL and wait. `group`: signal its whole process group (it was
    started with start_new_session). Returns its exit status."""
    if proc.poll() is None:
        _signal(proc.pid, first, group)
        try:
            return proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _signal(proc.pid, signal.SIGKILL, group)
    try:
        return proc.wait(timeout=KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        log.warning("pid %d survived SIGKILL for %g s (uninterruptible sleep?)", proc.pid,
                    KILL_WAIT_S)
        return proc.wait()


def stop_pid(pid: int, grace_s: float) -> None:
    """Stop a process that is not our child (a leftover of a killed run): SIGTERM, wait up
    to `grace_s` for it to go, then SIGKILL and wait for the exit, so callers see it gone."""
    try:
        os.kill(pid, signal.SIGTERM)
        if gone_within(pid, grace_s):
            return
        os.kill(pid, signal.SIGKILL)
        if not gone_within(pid, KILL_WAIT_S):
            log.warning("pid %d survived SIGKILL for %g s (uninterruptible sleep?)", pid,
                        KILL_WAIT_S)
    except ProcessLookupError:
        pass


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _signal(pid: int, signum: int, group: bool) -> None:
    try:
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except ProcessLookupError:
        pass
