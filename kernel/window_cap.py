"""Hold a receiver's advertised TCP window at a cap, with tc and BPF.

The BPF program (native/bpf/window_cap.bpf.c, built into build/native/bpf/window_cap.bpf.o)
is attached as a clsact filter (direct-action) on the receiver's egress: every segment it
sends from `sport` leaves with a window of at most `cap` bytes. The window field is read as
bytes, so window scaling must be off in the receiver's namespace
(net.ipv4.tcp_window_scaling=0; the caller sets and checks it). What it did (segments seen,
how many were lowered, the largest window asked for) is in its .bss map.

Why a program and not a setting: this kernel's receiver grows its window with every
out-of-order segment (a Linux < 3.12 one did not), and the route's `window` metric does
not hold it: the receiver of a run with `window 14480` on its route offered 14480 bytes in
its SYN-ACK and 17376, 20272, ... in the SACKs that followed. (TCP_WINDOW_CLAMP sets the
same clamp, which tcp_measure_rcv_mss recomputes from the receive buffer once the
receiver has measured its first segments; not tried.)

    cap = WindowCap(obj, dev="nr12ab34r-eth0", run=in_namespace)
    cap.attach(sport=5001, cap_bytes=14480)
    ... traffic ...
    cap.stats()      # WindowCapStats(segments, capped, largest, failed)
    cap.detach()

`run(argv)` runs a command in the receiver's network namespace and returns its output,
raising on failure; bpftool runs here (maps are global).
"""
from __future__ import annotations

import json
import struct
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

# The native programs this module starts (its tc program): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("bpf",)

# struct window_cap: sport, cap, segments, capped, largest, failed (u32, host order).
_LAYOUT = struct.Struct("=IIIIII")
MAX_CAP = 0xFFFF  # the unscaled window field


class WindowCapError(RuntimeError):
    """The cap could not be attached, configured or read; the message says why."""


@dataclass(frozen=True)
class WindowCapStats:
    segments: int  # segments from the receiver's port that crossed the filter
    capped: int  # of those, segments whose window was lowered to the cap
    largest: int  # the largest window the receiver asked for, bytes
    failed: int  # rewrites the kernel refused

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class WindowCap:
    def __init__(self, obj: Path, dev: str, run: Callable[[list[str]], str]) -> None:
        self.obj = obj
        self.dev = dev
        self.run = run
        self.map_id: int | None = None
        self._qdisc_added = False

    def attach(self, sport: int, cap_bytes: int) -> None:
        if not self.obj.is_file():
            raise WindowCapError(f"{self.obj} is not built: build native/ "
                                 "(cmake -S native -B build/native && make -C build/native)")
        if not 0 < sport < 65536 or not 0 < cap_bytes <= MAX_CAP:
            raise WindowCapError(f"bad port {sport} or cap {cap_bytes} (1-{MAX_CAP} bytes)")
        self.run(["tc", "qdisc", "add", "dev", self.dev, "clsact"])
        self._qdisc_added = True
        self.run(["tc", "filter", "add", "dev", self.dev, "egress", "bpf", "direct-action",
                  "obj", str(self.obj), "sec", "tc"])
        self.map_id = self._bss_map_id()
        _bpftool(["map", "update", "id", str(self.map_id), "key", "hex", "00", "00", "00",
                  "00", "value", "hex"]
                 + [f"{b:02x}" for b in _LAYOUT.pack(sport, cap_bytes, 0, 0, 0, 0)])

    def stats(self) -> WindowCapStats:
        if self.map_id is None:
            raise WindowCapError("attach() first")
        shown = _bpftool(["-j", "map", "dump", "id", str(self.map_id)])
        try:
            raw = bytes(int(b, 16) for b in json.loads(shown)[0]["value"])
        except (ValueError, KeyError, IndexError) as e:
            raise WindowCapError(f"cannot read the cap's map {self.map_id}: {e}") from e
        _sport, _cap, segments, capped, largest, failed = _LAYOUT.unpack(raw[:_LAYOUT.size])
        return WindowCapStats(segments, capped, largest, failed)

    def detach(self) -> None:
        """Remove the clsact qdisc (and with it the filter); idempotent, never raises."""
        if self._qdisc_added:
            self._qdisc_added = False
            try:
                self.run(["tc", "qdisc", "del", "dev", self.dev, "clsact"])
            except WindowCapError:
                pass  # the namespace is going away with its interface

    def _bss_map_id(self) -> int:
        shown = self.run(["tc", "-j", "filter", "show", "dev", self.dev, "egress"])
        prog_ids = [f["options"]["prog"]["id"] for f in json.loads(shown or "[]")
                    if "prog" in f.get("options", {})]
        if len(prog_ids) != 1:
            raise WindowCapError(f"expected one BPF filter on {self.dev} egress, found "
                                 f"{prog_ids}: {shown}")
        prog = json.loads(_bpftool(["-j", "prog", "show", "id", str(prog_ids[0])]))
        for map_id in prog.get("map_ids", []):
            info = json.loads(_bpftool(["-j", "map", "show", "id", str(map_id)]))
            if info.get("name", "").endswith(".bss"):
                return int(map_id)
        raise WindowCapError(f"program {prog_ids[0]} has no .bss map: {prog}")


def run_in_namespace(pid: int) -> Callable[[list[str]], str]:
    """A `run` for WindowCap: the command in the network namespace of process `pid`."""
    def run(argv: list[str]) -> str:
        return _checked(["nsenter", "-t", str(pid), "-n", *argv])
    return run


def _bpftool(args: list[str]) -> str:
    return _checked(["bpftool", *args])


def _checked(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except FileNotFoundError as e:
        raise WindowCapError(f"{argv[0]} is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise WindowCapError(f"`{' '.join(argv[:6])}...` did not finish in 30 s") from e
    if done.returncode != 0:
        raise WindowCapError(f"`{' '.join(argv[:8])}...` failed (exit {done.returncode}): "
                             f"{(done.stderr or done.stdout).strip()}")
    return done.stdout
