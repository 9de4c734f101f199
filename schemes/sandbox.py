"""Untrusted code (a submitted controller) built and run as an unprivileged user, with limits.

Every command is wrapped as `prlimit <limits> -- setpriv <drop to the user> -- cmd`
(util-linux; argument lists, never a shell): CPU seconds, address space, file
size, processes, no core dumps; a fixed user and group without supplementary
groups, capabilities or the right to gain privileges. The user is a system user
setup/install.sh creates (SANDBOX_USER). Wall-clock time-outs are the caller's:
`run_limited` kills the whole process group when one passes.
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from core.errors import Unavailable

SANDBOX_USER = "netrepro-student"


class SandboxUnavailable(Unavailable):
    """The machine cannot run untrusted code safely; the message says how to fix it."""


@dataclass(frozen=True)
class Limits:
    cpu_s: int
    memory_bytes: int
    file_bytes: int
    processes: int
    wall_s: float

    def describe(self) -> dict[str, float]:
        return {"cpu_s": self.cpu_s, "memory_mib": self.memory_bytes >> 20,
                "file_mib": self.file_bytes >> 20, "processes": self.processes,
                "wall_s": self.wall_s}


BUILD_LIMITS = Limits(cpu_s=120, memory_bytes=2 << 30, file_bytes=256 << 20, processes=64,
                      wall_s=180)


def run_limits(duration_s: float) -> Limits:
    """For a sender that should run `duration_s` (the executor stops it after the span)."""
    return Limits(cpu_s=int(duration_s) + 60, memory_bytes=1 << 30, file_bytes=64 << 20,
                  processes=64, wall_s=duration_s + 60)


@dataclass(frozen=True)
class SandboxUser:
    name: str
    uid: int
    gid: int

    @classmethod
    def lookup(cls, name: str = SANDBOX_USER) -> "SandboxUser":
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise SandboxUnavailable(
                f"the unprivileged user {name!r} that builds and runs submitted code does not "
                f"exist: run ./setup/install.sh (or: useradd --system --no-create-home "
                f"--shell /usr/sbin/nologin {name})") from None
        if entry.pw_uid == 0 or entry.pw_gid == 0:
            raise SandboxUnavailable(f"user {name!r} has uid/gid 0: it must be unprivileged")
        for tool in ("prlimit", "setpriv"):
            if shutil.which(tool) is None:
                raise SandboxUnavailable(f"{tool} is missing: install util-linux")
        return cls(name, entry.pw_uid, entry.pw_gid)

    def wrap(self, command: list[str], limits: Limits) -> list[str]:
        def both(value: int) -> str:
            return f"{value}:{value}"
        return ["prlimit", f"--cpu={both(limits.cpu_s)}", f"--as={both(limits.memory_bytes)}",
                f"--fsize={both(limits.file_bytes)}", f"--nproc={both(limits.processes)}",
                "--core=0:0", "--",
                "setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
                "--no-new-privs", "--inh-caps=-all", "--",
                *command]

    def own(self, path: Path, mode: int = 0o700) -> None:
        """Give `path` (a directory tree we made) to the user, private to it."""
        for p in [path, *path.rglob("*")]:
            os.chown(p, self.uid, self.gid, follow_symlinks=False)
        path.chmod(mode)


@dataclass(frozen=True)
class Finished:
    returncode: int | None  # None: killed at the wall-clock time-out
    output: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_limited(command: list[str], cwd: Path, limits: Limits, env: dict[str, str]) -> Finished:
    """Run a wrapped command; stdout and stderr together, as printed; the process group is
    killed when `limits.wall_s` passes."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limits.wall_s)
        return Finished(proc.returncode, out.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        return Finished(None, out.decode(errors="replace"))


def signal_name(returncode: int) -> str | None:
    """'SIGSEGV' for a process killed by signal 11 (returncode -11), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
