"""A box for untrusted code: each contest build and each trial's sender runs in one of its own.

The box is made by bubblewrap (`bwrap`, run as root: no user namespace) and is:

- a user of its own (schemes/submission/box_users.py): a uid no other box that exists at
  the same time has; `setpriv` drops to it with no groups, capabilities or way
  to gain privileges, after `prlimit` set the per-process limits;
- its own PID namespace: kill(-1) reaches only the box, and when its first
  process exits (or bwrap is killed) the kernel kills everything else in it,
  setsid daemons included (`--unshare-pid --die-with-parent`);
- its own mount namespace: /usr read-only (and the /bin, /lib... links into
  it), a fresh /proc of its own processes, a minimal /dev, a private /tmp, a
  writable /work, and read-only the few files the caller binds under /box;
  nothing else of the machine: no results/, var/, checkout, /etc, /root,
  /home or the host's /tmp;
- its own IPC and UTS namespaces;
- a system-call filter (schemes/submission/box_seccomp.py, loaded by bwrap before anything
  of the box runs): no new namespace (no user namespace: bwrap's --disable-userns needs the
  box in a user namespace of its own), no keyring, io_uring, memfd or SysV shared memory;
- a session keyring of its own, empty (box_keys.py): never the runner's, whose keys a
  service's repro would otherwise hand every box; its user's own keyrings are emptied when
  it closes;
- its network: a build has none (`--unshare-net`: only a loopback that is
  down); a trial's sender is in the run's Mininet sender host and nothing else
  (`nsenter --net` into it, so the box's mounts need not follow Mininet's);
- its cgroup (schemes/submission/box_cgroup.py) where the machine has one, made before
  anything runs in it: bwrap waits (`--block-fd`) until its first process has
  been moved in;
- writable space in memory: /work and /tmp are two folders of one tmpfs of the
  box's size, mounted outside the box under /run (root-only), charged to the
  box's memory; nothing it writes reaches a disk.

At the end (`close`) every process still carrying the box's uid is killed and
listed in the box's facts (the run's meta.json), the cgroup and the tmpfs are
removed, the user's keyrings emptied and the user released. A box whose holder
died is cleaned by the next that leases its user (and by `./repro clean`).
"""
from __future__ import annotations

import json
import logging
import os
import select
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Iterable, Union

from core.endpoints import MininetHost
from schemes.base import ManagedProcess
from schemes.submission import box_keys, box_seccomp, hosting
from schemes.submission.box_cgroup import BoxCgroup, CgroupError, CgroupLimits, CgroupPlan, detect
from schemes.submission.box_procs import BoxProcess, kill_all, processes_of, signal_all
from schemes.submission.box_users import (BOXES_DIR, BoxUnavailable, BoxUser, Lease, free, lease,
                                          pool)
from schemes.submission.limits import Limits
from schemes.submission.output_cap import CappedOutput
from schemes.submission.untrusted_text import TAIL_LINES, tail_text

log = logging.getLogger(__name__)

TOOLS = ("bwrap", "nsenter", "prlimit", "setpriv", "mount", "umount")
START_S = 10.0  # bwrap reports its box within this, or the box fails naming it
OUTPUT_SETTLE_S = 2.0  # a boxed program's output pipe ends within this of its box's end
OUTPUT_BYTES = 256 << 10  # of a command's output kept: its head and its tail
SYSTEM_LINKS = ("bin", "lib", "lib32", "lib64", "libx32", "sbin")
WORK, TMP, RO = "/work", "/tmp", "/box"
HOSTED = ("build", "run")  # a contest's boxes: refused without cgroups unless allowed
BOX_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORK, "TMPDIR": TMP, "LC_ALL": "C"}
HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LC_ALL": "C"}

Output = Union[int, IO[Any], None]


@dataclass(frozen=True)
class Bind:
    """A file or folder of the machine, visible read-only inside the box at `dest`."""
    source: Path
    dest: str


