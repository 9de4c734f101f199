"""Which data segments of one TCP flow to drop: plain Python, no OpenFlow.

A plan names ORIGINAL data segments by number, counted from 1 = the first data
segment after the handshake. A segment is original when its sequence range
reaches beyond the highest byte the sender had sent before it; anything else
(a retransmission, a window probe of old data) is never counted and never
dropped. Patterns, with IW10:

    light  1-5            the first five data segments after the handshake
    heavy  1-4 and 6-8    within the first window of ten
    base   11-14          the first window delivered, then the first 4 of the second
    a list "1,2,3" or ranges "1-4,6-8"

`FlowTracker` applies a plan to the segments of the sender's direction, one
call per segment, and says what to do with each.
"""
from __future__ import annotations

from dataclasses import dataclass, field

PATTERNS: dict[str, tuple[int, ...]] = {
    "light": (1, 2, 3, 4, 5),
    "heavy": (1, 2, 3, 4, 6, 7, 8),
    "base": (11, 12, 13, 14),
}
# No plan names a segment beyond this: a typo such as "1,2,3000" fails at once.
MAX_SEGMENT = 10_000
SEQ_MOD = 1 << 32


class DropPlanError(ValueError):
    """A pattern or list that names no valid plan. Not a core.errors.UsageError: this module
    also runs inside POX, whose own `core` module shadows the project's; the experiment's
    option turns it into the usage error (exit 2) before any run."""


@dataclass(frozen=True)
class DropPlan:
    """A named set of original segment numbers (1-based) to drop."""

    name: str
    segments: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> "DropPlan":
        """A pattern name (light, heavy, base) or a list such as "1,2,3" or "1-4,6-8"."""
        text = text.strip()
        if text in PATTERNS:
            return cls(text, PATTERNS[text])
        if not text or not all(c.isdigit() or c in ",-" for c in text):
            raise DropPlanError(
                f"unknown drop pattern {text!r}: use one of {', '.join(PATTERNS)} or a list "
                "of original segment numbers such as 1,2,3 or 1-4,6-8")
        numbers: set[int] = set()
        for part in text.split(","):
            low, dash, high = part.partition("-")
            if not low.isdigit() or (dash and not high.isdigit()):
                raise DropPlanError(f"bad drop list {text!r}: {part!r} is not N or N-M")
            first, last = int(low), int(high) if dash else int(low)
            if first < 1 or last < first or last > MAX_SEGMENT:
                raise DropPlanError(f"bad drop list {text!r}: {part!r} must be 1 <= N <= M "
                                    f"<= {MAX_SEGMENT} (segments count from 1)")
            numbers.update(range(first, last + 1))
        segments = tuple(sorted(numbers))
        return cls(_canonical(segments), segments)

    @property
    def last(self) -> int:
        return self.segments[-1]

    def describe(self) -> str:
        ranges = _canonical(self.segments)
        return ranges if self.name == ranges else f"{self.name} ({ranges})"

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "segments": list(self.segments)}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "DropPlan":
        raw = data["segments"]
        if not isinstance(raw, (list, tuple)):
            raise DropPlanError(f"bad plan segments {raw!r}")
        segments = tuple(int(s) for s in raw)
        if not segments or list(segments) != sorted(set(segments)) or segments[0] < 1:
            raise DropPlanError(f"bad plan segments {segments!r}")
        return cls(str(data["name"]), segments)


def _canonical(segments: tuple[int, ...]) -> str:
    """1,2,3,4,6,7,8 -> "1-4,6-8"."""
    parts: list[str] = []
    start = prev = segments[0]
    for n in segments[1:] + (-1,):
        if n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    return ",".join(parts)


def seq_after(a: int, b: int) -> bool:
    """a is later than b in 32-bit sequence space."""
    return 0 < (a - b) % SEQ_MOD < SEQ_MOD // 2


@dataclass(frozen=True)
class Decision:
    drop: bool
    segment: int | None        # its original segment number; None if not an original
    original: bool
    relative_seq: int | None   # sequence number relative to the initial one (SYN = 0)


@dataclass
class FlowTracker:
    """Counts the original data segments of one flow and decides their fate."""

    plan: DropPlan
    isn: int | None = None
    highest_end: int | None = None          # absolute sequence number, 1 past the highest byte
    originals: int = 0
    dropped: list[int] = field(default_factory=list)
    fin_seen: bool = False

    @property
    def handshake_seen(self) -> bool:
        return self.isn is not None

    @property
    def done(self) -> bool:
        """Every planned segment has gone by (dropped): nothing is left to decide."""
        return self.originals >= self.plan.last

    def on_segment(self, seq: int, payload_len: int, syn: bool = False,
                   fin: bool = False) -> Decision:
        """One segment of the sender's direction, in the order the switch saw them."""
        if syn:
            if self.isn is None:
                self.isn = seq
                self.highest_end = (seq + 1) % SEQ_MOD
            return Decision(False, None, False, 0 if self.isn == seq else None)
        if fin:
            self.fin_seen = True
        if self.isn is None or self.highest_end is None:
            # Joined after the handshake: the numbering would be wrong, so nothing is counted.
            return Decision(False, None, False, None)
        relative = (seq - self.isn) % SEQ_MOD
        if payload_len <= 0:
            return Decision(False, None, False, relative)
        end = (seq + payload_len) % SEQ_MOD
        if not seq_after(end, self.highest_end):
            return Decision(False, None, False, relative)  # a retransmission
        self.highest_end = end
        self.originals += 1
        drop = self.originals in self.plan.segments
        if drop:
            self.dropped.append(self.originals)
        return Decision(drop, self.originals, True, relative)

    def missing(self) -> list[int]:
        """Planned segments not (yet) dropped."""
        return [n for n in self.plan.segments if n not in self.dropped]
