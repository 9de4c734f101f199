"""Which shape of `tcp_congestion_ops.cong_control` the running kernel has, read from its BTF.

Linux 6.10 changed the hook netrepro's eBPF recoveries implement (native/bpf/
recovery.bpf.c) from `cong_control(struct sock *, const struct rate_sample *)`
to `cong_control(struct sock *, u32 ack, int flag, const struct rate_sample *)`.
A struct_ops program of the other shape reads its arguments at the wrong
places and the verifier refuses it, so the recoveries are built once per shape
and the kernel's own type description decides which object is registered;
the kernel's version number never does (distributions backport, and a
version says nothing about a custom kernel).

The description is `bpftool btf dump file /sys/kernel/btf/vmlinux format raw`:
one line per type (`[14441] STRUCT 'tcp_congestion_ops' size=192 vlen=18`),
its members or parameters on the tab-indented lines below it. The member
`cong_control` points (PTR) at a FUNC_PROTO whose lines are its parameters;
each parameter's type is followed through PTR, CONST, TYPEDEF, ... to a
struct or an integer. The raw form is read rather than `format c` because it
states the parameters as data (a count, type ids) instead of C text, whose
spelling (typedef names, nested function pointers, attributes) a parser would
have to guess at.

Whether BPF may write `tp->snd_cwnd_stamp` is not in BTF at all: it is a case
of a switch in net/ipv4/bpf_tcp_ca.c. It became writable in Linux 6.10 in the
same patch series that gave cong_control its 4 arguments, so it is tied to the
shape here. Nothing depends on it being right: the 2-argument objects never
write it, and a 4-argument kernel that refused the write would refuse the
object at load with the verifier's message naming the field.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# The native programs this module starts (the recoveries' eBPF objects it names): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("bpf",)

STRUCT_NAME = "tcp_congestion_ops"
MEMBER_NAME = "cong_control"
# libbpf registers a struct_ops map through this kernel type; no such type, no struct_ops.
STRUCT_OPS_VALUE = "bpf_struct_ops_tcp_congestion_ops"
_MODIFIERS = ("CONST", "VOLATILE", "RESTRICT", "TYPEDEF", "TYPE_TAG")
_HEADER = re.compile(r"^\[(\d+)\] (\w+) '([^']*)'(.*)$")
_MEMBER = re.compile(r"^\t'([^']*)'(.*)$")
_ATTR = re.compile(r"(\w+)=(\S+)")


class BtfShapeError(RuntimeError):
    """The kernel's BTF cannot be read, or does not describe a cong_control netrepro knows."""


@dataclass(frozen=True)
class CongControlShape:
    args: int  # 2 or 4
    signature: str  # as found, e.g. "cong_control(struct sock *, u32, int, ...)"
    cwnd_stamp_writable: bool  # BPF may write snd_cwnd_stamp (tied to the shape: see above)

    @property
    def label(self) -> str:
        """One line for people: `cong_control with 4 arguments (Linux >= 6.10 shape)`."""
        since = "Linux >= 6.10" if self.args == 4 else "Linux < 6.10"
        return f"cong_control with {self.args} arguments ({since} shape)"

    @property
    def object_suffix(self) -> str:
        """What the build appends to a recovery's name: rh_cubic<suffix>.bpf.o."""
        return f".args{self.args}"

    def facts(self) -> dict[str, object]:
        """What a run records about the shape that served it."""
        return {"cong_control_args": self.args, "cong_control_signature": self.signature,
                "cwnd_stamp_written": self.cwnd_stamp_writable}


@dataclass(frozen=True)
class KernelCcBtf:
    """What the kernel's BTF says about writing TCP congestion controls in eBPF."""

    struct_ops: bool  # the kernel can register a tcp_congestion_ops from BPF
    shape: CongControlShape


@dataclass(frozen=True)
class _Type:
    kind: str
    name: str
    attrs: dict[str, str]
    lines: tuple[tuple[str, dict[str, str]], ...]  # members, parameters, enum values