@dataclass(frozen=True)
class Finished:
    returncode: int | None  # None: killed at the wall-clock time-out; -N: killed by signal N
    output: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def exit_status(code: int | None) -> int | None:
    """bwrap's exit status as Popen would give the boxed program's: bwrap reports a program
    killed by signal N as 128 + N (as a shell does), which this turns into -N."""
    if code is not None and 128 < code <= 128 + 64:
        return -(code - 128)
    return code


@lru_cache(maxsize=1)
def bwrap_version() -> str:
    try:
        done = subprocess.run(["bwrap", "--version"], capture_output=True, text=True,
                              timeout=10)
        return done.stdout.strip() or "bwrap (version unknown)"
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap (version unknown: {e})"


def box_unavailable() -> str | None:
    """Why no box can be made on this machine (one line with the fix), or None."""
    if os.geteuid() != 0:
        return "not root: boxes for submitted code are made as root (use sudo)"
    missing = [t for t in TOOLS if shutil.which(t, path=HOST_ENV["PATH"]) is None]
    if missing:
        return (f"{', '.join(missing)} missing: install bubblewrap and util-linux "
                "(./setup/install.sh)")
    try:
        if not pool():
            return "no box users (netrepro-box-NN): run ./setup/install.sh"
        detect()
        box_seccomp.program()
    except (BoxUnavailable, OSError) as e:
        return str(e)
    return None


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in SYSTEM_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    # The dynamic linker's cache, and nothing else of /etc.
    return args + ["--perms", "0755", "--dir", "/etc",
                   "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]


def _mounted(path: Path) -> bool:
    target = str(path)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[4].replace("\\040", " ") == target:
            return True
    return False


def _unmount(path: Path) -> str | None:
    """Unmount the box's tmpfs; a note when it needed a lazy unmount, else None."""
    if not _mounted(path):
        return None
    done = subprocess.run(["umount", str(path)], capture_output=True, text=True, timeout=30,
                          env=HOST_ENV)
    if done.returncode == 0:
        return None
    lazy = subprocess.run(["umount", "--lazy", str(path)], capture_output=True, text=True,
                          timeout=30, env=HOST_ENV)
    if lazy.returncode != 0:
        raise OSError(f"cannot unmount {path}: {done.stderr.strip()} / {lazy.stderr.strip()}")
    return f"{path} was busy ({done.stderr.strip()}): unmounted lazily"


def _settled(uid: int, settle_s: float = 2.0) -> list[BoxProcess]:
    """The processes of `uid` still alive `settle_s` after its box's bwrap ended (the kernel
    kills the rest of a PID namespace as its first process dies, not instantly)."""
    end = time.monotonic() + settle_s
    while True:
        left = processes_of(uid)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.02)


@dataclass
class _Record:
    """What a box made outside itself, kept beside its lease so that whoever leases the
    user next removes what a holder that died left."""
    path: Path
    holder: int
    cgroups: list[str] = field(default_factory=list)
    mount: str = ""

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"holder": self.holder, "cgroups": self.cgroups,
                                   "mount": self.mount}))
        tmp.replace(self.path)


def clean_left(user: BoxUser, folder: Path = BOXES_DIR, scan: bool = False) -> dict[str, Any]:
    """Remove what a box of `user` left (its processes, cgroup, tmpfs); the caller holds the
    user's lease. Returns what was found (empty when nothing). A box writes its record
    before it starts anything and removes it only once it closed cleanly, so without a
    record there is nothing to look for, unless `scan`."""
    found: dict[str, Any] = {}
    record_path = folder / f"{user.name}.json"
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        record = {}
    if not record_path.exists() and not scan:
        return found
    killed = kill_all(user.uid)
    if killed:
        found["processes_killed"] = [p.describe() for p in killed]
    cgroup = BoxCgroup.left_by([Path(p) for p in record.get("cgroups", []) if Path(p).is_dir()])
    if cgroup.folders:
        cgroup.kill()
        cgroup.remove()
        found["cgroups_removed"] = [str(f) for f in cgroup.folders]
    mount = folder / user.name
    if _mounted(mount):
        _unmount(mount)
        found["tmpfs_unmounted"] = str(mount)
    if mount.is_dir():
        shutil.rmtree(mount, ignore_errors=True)
    if box_keys.keys_of(user.uid):
        found["keyrings"] = box_keys.clear_user_keyrings(user.uid, user.gid)
    record_path.unlink(missing_ok=True)
    if found:
        found["previous_holder"] = record.get("holder")
    return found


