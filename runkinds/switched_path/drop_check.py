"""Were exactly the planned segments dropped? A verdict from the two captures and the drop log.

A switched-path run drops chosen *original* data segments (numbered 1, 2, ... in the
order the sender first sent them; runkinds/switched_path/tcp_pcap.py). Afterwards:

1. Every transmission the sender's capture shows is looked up at the
   receiver by its identity on the wire (sequence number, length, IP ID,
   TSval). Those missing there were lost on the path.
2. The lost originals must be exactly the planned numbers, and no
   retransmission may be lost (the plan never drops one; a lost
   retransmission means the path lost something by itself).
3. Each planned segment must have been retransmitted (a later transmission
   at the sender covering its first byte).
4. The controller's drop log, when there is one, must name the same numbers.

Anything else makes the run invalid, and the verdict says why: nothing was
dropped, something else was dropped, a planned segment got through, the flow
never sent a planned segment, a capture lost packets.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from runkinds.switched_path.tcp_pcap import DataSegment, Flow


@dataclass(frozen=True)
class DropVerdict:
    valid: bool
    reasons: tuple[str, ...]
    planned: tuple[int, ...]
    dropped: tuple[int, ...]  # original numbers lost between the two captures
    lost_retransmissions: int
    retransmitted: tuple[int, ...]  # planned numbers the sender retransmitted
    controller_log: tuple[int, ...] | None
    originals_sent: int
    detail: dict[str, Any] = field(default_factory=dict)

    def reason(self) -> str:
        return "; ".join(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["reason"] = self.reason()
        return d


def lost_transmissions(sender: Flow, receiver: Flow) -> list[DataSegment]:
    """The sender's transmissions that the receiver's capture never saw."""
    arrived = Counter(d.identity() for d in receiver.data)
    lost = []
    for d in sender.data:
        key = d.identity()
        if arrived[key] > 0:
            arrived[key] -= 1
        else:
            lost.append(d)
    return lost


def verify_drops(sender: Flow, receiver: Flow, planned: Sequence[int],
                 controller_log: Sequence[int] | None = None,
                 capture_drops: dict[str, int] | None = None) -> DropVerdict:
    """The verdict on one run (see the module's description)."""
    plan = tuple(sorted(set(planned)))
    reasons: list[str] = []
    originals = {d.original: d for d in sender.originals if d.original is not None}
    for name, count in sorted((capture_drops or {}).items()):
        if count:
            reasons.append(f"the {name} capture lost {count} packets (tcpdump's count): "
                           "the verdict cannot be trusted")
    if sender.isn is not None and receiver.isn is not None and sender.isn != receiver.isn:
        reasons.append("the two captures hold different connections (their SYNs differ)")
    lost = lost_transmissions(sender, receiver)
    dropped = tuple(sorted(d.original for d in lost if d.original is not None))
    lost_retx = [d for d in lost if d.retransmission]
    never_sent = [n for n in plan if n not in originals]
    if never_sent:
        reasons.append(f"the flow sent only {len(originals)} original segments; the plan "
                       f"names {_list(never_sent)}")
    if not dropped and not lost_retx:
        reasons.append("nothing was dropped")
    else:
        extra = [n for n in dropped if n not in plan]
        missed = [n for n in plan if n not in dropped and n in originals]
        if extra:
            reasons.append(f"segments {_list(extra)} were dropped but not planned")
        if missed:
            reasons.append(f"planned segments {_list(missed)} were not dropped")
        if lost_retx:
            reasons.append(f"{len(lost_retx)} retransmissions were lost (first at relative "
                           f"seq {lost_retx[0].seq}): the path dropped them, not the plan")
    retransmitted = tuple(n for n in plan if n in originals
                          and _retransmitted(sender, originals[n]))
    not_retx = [n for n in plan if n in originals and n in dropped and n not in retransmitted]
    if not_retx:
        reasons.append(f"dropped segments {_list(not_retx)} were never retransmitted")
    log = None if controller_log is None else tuple(sorted(controller_log))
    if log is not None and log != plan:
        reasons.append(f"the controller's log says it dropped {_list(log) or 'nothing'}, "
                       f"the plan was {_list(plan)}")
    if log is not None and log != dropped and dropped:
        reasons.append(f"the controller's log ({_list(log) or 'nothing'}) and the captures "
                       f"({_list(dropped)}) disagree")
    return DropVerdict(valid=not reasons, reasons=tuple(reasons), planned=plan, dropped=dropped,
                       lost_retransmissions=len(lost_retx), retransmitted=retransmitted,
                       controller_log=log, originals_sent=len(originals),
                       detail={"identity": "sequence number, length, IP ID, TSval"})


def _retransmitted(sender: Flow, original: DataSegment) -> bool:
    return any(d.retransmission and d.time_s >= original.time_s
               and d.seq <= original.seq < d.end for d in sender.data)


def _list(numbers: Sequence[int]) -> str:
    return ",".join(str(n) for n in numbers)
