"""A submission compiled and linked against our libraries, in a box of its own with no
network, and installed root-owned for its trials."""
from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.paths import ProjectPaths
from schemes.base import SchemeUnavailable
from schemes.submission.box import RO, WORK, Bind, Box
from schemes.submission.limits import BUILD_LIMITS, Limits, signal_name
from schemes.submission.sources import Sources
from schemes.submission.untrusted_text import log_text

BINARY = "grump-student-sender"


def builds_dir(paths: ProjectPaths) -> Path:
    return paths.state_dir / "contest-builds"


def binary_path(paths: ProjectPaths, digest: str) -> Path:
    return builds_dir(paths) / digest / BINARY


# Binaries kept in var/contest-builds: the newest KEEP_BUILDS, and fewer when they hold more
# than KEEP_BYTES; a build in use by a trial (a shared lock on its IN_USE file) is never
# removed. A pruned build is built again when its sources are submitted again.
KEEP_BUILDS = 64
KEEP_BYTES = 1 << 30
IN_USE = ".in-use"
HOLD_WAIT_S = 30.0


def hold_build(paths: ProjectPaths, digest: str) -> int:
    """A shared lock on the build `digest` for a trial's life (close the descriptor to let
    go); SchemeUnavailable when the build is not there (never built, or pruned)."""
    folder = binary_path(paths, digest).parent
    try:
        fd = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
    except OSError as e:
        raise SchemeUnavailable(f"submission {digest} is not built ({folder}: {e.strerror}): "
                                "submit it with ./repro contest submit") from None
    end = time.monotonic() + HOLD_WAIT_S  # a pruner holds it only while it removes the build
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > end:
                os.close(fd)
                raise SchemeUnavailable(f"submission {digest}'s build stayed locked by a "
                                        f"pruner for {HOLD_WAIT_S:g} s") from None
            time.sleep(0.05)
    if not binary_path(paths, digest).is_file():  # pruned while we waited for the lock
        os.close(fd)
        raise SchemeUnavailable(f"submission {digest} is not built any more (pruned): "
                                "submit it again")
    return fd


def _built_at(folder: Path) -> float:
    """When the build was made: its binary's time (its folder's changes with its locks)."""
    binary = folder / BINARY
    return (binary if binary.is_file() else folder).stat().st_mtime


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file() and not f.is_symlink())


def prune_builds(paths: ProjectPaths, keep: int = KEEP_BUILDS,
                 keep_bytes: int = KEEP_BYTES) -> list[str]:
    """Remove the oldest builds beyond `keep` (or beyond `keep_bytes` in all), except those
    in use, and the lock files of builds gone; the digests removed."""
    root = builds_dir(paths)
    if not root.is_dir():
        return []
    folders = sorted((f for f in root.iterdir() if f.is_dir() and not f.is_symlink()),
                     key=_built_at, reverse=True)
    removed, total = [], 0
    for rank, folder in enumerate(folders):
        size = _folder_bytes(folder)
        if rank < keep and total + size <= keep_bytes:
            total += size
            continue
        fd = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            total += size
            continue
        try:
            shutil.rmtree(folder)
            removed.append(folder.name)
        finally:
            os.close(fd)
    for lock in root.glob(".*.lock"):
        if not (root / lock.name[1:-len(".lock")]).is_dir():
            lock.unlink(missing_ok=True)
    return removed


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    log: str  # every command and what it printed, escaped and cut (LOG_CHARS)
    reason: str = ""  # one line, when not ok
    binary: Path | None = None
    box: dict[str, Any] = field(default_factory=dict)  # the build's box, for the record

    def message(self) -> str:
        """What the last command printed (the failing step's message), escaped and cut,
        for a terminal."""
        lines = self.log.rstrip().splitlines()
        last = max((i for i, line in enumerate(lines) if line.startswith("$ ")), default=-1)
        return log_text("\n".join(lines[last:]).strip() or "(nothing)", MESSAGE_CHARS)


# The libraries and headers of ours a submission links against, bound read-only into the
# build's box (it sees nothing else of the checkout).
_LIBRARIES = (("grump", "libgrump_sender_main.a"), ("grump", "libgrump.a"),
              ("util", "libnetrepro_util.a"))
_INTERFACE_HEADERS = ("controller.hh", "controller_options.hh", "controller_registry.hh")
CXX_FLAGS = ("-O2", "-Wall", "-Wextra", "-fdiagnostics-color=never")
STUDENT_STD = "-std=gnu++17"
MAX_BINARY_BYTES = 256 << 20
# The compiler quotes the submission (its escapes included): what is kept is escaped, cut.
LOG_CHARS = 1 << 20
MESSAGE_CHARS = 8 << 10


