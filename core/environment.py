"""Facts about the machine a run ran on, for meta.json."""
from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.paths import REPO_ROOT

_PACKAGES = ("mininet", "iperf3", "openvswitch-switch", "python3-numpy", "python3-matplotlib",
             "python3-dpkt", "clang", "libbpf-dev", "bpftool")


def _run(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    os_release = {}
    path = Path("/etc/os-release")
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            os_release[key] = value.strip('"')
    versions = {}
    for pkg in _PACKAGES:
        versions[pkg] = _run(["dpkg-query", "-W", "-f=${Version}", pkg]) or None
    return {
        "kernel": platform.release(),
        "distribution": os_release.get("PRETTY_NAME", "unknown"),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count() or 1,
        "packages": versions,
        "git_commit": _run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"]) or None,
        "git_dirty": bool(_run(["git", "-C", str(REPO_ROOT), "status", "--porcelain"])),
    }
