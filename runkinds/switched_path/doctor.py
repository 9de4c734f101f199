"""What `./repro doctor` checks for switched-path runs: Open vSwitch running, and the
OpenFlow controllers that can start here (POX, os-ken). None is required of the machine: a
run that needs a missing one fails naming it."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from core.checks import INSTALL, Check
from core.paths import ProjectPaths

OVS_MODULE = Path("/sys/module/openvswitch")
PYTHON = "/usr/bin/python3"


def _run(args: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def check_ovs() -> Check:
    if shutil.which("ovs-vsctl") is None:
        return Check("Open vSwitch", False, "ovs-vsctl not installed (switched-path runs)",
                     INSTALL, required=False)
    result = _run(["ovs-vsctl", "--timeout=3", "show"])
    if result.returncode != 0:
        return Check("Open vSwitch", False, "ovsdb-server/ovs-vswitchd not running "
                     "(switched-path runs)", "./setup/start-ovs.sh", required=False)
    datapath = "kernel" if OVS_MODULE.exists() else "userspace (netdev)"
    return Check("Open vSwitch", True, f"running, {datapath} datapath", required=False)


def check_controllers(paths: ProjectPaths) -> list[Check]:
    from controllers import pox_install
    pox = pox_install.installed(paths.root)
    result = _run([PYTHON, "-c", "import os_ken; print(getattr(os_ken, '__version__', ''))"])
    osken_ok = result.returncode == 0
    return [Check("OpenFlow controller pox", pox is not None,
                  f"POX {pox.version} in {pox.path}" if pox is not None else "not installed",
                  "./setup/install.sh --pox-dir DIR (a POX tarball or checkout)", required=False),
            Check("OpenFlow controller os-ken", osken_ok,
                  f"os_ken {result.stdout.strip()}".strip() if osken_ok
                  else "cannot import os_ken", INSTALL, required=False)]


def checks(paths: ProjectPaths) -> list[Check]:
    return [check_ovs(), *check_controllers(paths)]