def _compiler(paths: ProjectPaths) -> str:
    """The C++ compiler the native build used (same ABI as its libraries), links resolved:
    the box sees /usr, not /etc/alternatives."""
    found = shutil.which("g++") or "g++"
    cache = paths.build_dir / "CMakeCache.txt"
    if cache.is_file():
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("CMAKE_CXX_COMPILER:"):
                found = line.split("=", 1)[1].strip()
                break
    real = os.path.realpath(found)
    if not real.startswith("/usr/"):
        raise SchemeUnavailable(f"the C++ compiler {found} is {real}, outside /usr: a build's "
                                "box sees only /usr of the machine")
    return real


def build_inputs_missing(paths: ProjectPaths) -> str | None:
    """Why this checkout cannot build submissions (a library of ours not built), or None."""
    for comp, name in _LIBRARIES:
        if not (paths.build_dir / comp / name).is_file():
            return (f"{name} is not built: run ./setup/install.sh (or cmake -S native -B "
                    "build/native && make -C build/native)")
    return None


def _build_binds(paths: ProjectPaths) -> list[Bind]:
    native = paths.root / "native" / "grump"
    binds = [Bind(native / "student" / "compat", f"{RO}/compat")]
    binds += [Bind(native / "student" / name, f"{RO}/netrepro/{name}")
              for name in ("student_adapter.cc", "compat_clock.cc", "compat_clock.hh")]
    binds += [Bind(native / name, f"{RO}/netrepro/grump/{name}") for name in _INTERFACE_HEADERS]
    binds += [Bind(paths.build_dir / comp / name, f"{RO}/lib/{name}") for comp, name in _LIBRARIES]
    return binds


def _log(lines: list[str]) -> str:
    return log_text("\n".join(lines), LOG_CHARS)


def build(sources: Sources, api: int, paths: ProjectPaths,
          limits: Limits = BUILD_LIMITS) -> BuildResult:
    """Compile and link the submission in a box of its own (no network; it sees its sources,
    our headers and libraries, /usr); install the binary for the scheme."""
    why = build_inputs_missing(paths)
    if why:
        raise SchemeUnavailable(why)
    cxx = _compiler(paths)
    with Box.open("build", limits) as box:
        src, out = box.work / "src", box.work / "out"
        sources.write(src)
        out.mkdir()
        for p in (src, out, *src.iterdir()):
            os.chown(p, box.user.uid, box.user.gid)
        api_flag = f"-DNETREPRO_STUDENT_API={api}"
        lib = f"{RO}/lib"
        steps = [
            ("compile controller.cc",
             [cxx, STUDENT_STD, *CXX_FLAGS, "-iquote", ".", "-I", f"{RO}/compat", "-c",
              "controller.cc", "-o", "../out/controller.o"]),
            ("compile the adapter",
             [cxx, "-std=c++17", *CXX_FLAGS, api_flag, "-iquote", ".", "-I", f"{RO}/compat",
              "-c", f"{RO}/netrepro/student_adapter.cc", "-o", "../out/adapter.o"]),
            ("compile the clock",
             [cxx, "-std=c++17", *CXX_FLAGS, api_flag, "-I", f"{RO}/compat", "-c",
              f"{RO}/netrepro/compat_clock.cc", "-o", "../out/clock.o"]),
            ("link",
             [cxx, "-o", f"../out/{BINARY}", "../out/controller.o", "../out/adapter.o",
              "../out/clock.o", *(f"{lib}/{name}" for _, name in _LIBRARIES), "-lpthread"]),
        ]
        binds = _build_binds(paths)
        log_lines = []
        for label, command in steps:
            log_lines.append("$ " + " ".join(command))
            result = box.run(command, limits, binds, cwd=f"{WORK}/src")
            log_lines.append(result.output.rstrip())
            if result.timed_out:
                return BuildResult(False, _log(log_lines),
                                   f"{label}: still running after {limits.wall_s:g} s (the "
                                   "build's time-out)", box=box.close())
            if result.returncode is not None and result.returncode != 0:
                why = signal_name(result.returncode)
                return BuildResult(False, _log(log_lines),
                                   f"{label} failed" + (f" ({why})" if why else ""),
                                   box=box.close())
        try:
            binary = box.read_file(f"out/{BINARY}", MAX_BINARY_BYTES)
        except ValueError as e:
            return BuildResult(False, _log(log_lines), f"link: {e}", box=box.close())
        if binary is None:
            return BuildResult(False, _log(log_lines),
                               "link: the linker left no program", box=box.close())
        dest = binary_path(paths, sources.digest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        for folder in (builds_dir(paths), dest.parent):
            folder.chmod(0o700)  # root's: only a box that binds a binary sees it
        # A name of its own: two builds of the same sources may finish side by side.
        tmp = dest.with_name(f".{BINARY}-{os.getpid()}-{threading.get_ident()}.tmp")
        tmp.write_bytes(binary)  # root-owned: the running code cannot change it
        tmp.chmod(0o755)
        os.replace(tmp, dest)
        pruned = prune_builds(paths)
        if pruned:
            log_lines.append(f"# pruned {len(pruned)} older build(s) from {builds_dir(paths)}")
        return BuildResult(True, _log(log_lines), binary=dest, box=box.close())
