"""Load an eBPF object through the verifier without registering anything, and a test-only
struct_ops registration whose .bss map can be read.

`verifier_load` runs `bpftool prog loadall` in a private mount namespace on a bpffs
mounted there: the programs go through the verifier (and their struct_ops map is
created, not registered: registration is a separate map update that only
`bpftool struct_ops register` makes), and everything is released when the
namespace's bpffs goes away. No congestion control name is ever taken, so it is
safe beside runs that hold the same names.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIMEOUT_S = 60

# Runs as root inside `unshare --mount --propagation private`: the bpffs is this
# namespace's alone.
_LOAD_ONLY = r"""
import subprocess, sys, tempfile
obj = sys.argv[1]
with tempfile.TemporaryDirectory(prefix="nrverifier") as d:
    subprocess.run(["mount", "-t", "bpf", "bpf", d], check=True)
    try:
        done = subprocess.run(["bpftool", "prog", "loadall", obj, d + "/progs"],
                              capture_output=True, text=True)
    finally:
        subprocess.run(["umount", d], check=False)
sys.stdout.write(done.stdout + done.stderr)
sys.exit(done.returncode)
"""


@dataclass(frozen=True)
class LoadResult:
    accepted: bool
    log: str  # bpftool's and libbpf's output, the verifier's log when it refused


def verifier_load(obj: Path) -> LoadResult:
    """Put every program of `obj` through the kernel's verifier; register nothing."""
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "--",
                           sys.executable, "-c", _LOAD_ONLY, str(obj)],
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    return LoadResult(done.returncode == 0, done.stdout + done.stderr)


def _bpftool(*args: str) -> str:
    done = subprocess.run(["bpftool", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"`bpftool {' '.join(args)}` failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


def _available() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


@dataclass
class ScratchRegistration:
    """A struct_ops registered under a name no run uses; unregistered by its own id."""

    name: str
    struct_ops_id: int

    @classmethod
    def register(cls, obj: Path, name: str) -> "ScratchRegistration":
        if name in _available():
            raise RuntimeError(f"{name} is already registered; it is a test-only name, so a "
                               "killed test left it: `bpftool struct_ops unregister name "
                               f"{name}`")
        _bpftool("struct_ops", "register", str(obj))
        ids = [int(e["id"]) for e in json.loads(_bpftool("-j", "struct_ops", "show"))
               if e.get("name") == name]
        if len(ids) != 1 or name not in _available():
            raise RuntimeError(f"registering {obj} gave struct_ops ids {ids} named {name}")
        return cls(name, ids[0])

    def unregister(self) -> None:
        _bpftool("struct_ops", "unregister", "id", str(self.struct_ops_id))

    def bss(self, member: str) -> dict[str, Any]:
        """A global of the program behind cong_control, as BTF formats it."""
        # bpftool 7.1 prints two JSON objects side by side here, not one document.
        dump = _bpftool("-j", "struct_ops", "dump", "id", str(self.struct_ops_id))
        prog = re.search(r'"cong_control":"[^"]*/prog_id:(\d+)"', dump)
        if prog is None:
            raise RuntimeError(f"{self.name} has no cong_control program: {dump}")
        shown = json.loads(_bpftool("-j", "prog", "show", "id", prog.group(1)))
        for map_id in shown.get("map_ids", []):
            info = json.loads(_bpftool("-j", "map", "show", "id", str(map_id)))
            if info.get("name", "").endswith(".bss"):
                [entry] = json.loads(_bpftool("-j", "map", "dump", "id", str(map_id)))
                value = entry["formatted"]["value"][".bss"]
                return next(v[member] for v in value if member in v)
        raise RuntimeError(f"program {prog.group(1)} of {self.name} has no .bss map")
