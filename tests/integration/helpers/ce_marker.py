"""A marking queue for the tests of DCTCP: ce_marker.bpf.c on the sender's egress.

netrepro's emulator has no ECN-marking queue yet, so these tests model one: the tc
program keeps the backlog a fixed-rate link would have and sets CE on ECN-capable data
packets that find more than K packets ahead of them. `marking_paths` puts it on every
TracePath that the trace-path run kind builds while it is active, and leaves its counters in the run
folder as ce-marker.json.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from kernel.bpffs import mount_private_bpffs
from core.paths import REPO_ROOT
from runkinds.trace_path.network import TracePath

SOURCE = Path(__file__).with_name("ce_marker.bpf.c")
COUNTS_FILE = "ce-marker.json"
OPPORTUNITY_BYTES = 1504  # the emulator serves one packet per opportunity of this many bytes
COUNT_FIELDS = ("backlog_ns", "last_ns", "packets", "data_packets", "not_ect", "already_ce",
                "marked")


def packet_ns(rate_mbps: float) -> int:
    """How long the emulator's fixed-rate link takes per packet, in ns."""
    return round(OPPORTUNITY_BYTES * 8 * 1000 / rate_mbps)


def build(out_dir: Path, rate_mbps: float, k: int, dport: int) -> Path:
    """Compile the marker for one link rate, threshold and port."""
    clang = shutil.which("clang")
    if clang is None:
        pytest.fail("clang is needed to build the test's CE marker (setup/ installs it)")
    vmlinux = REPO_ROOT / "build" / "native" / "bpf"
    obj = out_dir / f"ce_marker-k{k}.bpf.o"
    subprocess.run([clang, "-O2", "-g", "-target", "bpf", "-Wall", "-Werror",
                    f"-DCE_PACKET_NS={packet_ns(rate_mbps)}", f"-DCE_K={k}",
                    f"-DCE_DPORT={dport}", "-I", str(vmlinux), "-c", str(SOURCE), "-o", str(obj)],
                   check=True, capture_output=True, text=True)
    return obj


def _cmd(host: Any, argv: list[str]) -> str:
    proc = host.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = proc.communicate(timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"{host.name}: `{' '.join(argv)}` failed: {out.decode()}")
    return out.decode()


def _bss_map_id(host: Any, dev: str) -> int:
    shown = json.loads(_cmd(host, ["tc", "-j", "filter", "show", "dev", dev, "egress"]) or "[]")
    progs = [f["options"]["prog"]["id"] for f in shown if "prog" in f.get("options", {})]
    assert len(progs) == 1, shown
    prog = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "id", str(progs[0])],
                                     capture_output=True, text=True, check=True).stdout)
    for map_id in prog.get("map_ids", []):
        info = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(map_id)],
                                         capture_output=True, text=True, check=True).stdout)
        if info.get("name", "").endswith(".bss"):
            return int(map_id)
    raise AssertionError(f"the marker's program has no .bss map: {prog}")


def read_counts(map_id: int) -> dict[str, int]:
    dumped = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)],
                                       capture_output=True, text=True, check=True).stdout)
    raw = bytes(int(b, 16) for b in dumped[0]["value"])
    return {name: int.from_bytes(raw[8 * i:8 * i + 8], "little")
            for i, name in enumerate(COUNT_FIELDS)}


@contextmanager
def marking_paths(monkeypatch: pytest.MonkeyPatch, obj: Path, k: int) -> Iterator[None]:
    """While active, every run's sender egress carries the marker `obj` (built for `k`)."""

    class MarkedPath(TracePath):
        _marker_map: int | None = None

        def __enter__(self) -> "MarkedPath":
            super().__enter__()
            dev = self.sender.defaultIntf().name
            mount_private_bpffs(self.sender)
            _cmd(self.sender, ["tc", "qdisc", "add", "dev", dev, "clsact"])
            _cmd(self.sender, ["tc", "filter", "add", "dev", dev, "egress", "bpf",
                               "direct-action", "obj", str(obj), "sec", "tc"])
            self._marker_map = _bss_map_id(self.sender, dev)
            return self

        def _teardown(self) -> None:
            # Before the link goes: its interfaces hold the filter, and the filter the map.
            if self._marker_map is not None:
                counts: dict[str, Any] = dict(read_counts(self._marker_map), k=k)
                (self.link_options["log_dir"] / COUNTS_FILE).write_text(json.dumps(counts))
                self._marker_map = None
            super()._teardown()

    with monkeypatch.context() as patch:
        patch.setattr("runkinds.trace_path.measure.TracePath", MarkedPath)
        yield