def clean_unheld(folder: Path = BOXES_DIR) -> list[str]:
    """`./repro clean`: what boxes whose holder died left, removed; one line each."""
    if not folder.is_dir():
        return []  # no box was ever made here
    if os.geteuid() != 0:
        return [f"boxes: not checked ({folder} is root's: run as root)"]
    lines = []
    for user in pool():
        held = free(user, folder)
        if held is None:
            continue  # a live box
        try:
            found = clean_left(user, folder, scan=True)
            if found:
                lines.append(f"box {user.name}: removed what a dead holder left: "
                             + json.dumps(found, sort_keys=True))
        finally:
            held.release()
    return lines


class Box:
    """One box: a leased user, its cgroup and tmpfs; commands run in it with `popen`/`run`."""

    def __init__(self, purpose: str, lease_: Lease, limits: Limits,
                 facts: dict[str, Any]) -> None:
        self.purpose = purpose
        self.lease = lease_
        self.user = lease_.user
        self.limits = limits
        self.facts = facts
        self.mount = BOXES_DIR / self.user.name
        self.work = self.mount / "work"
        self.tmp = self.mount / "tmp"
        self.cgroup = BoxCgroup(CgroupPlan(), self.user.name, folders=[])
        self._record = _Record(BOXES_DIR / f"{self.user.name}.json", os.getpid())
        self._procs: list[subprocess.Popen[bytes]] = []
        self._starter: box_keys.Spawner | None = None
        self._closed = False

    # ------------------------------------------------------------------ making it

    @classmethod
    def open(cls, purpose: str, limits: Limits, facts: dict[str, Any] | None = None,
             wait_s: float | None = None) -> "Box":
        """A new box for `purpose` ("build", "run", "probe"); its facts go into `facts`
        (a run's meta.json holds them), filled as it is made and closed."""
        why = box_unavailable()
        if why:
            raise BoxUnavailable(f"cannot box submitted code: {why}")
        why = hosting.refusal() if purpose in HOSTED else None
        if why:
            raise BoxUnavailable(f"cannot box submitted code: {why}")
        facts = {} if facts is None else facts
        held = lease() if wait_s is None else lease(wait_s)
        box = cls(purpose, held, limits, facts)
        try:
            box._make()
        except BaseException:
            box.close()
            raise
        return box

    def _make(self) -> None:
        stale = clean_left(self.user)
        plan = detect()
        self.cgroup = BoxCgroup(plan, self.user.name)
        self._record.cgroups = [str(f) for f in self.cgroup.folders]
        self._record.mount = str(self.mount)
        self._record.save()
        self.facts.update({
            "tool": bwrap_version(), "purpose": self.purpose, "user": self.user.name,
            "uid": self.user.uid, "lease_wait_s": self.lease.waited_s,
            "namespaces": ["pid", "mount", "ipc", "uts"]
            + (["network"] if self.purpose != "run" else []),
            "network": ("the run's sender host (Mininet), nothing else"
                        if self.purpose == "run" else "none"),
            "limits": self.limits.describe(),
            "cgroup": plan.describe(), "cgroup_summary": plan.summary(),
            "writable": f"/work and /tmp: one tmpfs of {self.limits.disk_bytes >> 20} MiB",
            "seccomp": box_seccomp.describe(),
            "session_keyring": "a new empty one (not the runner's)",
            "left_by_a_dead_box": stale or None,
        })
        try:
            self.cgroup.create(CgroupLimits(
                processes=self.limits.processes,
                # The tmpfs's pages are the box's memory too.
                memory_bytes=self.limits.memory_bytes + self.limits.disk_bytes,
                cpu_fraction=self.limits.cpu_fraction))
        except CgroupError as e:
            raise BoxUnavailable(f"the box's cgroup: {e}") from None
        self.facts["cgroup_folders"] = self.cgroup.describe()
        self.mount.mkdir(mode=0o700, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.limits.disk_bytes},mode=0700,nosuid,"
             "nodev", "netrepro-box", str(self.mount)], capture_output=True, text=True,
            timeout=30, env=HOST_ENV)
        if done.returncode != 0:
            raise BoxUnavailable(f"cannot mount the box's tmpfs on {self.mount}: "
                                 f"{done.stderr.strip()}")
        for folder in (self.work, self.tmp):
            folder.mkdir(mode=0o700)
            os.chown(folder, self.user.uid, self.user.gid)

    # ------------------------------------------------------------------ running in it

    def command(self, argv: list[str], limits: Limits, binds: Iterable[Bind] = (),
                network_of: int | None = None, cwd: str = WORK,
                block_fd: int | None = None, info_fd: int | None = None,
                seccomp_fd: int | None = None) -> list[str]:
        """The argument list that runs `argv` in this box (never a shell string)."""
        def both(value: int) -> str:
            return f"{value}:{value}"
        enter = ([] if network_of is None else
                 ["nsenter", f"--target={network_of}", "--net", "--"])
        args = [*enter, "bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                *([] if network_of is not None else ["--unshare-net"]),
                "--die-with-parent", "--new-session", "--hostname", "box",
                *_system_binds(), "--proc", "/proc", "--dev", "/dev",
                "--bind", str(self.tmp), TMP, "--bind", str(self.work), WORK]
        binds = list(binds)
        # Folders bwrap would make on the way to a bound file are root's 0700: make them 0755.
        parents = {str(p) for b in binds for p in Path(b.dest).parents if str(p) != "/"}
        for folder in sorted(parents, key=lambda p: (p.count("/"), p)):
            args += ["--perms", "0755", "--dir", folder]
        for bind in binds:
            args += ["--ro-bind", str(bind.source), bind.dest]
        args += ["--chdir", cwd, "--clearenv"]
        for key, value in BOX_ENV.items():
            args += ["--setenv", key, value]
        if block_fd is not None:
            args += ["--block-fd", str(block_fd)]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        return args + [
            "--", "prlimit", f"--cpu={both(limits.cpu_s)}", f"--as={both(limits.memory_bytes)}",
            f"--fsize={both(limits.file_bytes)}", f"--nproc={both(limits.processes)}",
            # Not root's 20,000: with a memory cgroup missing, descriptors would hold memory.
            f"--nofile={both(limits.open_files)}", "--memlock=0:0", "--msgqueue=0:0",
            # No real-time policy and no nicer nice value, whatever the machine's root was
            # given: a box never runs ahead of the emulator or the CPU probe.
            "--core=0:0", "--rtprio=0:0", "--nice=0:0", "--",
            "setpriv", f"--reuid={self.user.uid}", f"--regid={self.user.gid}",
            "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--",
            *argv]

    def popen(self, argv: list[str], limits: Limits, binds: Iterable[Bind] = (),
              network_of: int | None = None, cwd: str = WORK, stdout: Output = None,
              stderr: Output = None) -> subprocess.Popen[bytes]:
        """Start `argv` in the box; returns once it runs inside the box's cgroup."""
        if self._closed:
            raise RuntimeError(f"box {self.user.name} is closed")
        block_r, block_w = os.pipe()
        info_r, info_w = os.pipe()
        filter_r = box_seccomp.program_fd()
        try:
            # From the box's own thread: its session keyring, never the runner's.
            proc = self._spawner().call(lambda: subprocess.Popen(
                self.command(argv, limits, binds, network_of, cwd, block_r, info_w, filter_r),
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                pass_fds=(block_r, info_w, filter_r), start_new_session=True, env=HOST_ENV))
        except BaseException:
            for fd in (block_r, block_w, info_r, info_w, filter_r):
                os.close(fd)
            raise
        os.close(block_r)
        os.close(info_w)
        os.close(filter_r)
        self._procs.append(proc)
        try:
            self.cgroup.join(self._first_pid(info_r, proc))
            os.write(block_w, b"go")
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            os.close(info_r)
            os.close(block_w)
        return proc

    def _spawner(self) -> box_keys.Spawner:
        if self._starter is None:
            self._starter = box_keys.Spawner(self.user.name)
        return self._starter

    def _first_pid(self, info: int, proc: subprocess.Popen[bytes]) -> int:
        """The box's first process, as bwrap reports it (before it runs anything)."""
        data = b""
        end = time.monotonic() + START_S
        while True:
            left = end - time.monotonic()
            ready, _, _ = select.select([info], [], [], max(0.0, left))
            if not ready:
                raise BoxUnavailable(f"bwrap did not report its box within {START_S:g} s")
            chunk = os.read(info, 4096)
            if not chunk:
                break
            data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError, TypeError):
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            raise BoxUnavailable(f"bwrap could not make the box (exit status {code}; its "
                                 "message is in the command's error output)") from None

    def run(self, argv: list[str], limits: Limits, binds: Iterable[Bind] = (),
            cwd: str = WORK) -> Finished:
        """Run `argv` to its end, no network; stdout and stderr together, as printed (its
        first and last bytes, OUTPUT_BYTES in all); killed with the whole box's processes
        after `limits.wall_s`."""
        log_path = self.mount / "output.log"  # outside /work and /tmp: the box cannot see it
        with open(log_path, "wb") as out:
            proc = self.popen(argv, limits, binds, None, cwd, stdout=out, stderr=out)
            try:
                code = exit_status(proc.wait(timeout=limits.wall_s))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                kill_all(self.user.uid)
                code = None
        with open(log_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(min(size, OUTPUT_BYTES * 3 // 4) if size > OUTPUT_BYTES else size)
            tail = b""
            if size > OUTPUT_BYTES:
                f.seek(size - OUTPUT_BYTES // 4)
                tail = f.read(OUTPUT_BYTES // 4)
        log_path.unlink()
        text = head.decode(errors="replace")
        if tail:
            text += (f"\n[... {size - len(head) - len(tail)} bytes of output cut ...]\n"
                     + tail.decode(errors="replace"))
        return Finished(code, text)

    def signal_all(self, sig: int) -> int:
        """Send `sig` to every process of the box's user; how many."""
        return len(signal_all(self.user.uid, sig))

    def read_file(self, relative: str, max_bytes: int) -> bytes | None:
        """A regular file the box wrote under /work, read without following anything the box
        could have made a link; None when absent or not a regular file; ValueError when
        over `max_bytes`."""
        parts = [p for p in relative.split("/") if p]
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.work, flags | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            for part in parts[:-1]:
                nxt = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = nxt
            leaf = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        with os.fdopen(leaf, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > max_bytes:
                raise ValueError(f"{relative} is {info.st_size} bytes, over {max_bytes}")
            return f.read(max_bytes + 1)[:max_bytes]

    # ------------------------------------------------------------------ the end

    def close(self) -> dict[str, Any]:
        """Kill what is left, check the uid has no process, remove the cgroup and tmpfs,
        release the user; returns the facts (idempotent)."""
        if self._closed:
            return self.facts
        self._closed = True
        errors: list[str] = []
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()  # bwrap: --die-with-parent takes the box's processes with it
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                errors.append(f"bwrap (pid {proc.pid}) did not exit 10 s after SIGKILL")
        if self._starter is not None:  # every bwrap it started has exited
            self._starter.close()
        try:
            left = _settled(self.user.uid)
            if left:
                killed = kill_all(self.user.uid)
                self.facts["leftover_processes"] = [p.describe() for p in killed or left]
                log.warning("box %s: %d process(es) of its user outlived it; killed",
                            self.user.name, len(left))
            else:
                self.facts["leftover_processes"] = []
        except RuntimeError as e:
            errors.append(str(e))
        if self.cgroup.folders:
            self.facts["limit_events"] = self.cgroup.events()
            try:
                self.cgroup.kill()
                self.cgroup.remove()
            except CgroupError as e:
                errors.append(str(e))
        try:
            note = _unmount(self.mount)
            if note:
                errors.append(note)
            if self.mount.is_dir():
                self.mount.rmdir()
        except OSError as e:
            errors.append(f"the box's tmpfs: {e}")
        try:
            self.facts["keyrings"] = box_keys.clear_user_keyrings(self.user.uid, self.user.gid)
        except (OSError, subprocess.SubprocessError) as e:
            errors.append(f"the box user's keyrings: {e}")
        if not errors:
            self._record.path.unlink(missing_ok=True)
        self.facts["teardown_errors"] = errors
        for problem in errors:
            log.warning("box %s: %s", self.user.name, problem)
        self.lease.release()
        return self.facts

    def __enter__(self) -> "Box":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BoxedProcess(ManagedProcess):
    """A trial's sender in its box, inside the run's Mininet sender host's network. Its
    stdout and stderr reach the run's folder through pipes, capped (output_cap.py)."""

    def __init__(self, box: Box, host: MininetHost, args: list[str], limits: Limits,
                 binds: Iterable[Bind], out_dir: Path, label: str,
                 on_process: Any) -> None:
        self.box = box
        self.outputs: list[CappedOutput] = []
        host_pid = getattr(host, "pid", None)
        if not isinstance(host_pid, int):
            raise BoxUnavailable(f"host {host.name} has no process to enter its network by")

        def start(argv: list[str], stdout: IO[Any], stderr: IO[Any]
                  ) -> subprocess.Popen[bytes]:
            self.outputs = [CappedOutput(stdout), CappedOutput(stderr)]
            try:
                return box.popen(argv, limits, list(binds), host_pid, WORK,
                                 self.outputs[0].write_fd, self.outputs[1].write_fd)
            finally:
                for output in self.outputs:
                    output.handed_over()
        super().__init__(host, args, out_dir, label, on_process, popen=start)

    def stderr_tail(self, lines: int = TAIL_LINES) -> str:
        """The last lines of its error output, from the last bytes it wrote (escaped, cut)."""
        if len(self.outputs) < 2:
            return "(no output)"
        # The sender has exited: what it wrote last is read within a moment, unless a
        # child of it still holds the pipe (then what has arrived is what there is).
        self.outputs[1].finish(OUTPUT_SETTLE_S)
        return tail_text(self.outputs[1].recent(), lines)

    def finish_outputs(self, timeout_s: float = OUTPUT_SETTLE_S) -> list[str]:
        """Wait for the outputs' files to be complete (the box is closed by then); what did
        not end in time, for the record."""
        return [f"{('stdout', 'stderr')[i]} still open {timeout_s:g} s after the box closed"
                for i, output in enumerate(self.outputs) if not output.finish(timeout_s)]

    def wait(self, timeout_s: float) -> int:
        code = exit_status(super().wait(timeout_s))
        assert code is not None
        return code

    def stop(self, grace_s: float = 5.0) -> int:
        """SIGTERM to every process of the box (the sender writes its statistics); after
        `grace_s`, SIGKILL to bwrap, which takes the whole box with it."""
        if self.proc.poll() is None:
            self.box.signal_all(signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            while self.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
        code = exit_status(self.proc.wait())
        assert code is not None
        return code
