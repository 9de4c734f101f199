"""`repro doctor`'s checks that Mininet can make its hosts here, and enter them.

Mininet makes a host with `mnexec -n` (new network and mount namespaces, / made private,
sysfs mounted anew) and starts programs in it with `mnexec -a PID`, which enters the host's
namespaces, its mount namespace included. Two ways a machine fails that, both seen in
chroots and containers:

- `mnexec -n` refuses ("remount: Invalid argument") when / is not a mount point, or
  ("unshare: Operation not permitted") when namespaces are not allowed;
- `mnexec -a` enters a mount namespace whose root is not this process's root (a chroot
  inside it), so a host's programs do not see the checkout: every run fails with
  "<the checkout>: No such file or directory".
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from core.checks import Check
from core.paths import ProjectPaths

TIMEOUT_S = 10.0
MOUNTINFO = Path("/proc/self/mountinfo")
FIX_ROOT = ("enter the tree as the root of its own mount namespace (unshare -m, then "
            "pivot_root: setup/try-distro.sh shows how), not with a plain chroot; a "
            "container's root is a mount point already (Docker's, Podman's)")
FIX_REFUSED = ("run as root on the machine itself, or in a container started with "
               "--privileged (network and mount namespaces are refused here)")


def root_is_mount_point(mountinfo: str) -> bool:
    """Whether a mount sits at this process's / (mountinfo's 5th field is the mount point,
    relative to the process's root)."""
    return any(len(fields) > 4 and fields[4] == "/"
               for fields in (line.split() for line in mountinfo.splitlines()))


def diagnose_refusal(output: str, root_mounted: bool | None) -> tuple[str, str]:
    """Why `mnexec -n` failed, and the fix, from what it printed."""
    if not root_mounted or "Invalid argument" in output:
        why = "/ is not a mount point here (a chroot, or a container whose root is not one)"
        return why, FIX_ROOT
    return "network and mount namespaces are refused", FIX_REFUSED


def check_namespaces(paths: ProjectPaths) -> list[Check]:
    checkout = paths.root
    if os.geteuid() != 0:
        return [Check("Mininet hosts (mnexec)", False, "not checked: needs root",
                      "run ./repro doctor as root")]
    mnexec = shutil.which("mnexec")
    if mnexec is None:
        return [Check("Mininet hosts (mnexec)", False, "mnexec not found (Mininet)",
                      "run ./setup/install.sh as root")]
    try:
        root_mounted: bool | None = root_is_mount_point(MOUNTINFO.read_text())
    except OSError:
        root_mounted = None
    try:
        made = subprocess.run([mnexec, "-n", "true"], capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [Check("Mininet hosts (mnexec -n)", False,
                      f"`mnexec -n true` did not return within {TIMEOUT_S:g} s", FIX_REFUSED)]
    if made.returncode != 0:
        said = " ".join((made.stderr + made.stdout).split()) or f"exit {made.returncode}"
        why, fix = diagnose_refusal(said, root_mounted)
        return [Check("Mininet hosts (mnexec -n)", False,
                      f"`mnexec -n true` failed ({said}): {why}", fix)]
    return [Check("Mininet hosts (mnexec -n)", True, "a host's namespaces can be made"),
            _check_entering(mnexec, checkout)]


def _check_entering(mnexec: str, checkout: Path) -> Check:
    """A program started in a host (`mnexec -a`) sees this checkout as this process does."""
    name = "Mininet hosts see the checkout (mnexec -a)"
    here = os.stat(checkout)
    host = subprocess.Popen([mnexec, "-n", "sleep", str(int(TIMEOUT_S * 3))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = subprocess.run([mnexec, "-a", str(host.pid), "stat", "-c", "%d:%i",
                               str(checkout)], capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Check(name, False, f"`mnexec -a` did not return within {TIMEOUT_S:g} s",
                     FIX_REFUSED)
    finally:
        host.kill()
        host.wait()
    if seen.returncode == 0 and seen.stdout.strip() == f"{here.st_dev}:{here.st_ino}":
        return Check(name, True, "a host's programs see this checkout")
    said = " ".join((seen.stderr + seen.stdout).split()) or f"exit {seen.returncode}"
    return Check(name, False, f"inside a host, {checkout} is not this checkout ({said}): this "
                 "process's root is not its mount namespace's root (a chroot?), and every "
                 "run would fail with 'No such file or directory'", FIX_ROOT)
