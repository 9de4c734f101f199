"""Can this machine box submitted code? A real box is made and a probe inside tries to see
what it must not: the checkout, results/, var/, /root, /etc/shadow, other processes.

`./repro doctor` prints the outcome; `./repro worker` reports it (a worker that
cannot box submissions takes no contest trial).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from core.paths import ProjectPaths
from schemes.submission import box_seccomp
from schemes.submission.box import Box, box_unavailable, bwrap_version
from schemes.submission.box_cgroup import detect
from schemes.submission.box_users import BoxUnavailable, pool
from schemes.submission.build import build_inputs_missing
from schemes.submission.hosting import refusal
from schemes.submission.limits import Limits

PROBE_LIMITS = Limits(cpu_s=10, memory_bytes=256 << 20, file_bytes=1 << 20, processes=16,
                      wall_s=20, disk_bytes=1 << 20)
# Prints its uid, every path it can see, how many processes it can see; a fixed script, the
# paths are its arguments.
PROBE = ('id -u; for p; do [ -e "$p" ] && echo "visible: $p"; done; '
         'echo "processes: $(ls -d /proc/[0-9]* | wc -l)"; echo end')
MAX_PROCESSES_SEEN = 8  # bwrap's init, the shell and its pipeline


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    detail: str


def box_probe(paths: ProjectPaths) -> ProbeResult:
    """Make a box and check from inside that it isolates."""
    why = box_unavailable()
    if why:
        return ProbeResult(False, why)
    hidden = [paths.root, paths.results_dir, paths.state_dir, "/root", "/etc/shadow", "/home"]
    started = time.monotonic()
    try:
        with Box.open("probe", PROBE_LIMITS, wait_s=30) as box:
            done = box.run(["/bin/sh", "-c", PROBE, "probe", *map(str, hidden)], PROBE_LIMITS)
            user, users = box.user, len(pool())
    except (BoxUnavailable, OSError) as e:
        return ProbeResult(False, f"no box could be made: {e}")
    took = time.monotonic() - started
    lines = done.output.splitlines()
    if done.returncode != 0 or not lines or lines[-1] != "end":
        return ProbeResult(False, f"the probe did not run in its box (status "
                           f"{done.returncode}): {done.output.strip()[:300]}")
    if lines[0] != str(user.uid):
        return ProbeResult(False, f"the probe ran as uid {lines[0]}, not its box's {user.uid}")
    seen = [line.split(": ", 1)[1] for line in lines if line.startswith("visible: ")]
    if seen:
        return ProbeResult(False, f"the box does not isolate: its probe could see "
                           f"{', '.join(seen)}")
    procs = next((int(line.split()[1]) for line in lines if line.startswith("processes: ")), -1)
    if not 0 < procs <= MAX_PROCESSES_SEEN:
        return ProbeResult(False, f"the box's probe saw {procs} processes: its PID namespace "
                           "is not its own")
    hosting = refusal()
    return ProbeResult(True, f"{bwrap_version()}, {users} box users; limits by "
                       f"{detect().summary()}"
                       + ("" if hosting is None else " (a contest is refused here without "
                          "--allow-without-cgroups)")
                       + f"; system calls filtered by libseccomp {box_seccomp.version()}; "
                       f"a probe in a box ({user.name}) could not see "
                       f"the checkout, results/, var/, /root, /etc/shadow, /home and saw "
                       f"{procs} processes ({took:.2f} s)")


def cannot_build(paths: ProjectPaths) -> str | None:
    """Why this machine cannot build and run submissions (not root, no box can be made or
    it does not isolate, our libraries not built), or None. Makes a box to see."""
    if os.geteuid() != 0:
        return ("not root: submissions are built and run in boxes, which takes root (start "
                "`repro worker` with sudo)")
    probe = box_probe(paths)
    if not probe.ok:
        return probe.detail
    return refusal() or build_inputs_missing(paths)
