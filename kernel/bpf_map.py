"""Read a BPF map of the running kernel by its id: the bpf(2) system call, read only.

bpftool starts a process per read, too slow for sampling a map many times a second
during a run; this does the three commands a reader needs (open by id, walk the keys,
look one up) through ctypes. Needs root (CAP_SYS_ADMIN or CAP_BPF). Maps are found by
name with `bpftool -j map show` (`find_maps`).
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess
from dataclasses import dataclass
from typing import Iterator

# bpf(2) command numbers (include/uapi/linux/bpf.h)
_BPF_MAP_LOOKUP_ELEM = 1
_BPF_MAP_GET_NEXT_KEY = 4
_BPF_MAP_GET_FD_BY_ID = 14
_ATTR_SIZE = 128  # more than the commands here read; the kernel wants the rest zeroed
_SYS_BPF = {"x86_64": 321, "aarch64": 280}


class BpfMapError(RuntimeError):
    """A map could not be found, opened or read (the message says which and why)."""


@dataclass(frozen=True)
class MapInfo:
    map_id: int
    name: str
    kind: str  # bpftool's "type", e.g. "lru_hash"
    key_size: int
    value_size: int


def find_maps(name: str) -> list[MapInfo]:
    """Every map of this name on the machine (bpftool truncates names to 15 characters)."""
    try:
        done = subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True,
                              timeout=30, check=False)
    except FileNotFoundError as e:
        raise BpfMapError("bpftool is not installed (Debian: apt-get install bpftool)") from e
    if done.returncode != 0:
        raise BpfMapError(f"`bpftool -j map show` failed (exit {done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()}")
    try:
        shown = json.loads(done.stdout or "[]")
    except ValueError as e:
        raise BpfMapError(f"`bpftool -j map show` printed no JSON: {e}") from e
    return [MapInfo(int(m["id"]), m["name"], m.get("type", ""), int(m.get("bytes_key", 0)),
                    int(m.get("bytes_value", 0)))
            for m in shown if m.get("name") == name[:15]]


class BpfMap:
    """One open map; close() (or a with-block) releases its file descriptor."""

    def __init__(self, info: MapInfo) -> None:
        self.info = info
        self._libc = ctypes.CDLL(None, use_errno=True)
        machine = platform.machine()
        if machine not in _SYS_BPF:
            raise BpfMapError(f"reading BPF maps is not implemented for {machine} "
                              f"(known: {', '.join(_SYS_BPF)})")
        self._nr = _SYS_BPF[machine]
        self._libc.syscall.restype = ctypes.c_long
        self.fd = -1
        attr = ctypes.create_string_buffer(_ATTR_SIZE)
        ctypes.memmove(attr, ctypes.byref(ctypes.c_uint32(info.map_id)), 4)
        try:
            self.fd = self._bpf(_BPF_MAP_GET_FD_BY_ID, attr, "open")
        except _NoEntry:
            raise BpfMapError(f"map {info.name} (id {info.map_id}) no longer exists") from None

    def __enter__(self) -> "BpfMap":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def lookup(self, key: bytes) -> bytes | None:
        """The value stored under `key`, None when there is none."""
        if len(key) != self.info.key_size:
            raise BpfMapError(f"map {self.info.name}: key of {len(key)} bytes, "
                              f"the map's are {self.info.key_size}")
        key_buf = ctypes.create_string_buffer(key, len(key))
        value = ctypes.create_string_buffer(self.info.value_size)
        if not self._key_command(_BPF_MAP_LOOKUP_ELEM, key_buf, value):
            return None
        return value.raw

    def keys(self) -> Iterator[bytes]:
        """Every key, in the map's order (entries may come and go meanwhile)."""
        size = self.info.key_size
        current: ctypes.Array[ctypes.c_char] | None = None
        for _ in range(1 << 20):  # bounded: a map cannot hold more than this here
            following = ctypes.create_string_buffer(size)
            if not self._key_command(_BPF_MAP_GET_NEXT_KEY, current, following):
                return
            yield following.raw
            current = following

    def _key_command(self, cmd: int, key: ctypes.Array[ctypes.c_char] | None,
                     out: ctypes.Array[ctypes.c_char]) -> bool:
        """LOOKUP_ELEM / GET_NEXT_KEY: False when the kernel says there is no such entry."""
        attr = ctypes.create_string_buffer(_ATTR_SIZE)
        fields = (ctypes.c_uint32 * 2)(self.fd, 0)
        ctypes.memmove(attr, fields, 8)
        pointers = (ctypes.c_uint64 * 2)(ctypes.addressof(key) if key is not None else 0,
                                         ctypes.addressof(out))
        ctypes.memmove(ctypes.addressof(attr) + 8, pointers, 16)
        try:
            self._bpf(cmd, attr, "read")
        except _NoEntry:
            return False
        return True

    def _bpf(self, cmd: int, attr: ctypes.Array[ctypes.c_char], what: str) -> int:
        result = self._libc.syscall(ctypes.c_long(self._nr), ctypes.c_long(cmd), attr,
                                    ctypes.c_long(_ATTR_SIZE))
        if result < 0:
            err = ctypes.get_errno()
            if err == 2:  # ENOENT: no such key, or no key after this one
                raise _NoEntry()
            raise BpfMapError(f"bpf() could not {what} map {self.info.name} "
                              f"(id {self.info.map_id}): {os.strerror(err)}")
        return int(result)


class _NoEntry(Exception):
    pass