class RawBtf:
    """The parts of a `bpftool btf dump ... format raw` text that are asked for, parsed lazily."""

    def __init__(self, text: str) -> None:
        self.text = text if text.startswith("\n") else "\n" + text

    def find(self, kind: str, name: str) -> list[int]:
        """The ids of the types of this kind and name."""
        needle, ids, at = f"] {kind} '{name}'", [], 0
        while (at := self.text.find(needle, at + 1)) >= 0:
            line_start = self.text.rfind("\n", 0, at) + 1
            line_end = self.text.find("\n", at)
            header = _HEADER.match(self.text[line_start:line_end if line_end >= 0 else None])
            if header is not None and (header.group(2), header.group(3)) == (kind, name):
                ids.append(int(header.group(1)))
        return ids

    def get(self, type_id: int) -> _Type:
        start = self.text.find(f"\n[{type_id}] ")
        if start < 0:
            raise BtfShapeError(f"the BTF dump has no type [{type_id}]")
        end = self.text.find("\n[", start + 1)  # the next type's line
        lines = self.text[start + 1:end if end >= 0 else len(self.text)].split("\n")
        header = _HEADER.match(lines[0])
        if header is None:
            raise BtfShapeError(f"unreadable BTF line: {lines[0]!r}")
        body = []
        for line in lines[1:]:
            member = _MEMBER.match(line)
            if member is None:
                break
            body.append((member.group(1), dict(_ATTR.findall(member.group(2)))))
        return _Type(header.group(2), header.group(3), dict(_ATTR.findall(header.group(4))),
                     tuple(body))

    def describe(self, type_id: int, depth: int = 0) -> str:
        """A parameter's type in C words: `struct sock *`, `u32`, `const struct rate_sample *`."""
        if type_id == 0:
            return "void"
        if depth > 20:
            raise BtfShapeError(f"BTF type [{type_id}] refers to itself")
        t = self.get(type_id)
        if t.kind == "PTR":
            return self.describe(int(t.attrs["type_id"]), depth + 1) + " *"
        if t.kind in ("CONST", "VOLATILE", "RESTRICT"):
            return f"{t.kind.lower()} " + self.describe(int(t.attrs["type_id"]), depth + 1)
        if t.kind in ("STRUCT", "UNION", "ENUM", "ENUM64"):
            return f"{t.kind.lower().rstrip('64')} {t.name}"
        if t.kind == "FUNC_PROTO":
            return "function"
        return t.name  # INT, TYPEDEF, FLOAT: their own names

    def core(self, type_id: int, depth: int = 0) -> tuple[str, str]:
        """(kind, detail) with modifiers and typedefs stripped: ("PTR", "STRUCT sock"),
        ("INT", "4") for a 4-byte integer."""
        if depth > 20:
            raise BtfShapeError(f"BTF type [{type_id}] refers to itself")
        if type_id == 0:
            return ("VOID", "")
        t = self.get(type_id)
        if t.kind in _MODIFIERS:
            return self.core(int(t.attrs["type_id"]), depth + 1)
        if t.kind == "PTR":
            target_kind, target = self.core(int(t.attrs["type_id"]), depth + 1)
            return ("PTR", f"{target_kind} {target}".strip())
        if t.kind == "INT":
            return ("INT", t.attrs.get("size", "?"))
        return (t.kind, t.name)


# The known shapes, each parameter as RawBtf.core() reduces it.
_SOCK = ("PTR", "STRUCT sock")
_RATE_SAMPLE = ("PTR", "STRUCT rate_sample")
_SHAPES = {
    2: (_SOCK, _RATE_SAMPLE),
    4: (_SOCK, ("INT", "4"), ("INT", "4"), _RATE_SAMPLE),
}


def parse_cong_control_shape(raw_dump: str) -> CongControlShape:
    """The shape of tcp_congestion_ops.cong_control in a raw BTF dump.

    Raises BtfShapeError naming what was found when it is neither known shape.
    """
    btf = RawBtf(raw_dump)
    ids = btf.find("STRUCT", STRUCT_NAME)
    if not ids:
        raise BtfShapeError(f"the kernel's BTF has no struct {STRUCT_NAME}: this kernel cannot "
                            "take a TCP congestion control from eBPF")
    found = {_shape_of_struct(btf, type_id) for type_id in ids}
    if len(found) > 1:
        raise BtfShapeError(f"the kernel's BTF describes struct {STRUCT_NAME} {len(ids)} times, "
                            f"with different {MEMBER_NAME} members: {sorted(found)}")
    params, signature = found.pop()
    for args, shape in _SHAPES.items():
        if params == shape:
            return CongControlShape(args, signature, cwnd_stamp_writable=args == 4)
    raise BtfShapeError(
        f"this kernel's {STRUCT_NAME}.{signature} has {len(params)} argument(s) that match "
        "neither shape netrepro's eBPF recoveries are built for: cong_control(struct sock *, "
        "const struct rate_sample *) (Linux < 6.10) or cong_control(struct sock *, u32, int, "
        "const struct rate_sample *) (Linux >= 6.10)")


def parse_kernel_cc_btf(raw_dump: str) -> KernelCcBtf:
    """struct_ops support and the cong_control shape, from one raw BTF dump."""
    shape = parse_cong_control_shape(raw_dump)
    return KernelCcBtf(bool(RawBtf(raw_dump).find("STRUCT", STRUCT_OPS_VALUE)), shape)


def _shape_of_struct(btf: RawBtf, struct_id: int
                     ) -> tuple[tuple[tuple[str, str], ...], str]:
    struct = btf.get(struct_id)
    members = {name: attrs for name, attrs in struct.lines}
    if MEMBER_NAME not in members:
        raise BtfShapeError(f"struct {STRUCT_NAME} in the kernel's BTF has no member "
                            f"{MEMBER_NAME} (members: {', '.join(members)})")
    member_type = type_id = int(members[MEMBER_NAME]["type_id"])
    pointer = btf.get(type_id)
    while pointer.kind in _MODIFIERS:
        type_id = int(pointer.attrs["type_id"])
        pointer = btf.get(type_id)
    proto_id = int(pointer.attrs.get("type_id", "0")) if pointer.kind == "PTR" else 0
    proto = btf.get(proto_id) if proto_id else None
    while proto is not None and proto.kind in _MODIFIERS:
        proto_id = int(proto.attrs["type_id"])
        proto = btf.get(proto_id)
    if proto is None or proto.kind != "FUNC_PROTO":
        raise BtfShapeError(f"{STRUCT_NAME}.{MEMBER_NAME} is not a function pointer in the "
                            f"kernel's BTF (type [{member_type}] is "
                            f"{btf.describe(member_type)})")
    if int(proto.attrs.get("vlen", len(proto.lines))) != len(proto.lines):
        raise BtfShapeError(f"FUNC_PROTO [{proto_id}] says vlen={proto.attrs.get('vlen')} but "
                            f"lists {len(proto.lines)} parameter(s)")
    param_ids = [int(attrs["type_id"]) for _, attrs in proto.lines]
    signature = (f"{MEMBER_NAME}("
                 + ", ".join(btf.describe(p) for p in param_ids) + ")")
    return tuple(btf.core(p) for p in param_ids), signature
