"""Drop chosen original data segments of one TCP flow, deterministically, with tc and BPF.

The BPF program (native/bpf/segment_dropper.bpf.c, built into
build/native/bpf/segment_dropper.bpf.o) is attached as a clsact filter
(direct-action) on an interface the flow's data crosses. Attach it where
segments are already MSS-sized: on the receiving interface's ingress with GRO
off there, not on the sender's egress, where tc runs before software GSO
segments the sender's 64 KB packets. It counts
ORIGINAL data segments towards a destination port from the first one (1-based;
a segment is original when it starts at or above the highest sequence number
seen, so retransmissions never count and are never dropped), drops those whose
numbers it was given, and keeps what it did in its .bss map, which this class
writes before traffic and reads afterwards.

Needs root, tc with BPF support (iproute2) and bpftool. Commands run in a
network namespace when one is named (`ip netns exec`-style through `-n`/`netns`).
Use:

    dropper = SegmentDropper(obj, dev="veth1", netns="ns-receiver", direction="ingress")
    dropper.attach(dport=5201, drops=[11])
    ... traffic ...
    stats = dropper.stats()   # originals, retransmissions, dropped segments
    dropper.detach()
"""
from __future__ import annotations

import json
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

# The native programs this module starts (its tc program): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("bpf",)

MAX_DROPS = 32
# struct segment_dropper: dport, n_drops, drops[32], started, isn, high_end, originals,
# retransmissions, dropped, dropped_seq[32] (all u32, host order).
_LAYOUT = struct.Struct(f"=II{MAX_DROPS}IIIIIII{MAX_DROPS}I")


class DropperError(RuntimeError):
    """The dropper could not be attached, configured or read; the message says why."""


@dataclass(frozen=True)
class DropperStats:
    originals: int  # original data segments seen (dropped ones included)
    retransmissions: int  # data segments below the highest sequence seen
    dropped: int
    dropped_rel_seq: tuple[int, ...]  # sequence numbers of the drops, relative to the first byte


class SegmentDropper:
    def __init__(self, obj: Path, dev: str, netns: str | None = None,
                 direction: str = "ingress") -> None:
        if direction not in ("ingress", "egress"):
            raise ValueError(f"direction must be ingress or egress, not {direction!r}")
        self.obj = obj
        self.dev = dev
        self.netns = netns
        self.direction = direction
        self.map_id: int | None = None
        self._qdisc_added = False

    # ----------------------------------------------------------- public

    def attach(self, dport: int, drops: Sequence[int]) -> None:
        """Attach the filter and set which original segments (1-based) to drop."""
        if not self.obj.is_file():
            raise DropperError(f"{self.obj} is not built: build native/ "
                               "(cmake -S native -B build/native && make -C build/native)")
        if len(drops) > MAX_DROPS or any(n < 1 for n in drops):
            raise DropperError(f"drops must be at most {MAX_DROPS} segment numbers >= 1, "
                               f"not {list(drops)}")
        if not 0 < dport < 65536:
            raise DropperError(f"bad port {dport}")
        self._tc("qdisc", "add", "dev", self.dev, "clsact")
        self._qdisc_added = True
        self._tc("filter", "add", "dev", self.dev, self.direction, "bpf", "direct-action",
                 "obj", str(self.obj), "sec", "tc")
        self.map_id = self._bss_map_id()
        values = [0] * (2 + MAX_DROPS + 6 + MAX_DROPS)
        values[0], values[1] = dport, len(drops)
        values[2:2 + len(drops)] = list(drops)
        self._update(_LAYOUT.pack(*values))

    def stats(self) -> DropperStats:
        if self.map_id is None:
            raise DropperError("attach() first")
        shown = _run(["bpftool", "-j", "map", "dump", "id", str(self.map_id)])
        try:
            raw = bytes(int(b, 16) for b in json.loads(shown)[0]["value"])
        except (ValueError, KeyError, IndexError) as e:
            raise DropperError(f"cannot read the dropper's map {self.map_id}: {e}") from e
        fields = _LAYOUT.unpack(raw[:_LAYOUT.size])
        rest = fields[2 + MAX_DROPS:]
        _started, _isn, _high, originals, retrans, dropped = rest[:6]
        seqs = rest[6:6 + min(dropped, MAX_DROPS)]
        return DropperStats(originals, retrans, dropped, tuple(seqs))

    def detach(self) -> None:
        """Remove the clsact qdisc (and with it the filter); idempotent."""
        if self._qdisc_added:
            self._tc("qdisc", "del", "dev", self.dev, "clsact", check=False)
            self._qdisc_added = False

    # -------------------------------------------------------- internals

    def _tc(self, *args: str, check: bool = True) -> str:
        argv = ["tc"] + (["-n", self.netns] if self.netns else []) + list(args)
        return _run(argv, check=check)

    def _bss_map_id(self) -> int:
        shown = self._tc("-j", "filter", "show", "dev", self.dev, self.direction)
        prog_ids = [f["options"]["prog"]["id"] for f in json.loads(shown or "[]")
                    if "prog" in f.get("options", {})]
        if len(prog_ids) != 1:
            raise DropperError(f"expected one BPF filter on {self.dev} {self.direction}, found "
                               f"{prog_ids}: {shown}")
        prog = json.loads(_run(["bpftool", "-j", "prog", "show", "id", str(prog_ids[0])]))
        for map_id in prog.get("map_ids", []):
            info = json.loads(_run(["bpftool", "-j", "map", "show", "id", str(map_id)]))
            if info.get("name", "").endswith(".bss"):
                return int(map_id)
        raise DropperError(f"program {prog_ids[0]} has no .bss map: {prog}")

    def _update(self, value: bytes) -> None:
        _run(["bpftool", "map", "update", "id", str(self.map_id), "key", "hex", "00", "00",
              "00", "00", "value", "hex"] + [f"{b:02x}" for b in value])


def _run(argv: list[str], check: bool = True) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except FileNotFoundError as e:
        raise DropperError(f"{argv[0]} is not installed") from e
    if check and done.returncode != 0:
        raise DropperError(f"`{' '.join(argv[:8])}...` failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()}")
    return done.stdout
