"""Queue specifications as the CLI and the emulator take them.

    infinite | droptail:packets=N | droptail:bytes=N | droptail:packets=N,bytes=M
    | codel | codel:target=MS | codel:interval=MS | codel:target=MS,interval=MS

CoDel's defaults are target 5 ms and interval 100 ms (as the Sprout paper's Cellsim
used); both are whole milliseconds and the target must be below the interval. The
emulator (native/link/queue_spec.cc) accepts exactly these forms.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.errors import UsageError

CODEL_TARGET_MS = 5
CODEL_INTERVAL_MS = 100

FORMS = ("use infinite, droptail:packets=N, droptail:bytes=N, droptail:packets=N,bytes=M, "
         "codel or codel:target=MS,interval=MS")


class QueueSpecError(UsageError):
    pass


@dataclass(frozen=True)
class QueueSpec:
    kind: str
    packets: int | None = None
    bytes: int | None = None
    target_ms: int | None = None  # CoDel only
    interval_ms: int | None = None  # CoDel only

    def describe(self) -> str:
        if self.kind == "infinite":
            return "infinite queue"
        if self.kind == "codel":
            return f"CoDel, target {self.target_ms} ms, interval {self.interval_ms} ms"
        limits = [f"{self.packets} packets" if self.packets else "",
                  f"{self.bytes} bytes" if self.bytes else ""]
        return "droptail, " + " and ".join(x for x in limits if x)


def _keyed_integers(text: str, rest: str, keys: tuple[str, ...]) -> dict[str, int]:
    """`k=N,k2=M` with each key from `keys` at most once and N a positive integer."""
    values: dict[str, int] = {}
    for part in rest.split(","):
        key, _, value = part.partition("=")
        if key not in keys or key in values:
            raise QueueSpecError(f"bad queue {text!r}: unknown or repeated parameter {key!r}; "
                                 f"{FORMS}")
        if not value.isdigit() or int(value) < 1:
            raise QueueSpecError(f"bad queue {text!r}: {key} must be a positive integer")
        values[key] = int(value)
    return values


def parse_queue(text: str) -> QueueSpec:
    if text == "infinite":
        return QueueSpec("infinite")
    if text == "codel":
        return QueueSpec("codel", target_ms=CODEL_TARGET_MS, interval_ms=CODEL_INTERVAL_MS)
    kind, _, rest = text.partition(":")
    if kind not in ("droptail", "codel") or not rest:
        raise QueueSpecError(f"bad queue {text!r}: {FORMS}")
    if kind == "codel":
        values = _keyed_integers(text, rest, ("target", "interval"))
        target = values.get("target", CODEL_TARGET_MS)
        interval = values.get("interval", CODEL_INTERVAL_MS)
        if target >= interval:
            raise QueueSpecError(f"bad queue {text!r}: CoDel's target ({target} ms) must be "
                                 f"below its interval ({interval} ms)")
        return QueueSpec("codel", target_ms=target, interval_ms=interval)
    limits = _keyed_integers(text, rest, ("packets", "bytes"))
    return QueueSpec("droptail", packets=limits.get("packets"), bytes=limits.get("bytes"))
