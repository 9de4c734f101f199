"""The doctor tells a chroot from a refused namespace, and gives the fix for each."""
from __future__ import annotations

from app.commands import doctor_namespaces as nc

# /proc/self/mountinfo as a process sees it on a machine, and inside a plain chroot whose
# root is a folder of the machine's root file system (nothing is mounted at its /).
MACHINE = ("22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
           "23 22 0:21 / /proc rw,nosuid shared:2 - proc proc rw\n")
CHROOT = ("23 22 0:21 / /proc rw,nosuid - proc proc rw\n"
          "24 22 0:22 / /sys rw,nosuid - sysfs sysfs rw\n")


def test_root_mount_point_from_mountinfo() -> None:
    assert nc.root_is_mount_point(MACHINE)
    assert not nc.root_is_mount_point(CHROOT)


def test_remount_refused_in_a_chroot_points_at_pivot_root() -> None:
    why, fix = nc.diagnose_refusal("remount: Invalid argument", root_mounted=False)
    assert "not a mount point" in why and "chroot" in why
    assert "pivot_root" in fix and "try-distro" in fix


def test_refused_namespaces_point_at_privileged() -> None:
    why, fix = nc.diagnose_refusal("unshare: Operation not permitted", root_mounted=True)
    assert why == "network and mount namespaces are refused"
    assert "--privileged" in fix
