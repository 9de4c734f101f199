"""A contest box's cgroup: its processes, memory and CPU bounded as one, whatever it forks.

Which cgroup serves each controller is read from the machine, never assumed:
for each of pids, memory and cpu, the unified (v2) hierarchy when its root lists
the controller, else the v1 hierarchy that mounts it, else none (the box then
has only its per-user and per-process limits, and its record says so).

- v2 forbids a cgroup that holds processes from handing controllers to
  children, so a box's cgroup is a child of the hierarchy's root
  (`<root>/netrepro-box-NN`), with the controllers it needs enabled there.
- v1 has no such rule: a box is made inside the cgroup its maker already is in
  (`<own cgroup>/netrepro-box-NN`), so whatever bounds the runner bounds its
  boxes too.

No common parent folder holds the boxes: under one, every box would share the
CPU weight of a single process. Each box is a sibling of the processes (v1) or
groups (v2) beside it, with the default weight: it competes for the CPU as one
process did before boxes, and its quota caps it at `cpu_fraction` of a CPU
however many processes it forks.

A box's cgroup is made before anything runs in it (the box's first process joins
it before it executes anything: schemes/submission/box.py), so every process it forks is in
it. At the end its processes are killed and it is removed.
"""
from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("pids", "memory", "cpu")
# Use only the controllers listed ("none": none), so that the path of a machine without
# them can be tested on one that has them (schemes/submission/hosting.py).
ONLY_ENV = "NETREPRO_BOX_CGROUPS"
CPU_PERIOD_US = 100_000
MOUNTINFO = Path("/proc/self/mountinfo")
SELF_CGROUP = Path("/proc/self/cgroup")


class CgroupError(RuntimeError):
    """The machine has the controller but the box's cgroup cannot be made or used."""


@dataclass(frozen=True)
class Hierarchy:
    version: int  # 1 or 2
    mount: Path
    own: str  # this process's cgroup within the hierarchy, relative to its mount ("" = root)
    controllers: frozenset[str]

    def parent(self) -> Path:
        """Where the boxes' cgroups go in this hierarchy."""
        return self.mount if self.version == 2 else self.mount / self.own


@dataclass(frozen=True)
class CgroupPlan:
    """Which hierarchy serves each controller (those absent: none on this machine)."""

    served: dict[str, Hierarchy] = field(default_factory=dict)

    def hierarchies(self) -> list[Hierarchy]:
        seen: list[Hierarchy] = []
        for h in self.served.values():
            if h not in seen:
                seen.append(h)
        return seen

    def describe(self) -> dict[str, str]:
        return {c: (f"cgroup v{self.served[c].version}" if c in self.served else "none")
                for c in CONTROLLERS}

    def summary(self) -> str:
        if not self.served:
            return "no cgroup controller (per-user and per-process limits only)"
        by_version: dict[int, list[str]] = {}
        for c in CONTROLLERS:
            if c in self.served:
                by_version.setdefault(self.served[c].version, []).append(c)
        text = "; ".join(f"cgroup v{v}: {', '.join(cs)}" for v, cs in sorted(by_version.items()))
        missing = [c for c in CONTROLLERS if c not in self.served]
        return text + (f"; no {', '.join(missing)} controller" if missing else "")


def _own_paths(cgroup_text: str) -> tuple[str | None, dict[str, str]]:
    """(the v2 path, {v1 controller: path}) of the process whose /proc/<pid>/cgroup this is."""
    v2, v1 = None, {}
    for line in cgroup_text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, names, path = parts
        if names == "":
            v2 = path
        for name in names.split(","):
            if name:
                v1[name] = path
    return v2, v1


def _relative(own: str, mount_root: str) -> str | None:
    """`own` (a path in the hierarchy) below the mount's root, or None when outside it."""
    own, mount_root = own.rstrip("/") or "/", mount_root.rstrip("/") or "/"
    if mount_root == "/":
        return own.lstrip("/")
    if own == mount_root or own.startswith(mount_root + "/"):
        return own[len(mount_root):].lstrip("/")
    return None


