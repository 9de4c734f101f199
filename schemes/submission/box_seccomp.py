"""The box's system-call filter: what no submission needs and what would let it out of its
limits, refused by the kernel (seccomp), whatever the machine's cgroups.

Loaded by bubblewrap (`--seccomp FD`) into the box's first process before anything of the
submission runs, and inherited by everything it starts; built with libseccomp (Debian's
libseccomp2, through ctypes), which writes the BPF program for this machine's architecture,
whose system calls of another ABI (32-bit `int 0x80`, x32) kill the process.

Refused with EPERM (clone3 with ENOSYS: its flags cannot be read, and the C library then
falls back to clone, whose flags can):

- new namespaces: `unshare` and `clone` with any CLONE_NEW* flag, `clone3`, `setns`. A user
  namespace would make the box root of its own mounts (a tmpfs outside its space) and
  widen what the kernel lets it reach; bubblewrap's `--disable-userns` needs the box to be
  in a user namespace of its own, which this box (run as root, a real uid) is not;
- keyrings: `keyctl`, `add_key`, `request_key` (the keys of whoever started the run, and
  the box user's own keyrings, which outlive the box);
- io_uring: `io_uring_setup`, `_enter`, `_register` (work done by kernel threads, outside
  the box's accounting);
- memory outside every per-process limit: `memfd_create`, `memfd_secret`, SysV `shmget`
  and `msgget` (without a memory cgroup nothing would bound them);
- `bpf`, `perf_event_open`, `userfaultfd`: kernel interfaces a controller has no use for.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
from functools import lru_cache

from schemes.submission.box_users import BoxUnavailable

# libseccomp's values (seccomp.h).
_ACT_ALLOW = 0x7FFF0000
_ACT_KILL_PROCESS = 0x80000000
_ATTR_ACT_BADARCH = 2
_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


# Every CLONE_NEW* flag (sched.h); CLONE_NEWTIME shares its bit with clone's exit signal, so
# it is refused for unshare only (a new time namespace via clone needs clone3 anyway).
CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
             "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
             "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
             "CLONE_NEWNET": 0x40000000}
CLONE_NEWTIME = 0x00000080
REFUSED = ("setns", "keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter",
           "io_uring_register", "memfd_create", "memfd_secret", "shmget", "msgget", "bpf",
           "perf_event_open", "userfaultfd")
# Not in setup's package plan (its per-release facts are recorded from each archive): systemd
# depends on it, so a machine that runs Mininet has it.
FIX = "install libseccomp2 (apt-get install libseccomp2)"


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as e:
        raise BoxUnavailable(f"libseccomp is missing ({e}): the box's system-call filter is "
                             f"made with it; {FIX}") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_export_pfc.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def syscall_number(name: str) -> int:
    """This architecture's number of the system call `name` (libseccomp's table)."""
    number = int(_library().seccomp_syscall_resolve_name(name.encode()))
    if number < 0:
        raise BoxUnavailable(f"libseccomp {version()} does not know the system call {name}: "
                             f"the box's filter cannot refuse it; {FIX} (a newer one)")
    return number


def version() -> str:
    lib = _library()
    try:
        lib.seccomp_version.restype = ctypes.POINTER(ctypes.c_uint * 3)
        v = lib.seccomp_version().contents
        return f"{v[0]}.{v[1]}.{v[2]}"
    except (AttributeError, ValueError):
        return "(version unknown)"


def _clone_flags_arg() -> int:
    """Which argument of clone holds its flags: the first, but on s390 the second."""
    return 1 if platform.machine().startswith("s390") else 0


def _export(kind: str) -> bytes:
    lib = _library()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise BoxUnavailable(f"seccomp_init failed: the box's filter cannot be made; {FIX}")
    try:
        def rule(action: int, name: str, *masked: tuple[int, int]) -> None:
            cmps = (_ArgCmp * max(1, len(masked)))(
                *[_ArgCmp(arg, _CMP_MASKED_EQ, flag, flag) for arg, flag in masked])
            code = lib.seccomp_rule_add_array(ctx, action, syscall_number(name), len(masked),
                                              cmps)
            if code != 0:
                raise BoxUnavailable(f"libseccomp refused the box's rule for {name} "
                                     f"({os.strerror(-code)}); {FIX}")
        if lib.seccomp_attr_set(ctx, _ATTR_ACT_BADARCH, _ACT_KILL_PROCESS) != 0:
            raise BoxUnavailable(f"libseccomp could not set the action for other ABIs; {FIX}")
        eperm = _act_errno(errno.EPERM)
        for flag in [*CLONE_NEW.values(), CLONE_NEWTIME]:
            rule(eperm, "unshare", (0, flag))
        for flag in CLONE_NEW.values():
            rule(eperm, "clone", (_clone_flags_arg(), flag))
        rule(_act_errno(errno.ENOSYS), "clone3")
        for name in REFUSED:
            rule(eperm, name)
        read_fd, write_fd = os.pipe()
        try:
            export = lib.seccomp_export_bpf if kind == "bpf" else lib.seccomp_export_pfc
            # Small (well under a pipe's 64 KiB), so the pipe holds it before it is read.
            code = export(ctx, write_fd)
            os.close(write_fd)
            write_fd = -1
            if code != 0:
                raise BoxUnavailable(f"libseccomp could not write the box's filter "
                                     f"({os.strerror(-code)}); {FIX}")
            chunks = []
            while chunk := os.read(read_fd, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
    finally:
        lib.seccomp_release(ctx)


@lru_cache(maxsize=1)
def program() -> bytes:
    """The filter as the BPF program bubblewrap loads (made once per process)."""
    return _export("bpf")


def readable() -> str:
    """The same filter in libseccomp's readable form (for tests and `doctor`)."""
    return _export("pfc").decode(errors="replace")


def describe() -> dict[str, object]:
    """What the box's record says of its filter."""
    return {"tool": f"libseccomp {version()}", "new_namespaces": "refused",
            "refused": ["unshare/clone with CLONE_NEW*", "clone3 (ENOSYS)", *REFUSED],
            "other_abis": "kill the process"}


def program_fd() -> int:
    """A descriptor bubblewrap reads the filter from (a pipe already holding all of it)."""
    data = program()
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)
    finally:
        os.close(write_fd)
    return read_fd
