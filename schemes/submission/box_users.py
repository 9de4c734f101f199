"""The users contest boxes run as: a pool that setup creates, one user leased per box.

Every box (a build, a trial's sender) runs as a user no other box that exists at
the same time has, so a uid names exactly one box: the per-user process limit is
the box's own, a signal or a file of one box's user never reaches another's, and
every process left with that uid after the box is the box's. setup/install.sh
creates the pool (`netrepro-box-00`, `-01`, ...: 13 per CPU, the default runs
side by side twice over, since each run's box may meet a build's).

A lease is an exclusive flock on `<machine state>/boxes/<user>.lock`, held for
the box's life by an open file: the kernel lets go when its holder exits or dies,
so a killed run never keeps a user. The lock folder is the machine's (/run), not
a checkout's: two checkouts on one machine share the pool and must not share a
user.
"""
from __future__ import annotations

import errno
import fcntl
import os
import pwd
import re
import time
from dataclasses import dataclass
from pathlib import Path

from core.paths import MACHINE_STATE_DIR
from schemes.base import SchemeUnavailable

USER_PREFIX = "netrepro-box-"
_NAME = re.compile(re.escape(USER_PREFIX) + r"\d{2,}")
BOXES_DIR = MACHINE_STATE_DIR / "boxes"
LEASE_WAIT_S = 300.0  # how long a box waits for a free user before its build or run fails
POLL_S = 0.2
FIX = "run ./setup/install.sh (it creates the box users netrepro-box-NN, 13 per CPU)"


class BoxUnavailable(SchemeUnavailable):
    """A box cannot be made on this machine; the message says what is missing and the fix."""


@dataclass(frozen=True)
class BoxUser:
    name: str
    uid: int
    gid: int


def pool() -> list[BoxUser]:
    """Every box user of this machine, in name order; none may be root."""
    users = []
    for entry in pwd.getpwall():
        if not _NAME.fullmatch(entry.pw_name):
            continue
        if entry.pw_uid == 0 or entry.pw_gid == 0:
            raise BoxUnavailable(f"box user {entry.pw_name!r} has uid or gid 0: it must be an "
                                 "unprivileged user of its own (userdel it, then " + FIX + ")")
        users.append(BoxUser(entry.pw_name, entry.pw_uid, entry.pw_gid))
    users.sort(key=lambda u: u.name)
    uids = [u.uid for u in users]
    if len(set(uids)) != len(uids):
        raise BoxUnavailable("two box users share a uid: each box needs a uid of its own; "
                             "remove the duplicates, then " + FIX)
    return users


class Lease:
    """One user held for one box; `release` (or the holder's exit) frees it."""

    def __init__(self, user: BoxUser, lock: int, waited_s: float) -> None:
        self.user = user
        self.waited_s = waited_s
        self._lock: int | None = lock

    @property
    def held(self) -> bool:
        return self._lock is not None

    def release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the only descriptor drops the flock
            self._lock = None


def _try_lock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def lease(wait_s: float = LEASE_WAIT_S, folder: Path = BOXES_DIR,
          users: list[BoxUser] | None = None) -> Lease:
    """The first free user of the pool, locked; waits up to `wait_s` for one to free."""
    users = pool() if users is None else users
    if not users:
        raise BoxUnavailable("no box users (netrepro-box-NN) exist: " + FIX)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    started = time.monotonic()
    while True:
        for user in users:
            fd = _try_lock(folder / f"{user.name}.lock")
            if fd is not None:
                return Lease(user, fd, round(time.monotonic() - started, 3))
        if time.monotonic() - started > wait_s:
            raise BoxUnavailable(
                f"all {len(users)} box users were in use for {wait_s:g} s (every one leased "
                "by a build or a run in progress): run fewer side by side (--jobs), or create "
                "more users (" + FIX + ")")
        time.sleep(POLL_S)


def free(user: BoxUser, folder: Path = BOXES_DIR) -> Lease | None:
    """`user`'s lease if nobody holds it now (to clean what a dead holder left), else None."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = _try_lock(folder / f"{user.name}.lock")
    return None if fd is None else Lease(user, fd, 0.0)
