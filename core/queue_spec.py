"""Queue specifications as the CLI and the emulator take them.

    infinite | droptail:packets=N | droptail:bytes=N | droptail:packets=N,bytes=M
    | codel | codel:target=MS | codel:interval=MS | codel:target=MS,interval=MS
    | ecn:k=K,packets=N | untrusted:bytes=N

CoDel's defaults are target 5 ms and interval 100 ms (as Cellsim's
used); both are whole milliseconds and the target must be below the interval.

`ecn:k=K,packets=N` is threshold marking at a switch port: drop-tail at N packets, and CE set on
ECT(0)/ECT(1) IPv4 packets arriving while more than K packets wait (the backlog counted as
droptail's: the arriving packet and one in transit not included). Both keys are required (no
defaults: K depends on the link, N on the experiment), 1 <= K <= N - 2 so that some backlog
above K fits. See native/link/README.md, "ECN marking".

`untrusted:bytes=N` is the queue for a sender whose code is not ours (submitted
controllers): infinite for as long as it holds at most N bytes, so for every sender that
stays below N it is the infinite queue; while it holds N the emulator does not read that
sender at all (what overflows the socket's buffer meanwhile the kernel drops, counted as
`socket_drops`), so a flood costs the emulator the link's rate of work and at most N bytes.
See native/link/README.md, "An untrusted sender's queue".

The emulator (native/link/queue_spec.cc) accepts exactly these forms.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.errors import UsageError

CODEL_TARGET_MS = 5
CODEL_INTERVAL_MS = 100

FORMS = ("use infinite, droptail:packets=N, droptail:bytes=N, droptail:packets=N,bytes=M, "
         "codel, codel:target=MS,interval=MS, ecn:k=K,packets=N or untrusted:bytes=N")


class QueueSpecError(UsageError):
    pass


@dataclass(frozen=True)
class QueueSpec:
    kind: str
    packets: int | None = None
    bytes: int | None = None
    target_ms: int | None = None  # CoDel only
    interval_ms: int | None = None  # CoDel only
    mark_threshold: int | None = None  # ECN only: K, in packets

    @property
    def marks_ecn(self) -> bool:
        return self.kind == "ecn"

    def describe(self) -> str:
        if self.kind == "infinite":
            return "infinite queue"
        if self.kind == "codel":
            return f"CoDel, target {self.target_ms} ms, interval {self.interval_ms} ms"
        if self.kind == "untrusted":
            return f"untrusted sender's queue, {self.bytes} bytes, its sender unread while full"
        if self.kind == "ecn":
            return (f"ECN marking above {self.mark_threshold} packets, droptail at "
                    f"{self.packets} packets")
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
    if kind not in ("droptail", "codel", "ecn", "untrusted") or not rest:
        raise QueueSpecError(f"bad queue {text!r}: {FORMS}")
    if kind == "untrusted":
        return QueueSpec("untrusted", bytes=_keyed_integers(text, rest, ("bytes",))["bytes"])
    if kind == "ecn":
        return _ecn(text, _keyed_integers(text, rest, ("k", "packets")))
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


def _ecn(text: str, values: dict[str, int]) -> QueueSpec:
    if "k" not in values or "packets" not in values:
        raise QueueSpecError(f"bad queue {text!r}: ECN marking needs both k=K (the marking "
                             "threshold) and packets=N (the buffer), as in ecn:k=20,packets=425")
    k, packets = values["k"], values["packets"]
    if k + 2 > packets:
        raise QueueSpecError(f"bad queue {text!r}: the marking threshold k={k} must be at most "
                             f"packets - 2 ({packets} - 2), or every packet above k would be "
                             "dropped, never marked")
    return QueueSpec("ecn", packets=packets, mark_threshold=k)
