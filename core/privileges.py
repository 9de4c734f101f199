"""A service's own unprivileged user: made when missing, and taken on for good.

A process that binds or opens what needs root first, then gives it up with
`drop_to`: supplementary groups, gid, then uid (that order: after setuid nothing
else could be changed), and checks that root cannot be taken back.
"""
from __future__ import annotations

import os
import pwd
import subprocess
from dataclasses import dataclass

NOLOGIN = ("/usr/sbin/nologin", "/sbin/nologin", "/bin/false")


class PrivilegeError(RuntimeError):
    """The user cannot be made or taken on; the message says why and what to do."""


@dataclass(frozen=True)
class ServiceUser:
    name: str
    uid: int
    gid: int


def service_user(name: str, create: bool = False) -> ServiceUser:
    """The system user `name` (made by useradd when missing and `create`); never root."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        if not create:
            raise PrivilegeError(f"no user {name!r}: it is made by the first "
                                 "`./repro contest serve` run as root") from None
        shell = next((s for s in NOLOGIN if os.path.exists(s)), "/bin/false")
        done = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir",
                               "/nonexistent", "--shell", shell, "--user-group", name],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise PrivilegeError(f"useradd {name} failed: {done.stderr.strip()}")
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise PrivilegeError(f"user {name!r} has uid or gid 0: a service user must be "
                             "unprivileged (userdel it and start again)")
    return ServiceUser(name, entry.pw_uid, entry.pw_gid)


def drop_to(user: ServiceUser) -> None:
    """Become `user` for good: no supplementary groups, its gid, its uid."""
    os.setgroups([])
    os.setresgid(user.gid, user.gid, user.gid)
    os.setresuid(user.uid, user.uid, user.uid)
    try:
        os.setresuid(0, 0, 0)
    except PermissionError:
        return
    raise PrivilegeError("root could be taken back after dropping privileges")
