"""Whether this machine may host a contest: a box's whole-box limits are its cgroup's, and a
machine without the controllers holds less than docs/contest.md promises.

Without a cgroup controller a box still has its per-process limits (rlimits), its own user
(the per-user process limit is the box's) and its system-call filter (box_seccomp.py: no
user namespace, SysV shared memory or memfd, whose memory no rlimit counts); but nothing
bounds its processes together. So hosting a contest (`contest submit`, a worker taking
contest trials, the contest server) refuses on such a machine unless the teacher passes
`--allow-without-cgroups`, and the refusal says what would then be unbounded. The choice
travels to the processes a host starts (run processes, local workers) in the environment.

`NETREPRO_BOX_CGROUPS` (read by box_cgroup.detect) makes the box use only the controllers
it lists (`none`: none), so that the path without cgroups can be tested on a machine that
has them.
"""
from __future__ import annotations

import os

from schemes.submission.box_cgroup import CONTROLLERS, CgroupPlan, detect
from schemes.submission.limits import Limits, run_limits

ALLOW_ENV = "NETREPRO_ALLOW_WITHOUT_CGROUPS"
FLAG = "--allow-without-cgroups"


def allow_without_cgroups() -> None:
    """The teacher accepted boxes without whole-box limits, for this process and every
    process it starts."""
    os.environ[ALLOW_ENV] = "1"


def allowed_without_cgroups() -> bool:
    return os.environ.get(ALLOW_ENV) == "1"


def missing(plan: CgroupPlan | None = None) -> list[str]:
    plan = detect() if plan is None else plan
    return [c for c in CONTROLLERS if c not in plan.served]


def unbounded(absent: list[str], limits: Limits | None = None) -> list[str]:
    """What a box would then hold, per missing controller (a trial's limits by default)."""
    limits = limits or run_limits(140)
    text = {
        "memory": (f"memory: {limits.memory_bytes >> 20} MiB of address space per process, "
                   f"up to {limits.processes} processes, so up to "
                   f"{(limits.memory_bytes >> 20) * limits.processes} MiB for the box, not "
                   f"{(limits.memory_bytes + limits.disk_bytes) >> 20} MiB"),
        "cpu": (f"CPU: up to {limits.processes} processes each competing for a CPU, not one "
                "CPU for the whole box"),
        "pids": (f"processes: still {limits.processes} (the per-user limit; the user is the "
                 "box's own), but counted by the kernel's per-user limit, not the box's own "
                 "cgroup"),
    }
    return [text[c] for c in absent]


def refusal(plan: CgroupPlan | None = None) -> str | None:
    """Why a contest may not be hosted here (and what the flag would accept), or None."""
    absent = missing(plan)
    if not absent or allowed_without_cgroups():
        return None
    return (f"this machine has no cgroup controller for {', '.join(absent)} (neither cgroup "
            "v2 nor v1 offers it to this process), so a box would hold only per-process "
            "limits: " + "; ".join(unbounded(absent)) + ". Enable the controllers (cgroup v2: "
            "add them to the root's cgroup.subtree_control; v1: mount their hierarchies), or "
            f"host the contest without them: {FLAG}")