def detect(mountinfo: str | None = None, self_cgroup: str | None = None) -> CgroupPlan:
    """The plan for this machine, from /proc/self/mountinfo and /proc/self/cgroup."""
    mountinfo = MOUNTINFO.read_text() if mountinfo is None else mountinfo
    self_cgroup = SELF_CGROUP.read_text() if self_cgroup is None else self_cgroup
    own_v2, own_v1 = _own_paths(self_cgroup)
    v2: Hierarchy | None = None
    v1: list[Hierarchy] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        root, mount = fields[3], Path(fields[4].replace("\\040", " "))
        fstype, options = fields[sep + 1], fields[sep + 3].split(",")
        if fstype == "cgroup2" and v2 is None and own_v2 is not None:
            rel = _relative(own_v2, root)
            try:
                listed = (mount / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if rel is not None:
                v2 = Hierarchy(2, mount, rel, frozenset(listed) & set(CONTROLLERS))
        elif fstype == "cgroup":
            names = {o for o in options if o in CONTROLLERS}
            if not names or any(names & h.controllers for h in v1):
                continue
            owns = {own_v1.get(n) for n in names}
            if len(owns) != 1 or None in owns:
                continue
            rel = _relative(owns.pop() or "/", root)
            if rel is not None:
                v1.append(Hierarchy(1, mount, rel, frozenset(names)))
    served: dict[str, Hierarchy] = {}
    only = os.environ.get(ONLY_ENV)
    wanted = CONTROLLERS if only is None else tuple(
        c for c in only.split(",") if c in CONTROLLERS)
    for c in wanted:
        if v2 is not None and c in v2.controllers:
            served[c] = v2
        else:
            for h in v1:
                if c in h.controllers:
                    served[c] = h
    return CgroupPlan(served)


@dataclass(frozen=True)
class CgroupLimits:
    processes: int
    memory_bytes: int
    cpu_fraction: float  # of one CPU


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as e:
        raise CgroupError(f"cannot write {value!r} to {path}: {e.strerror or e}") from None


def _controllers_on(folder: Path, wanted: list[str]) -> None:
    """Hand `wanted` (v2) to the children of `folder`, if not handed already."""
    on = set((folder / "cgroup.subtree_control").read_text().split())
    for c in wanted:
        if c not in on:
            _write(folder / "cgroup.subtree_control", f"+{c}")


class BoxCgroup:
    """The cgroup (one folder per hierarchy serving a controller) of the box `name`."""

    def __init__(self, plan: CgroupPlan, name: str, folders: list[Path] | None = None) -> None:
        self.plan = plan
        self.name = name
        self.folders = ([h.parent() / name for h in plan.hierarchies()] if folders is None
                        else folders)

    @classmethod
    def left_by(cls, folders: list[Path]) -> "BoxCgroup":
        """The cgroup a holder that died left, from the folders its record names."""
        return cls(CgroupPlan(), folders[0].name if folders else "", folders)

    def create(self, limits: CgroupLimits) -> None:
        for h in self.plan.hierarchies():
            mine = [c for c in CONTROLLERS if self.plan.served.get(c) == h]
            if h.version == 2:
                _controllers_on(h.mount, mine)
            folder = h.parent() / self.name
            try:
                folder.mkdir()
            except FileExistsError:
                raise CgroupError(f"{folder} exists: a box of that name was not removed "
                                  "(./repro clean removes it)") from None
            except OSError as e:
                raise CgroupError(f"cannot make {folder}: {e.strerror or e}") from None
            self._limit(h, folder, mine, limits)

    def _limit(self, h: Hierarchy, folder: Path, mine: list[str], limits: CgroupLimits) -> None:
        if "pids" in mine:
            _write(folder / "pids.max", str(limits.processes))
        if "memory" in mine:
            if h.version == 2:
                _write(folder / "memory.max", str(limits.memory_bytes))
                if (folder / "memory.swap.max").exists():
                    _write(folder / "memory.swap.max", "0")
            else:
                _write(folder / "memory.limit_in_bytes", str(limits.memory_bytes))
                if (folder / "memory.memsw.limit_in_bytes").exists():
                    _write(folder / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        if "cpu" in mine:
            quota = max(1000, int(limits.cpu_fraction * CPU_PERIOD_US))
            if h.version == 2:
                _write(folder / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:
                _write(folder / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                _write(folder / "cpu.cfs_quota_us", str(quota))

    def join(self, pid: int) -> None:
        """Move `pid` (the box's first process, before it runs anything) into the box."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return found

    def events(self) -> dict[str, int]:
        """How often the box ran into its limits (pids: forks refused; memory: allocations
        over the limit, OOM kills; cpu: periods its quota held it back)."""
        found: dict[str, int] = {}
        for folder in self.folders:
            for name, keys in (("pids.events", {"max": "forks_refused"}),
                               ("memory.events", {"max": "memory_over_limit",
                                                  "oom_kill": "oom_kills"}),
                               ("cpu.stat", {"nr_throttled": "cpu_quota_periods_throttled"})):
                try:
                    for line in (folder / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key in keys:
                            found[keys[key]] = int(value)
                except (OSError, ValueError):
                    pass
            try:  # v1
                found["memory_over_limit"] = int((folder / "memory.failcnt").read_text())
                for line in (folder / "memory.oom_control").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        found["oom_kills"] = int(value)
            except (OSError, ValueError):
                pass
        return found

    def kill(self, deadline_s: float = 10.0) -> int:
        """SIGKILL everything in the box (again while a fork bomb refills it); how many."""
        killed: set[int] = set()
        end = time.monotonic() + deadline_s
        while True:
            left = self.pids()
            if not left:
                return len(killed)
            if time.monotonic() > end:
                raise CgroupError(f"{len(left)} process(es) in {self.folders[0]} survived "
                                  f"SIGKILL for {deadline_s:g} s")
            for pid in left:
                killed.add(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    def remove(self, deadline_s: float = 10.0) -> None:
        end = time.monotonic() + deadline_s
        for folder in self.folders:
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    # EBUSY: a killed process has not left yet.
                    if e.errno != errno.EBUSY or time.monotonic() > end:
                        raise CgroupError(f"cannot remove {folder}: {e.strerror or e}") from None
                    time.sleep(0.02)

    def describe(self) -> dict[str, str]:
        return {c: f"cgroup v{h.version} {h.parent() / self.name}"
                for c, h in self.plan.served.items()}
