"""Queue specifications as the CLI and the emulator take them.

    infinite | droptail:packets=N | droptail:bytes=N | droptail:packets=N,bytes=M
"""
from __future__ import annotations

from dataclasses import dataclass


class QueueSpecError(ValueError):
    pass


@dataclass(frozen=True)
class QueueSpec:
    kind: str
    packets: int | None = None
    bytes: int | None = None

    def describe(self) -> str:
        if self.kind == "infinite":
            return "infinite queue"
        limits = [f"{self.packets} packets" if self.packets else "",
                  f"{self.bytes} bytes" if self.bytes else ""]
        return "droptail, " + " and ".join(x for x in limits if x)


def parse_queue(text: str) -> QueueSpec:
    if text == "infinite":
        return QueueSpec("infinite")
    kind, _, rest = text.partition(":")
    if kind != "droptail" or not rest:
        raise QueueSpecError(f"bad queue {text!r}: use infinite, droptail:packets=N, "
                             "droptail:bytes=N or droptail:packets=N,bytes=M")
    limits: dict[str, int] = {}
    for part in rest.split(","):
        key, _, value = part.partition("=")
        if key not in ("packets", "bytes") or key in limits:
            raise QueueSpecError(f"bad queue {text!r}: unknown or repeated limit {key!r}")
        if not value.isdigit() or int(value) < 1:
            raise QueueSpecError(f"bad queue {text!r}: {key} must be a positive integer")
        limits[key] = int(value)
    return QueueSpec("droptail", packets=limits.get("packets"), bytes=limits.get("bytes"))
