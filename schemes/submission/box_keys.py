"""The kernel keyrings around a box: a fresh session keyring for each box, and its user's
own keyrings emptied when it closes.

bwrap, prlimit and setpriv keep the session keyring of whoever starts them. When the
runner has one of its own (a service's, by systemd's default), a box would possess it and
could read and write root's keys. So each box's processes are started by a thread of the
box's own (`Spawner`) that joined a new, empty session keyring first: a keyring is a
thread's credential, so the runner's other threads keep theirs. Not a preexec hook in the
child: that makes Python fork the runner instead of vfork it, which measured 5 to 13 ms
more per start, inside the trial. The thread lives as long as the box, since bwrap dies
with the thread that started it (`--die-with-parent`).

A user's own keyrings (`@u`, `@us`) outlive its processes, and box users are reused by
other teams' boxes, so when a box closes its user's are emptied and invalidated. The box's
filter (box_seccomp.py) refuses the key system calls anyway; these two keep the keys of the
machine and of other boxes apart even without it.

The system call numbers come from libseccomp's table for this machine.
"""
from __future__ import annotations

import ctypes
import os
import queue
import subprocess
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, TypeVar, cast

from schemes.submission.box_seccomp import syscall_number

KEYCTL_GET_KEYRING_ID = 0
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEYCTL_INVALIDATE = 21
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5
CLEAR_TIMEOUT_S = 10.0
SPAWN_TIMEOUT_S = 30.0
T = TypeVar("T")
KEY_USERS = Path("/proc/key-users")


@lru_cache(maxsize=1)
def _keyctl() -> Callable[..., int]:
    """keyctl(2) through libc's syscall(), ready before any fork (nothing is loaded after)."""
    libc = ctypes.CDLL(None, use_errno=True)
    call = libc.syscall
    call.restype = ctypes.c_long
    number = syscall_number("keyctl")

    def keyctl(operation: int, *args: int) -> int:
        values = [ctypes.c_long(a) for a in (*args, 0, 0, 0, 0)[:4]]
        return int(call(ctypes.c_long(number), ctypes.c_long(operation), *values))
    return keyctl


def join_fresh_session() -> None:
    """The calling thread (and what it starts from now on) in a new, empty, anonymous
    session keyring."""
    if _keyctl()(KEYCTL_JOIN_SESSION_KEYRING, 0) < 0:
        raise OSError(ctypes.get_errno(), "cannot join a new session keyring")


class Spawner:
    """A box's own thread, in a session keyring of its own, that starts the box's
    processes; `close` ends it (after the box's processes are gone)."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name=f"spawner-{name}",
                                        daemon=True)
        self._thread.start()
        if not self._ready.wait(SPAWN_TIMEOUT_S):
            raise RuntimeError(f"the spawner thread of box {name} did not start within "
                               f"{SPAWN_TIMEOUT_S:g} s")
        if self._failure is not None:
            raise self._failure

    def _serve(self) -> None:
        try:
            join_fresh_session()
        except OSError as e:
            self._failure = e
            return
        finally:
            self._ready.set()
        while (job := self._jobs.get()) is not None:
            job()

    def call(self, start: Callable[[], T]) -> T:
        """`start()` run in the box's thread; its result, or what it raised."""
        if not self._thread.is_alive():
            raise RuntimeError("the box's spawner thread has ended")
        done = threading.Event()
        outcome: dict[str, Any] = {}

        def job() -> None:
            try:
                outcome["value"] = start()
            except BaseException as e:  # noqa: B902 - handed back to the caller
                outcome["error"] = e
            done.set()
        self._jobs.put(job)
        if not done.wait(SPAWN_TIMEOUT_S):
            raise RuntimeError(f"starting a process in the box took over {SPAWN_TIMEOUT_S:g} s")
        if "error" in outcome:
            raise outcome["error"]
        return cast(T, outcome["value"])

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(SPAWN_TIMEOUT_S)


def keys_of(uid: int, key_users: Path = KEY_USERS) -> int:
    """How many keys `uid` owns (its keyrings included), from the kernel's per-user count;
    0 when it owns none."""
    try:
        text = key_users.read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        who, _, rest = line.partition(":")
        fields = rest.split()
        if who.strip() == str(uid) and len(fields) >= 2:
            return int(fields[1].split("/")[0])
    return 0


def clear_user_keyrings(uid: int, gid: int) -> str:
    """Empty and invalidate the user and user-session keyrings of `uid`, as that user (a
    keyring is its owner's), when it owns any key: looking a user's keyring up makes one.
    What was done, one line."""
    if keys_of(uid) == 0:
        return "no key"
    keyctl = _keyctl()
    read_fd, write_fd = os.pipe()

    def as_the_user() -> None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        # Both looked up first: a look-up of either makes both, so one after the other's
        # invalidation would make a new one.
        rings = [(label, keyctl(KEYCTL_GET_KEYRING_ID, spec, 0))
                 for label, spec in (("user", KEY_SPEC_USER_KEYRING),
                                     ("user-session", KEY_SPEC_USER_SESSION_KEYRING))]
        cleared = []
        for label, ring in rings:
            if ring > 0 and keyctl(KEYCTL_CLEAR, ring) == 0:
                cleared.append(label)
            elif ring > 0:
                raise OSError(ctypes.get_errno(), f"cannot clear the {label} keyring")
        for label, ring in rings:
            if ring > 0 and keyctl(KEYCTL_INVALIDATE, ring) != 0:
                raise OSError(ctypes.get_errno(), f"cannot invalidate the {label} keyring")
        os.write(write_fd, (",".join(cleared) or "none").encode())

    try:
        subprocess.run(["/bin/true"], preexec_fn=as_the_user, pass_fds=(write_fd,),
                       timeout=CLEAR_TIMEOUT_S, check=True, env={"PATH": "/usr/bin:/bin"})
        os.close(write_fd)
        write_fd = -1
        found = os.read(read_fd, 256).decode()
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
    return f"{found} keyring(s) emptied and invalidated"
