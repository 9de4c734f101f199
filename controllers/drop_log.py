"""The controller's event log (JSON lines) read back, and checked against its plan.

Events, each with "t" (Unix time) and "event":

    start       implementation, plan, sender_port, receiver_port, tcp_port
    connected   dpid                      the switch connected
    ready       -                         initial flows installed (after a barrier)
    flow        src, sport, dst, dport, isn   the flow's SYN
    segment     segment, seq, rel_seq, len, original, fin, after_direct   forwarded
    drop        the same fields           dropped by the plan
    plan_done   originals, dropped
    quiet       gap_s                     the flow paused: switch-over begins
    direct      -                         direct flow installed (after a barrier)
    flow_end    originals, plan_done, missing   the flow's first FIN seen
    disconnected dpid
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controllers.drop_plan import DropPlan


@dataclass
class DropLog:
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> "DropLog":
        events = []
        if path.exists():
            for line in path.read_text().splitlines():
                line = line.strip()
                if line:
                    try:
                        events.append(json.loads(line))
                    except ValueError:
                        break  # a line cut short by a killed controller ends the log
        return cls(events)

    def of(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == name]

    def first(self, name: str) -> dict[str, Any] | None:
        found = self.of(name)
        return found[0] if found else None

    @property
    def implementation(self) -> str | None:
        start = self.first("start")
        return str(start["implementation"]) if start else None

    @property
    def ready(self) -> bool:
        return self.first("ready") is not None

    @property
    def drops(self) -> list[dict[str, Any]]:
        return self.of("drop")

    @property
    def dropped_segments(self) -> list[int]:
        return [int(e["segment"]) for e in self.drops]

    @property
    def direct_time(self) -> float | None:
        direct = self.first("direct")
        return float(direct["t"]) if direct else None

    @property
    def late_segments(self) -> list[dict[str, Any]]:
        """The flow's segments forwarded by the controller once the direct flow was sent."""
        return [e for e in self.of("segment") if e.get("after_direct")]

    def summary(self) -> dict[str, Any]:
        flow = self.first("flow")
        return {"implementation": self.implementation, "connected": bool(self.of("connected")),
                "ready": self.ready, "flow": flow,
                "dropped": [{k: e.get(k) for k in ("segment", "seq", "rel_seq", "len", "t")}
                            for e in self.drops],
                "plan_done": self.first("plan_done") is not None,
                "direct_time": self.direct_time,
                "late_segments": len(self.late_segments),
                "disconnected": bool(self.of("disconnected"))}


def plan_problems(plan: DropPlan, log: DropLog) -> list[str]:
    """Why the controller's own record says the plan was not carried out (empty: it was)."""
    problems: list[str] = []
    if log.first("start") is None:
        return ["the controller never started (its log is empty)"]
    if not log.of("connected"):
        return ["the switch never connected to the controller"]
    flow = log.first("flow")
    if flow is None:
        return [f"the controller never saw the flow's handshake (TCP to port "
                f"{log.first('start')['tcp_port']} from the sender)"]  # type: ignore[index]
    dropped = log.dropped_segments
    if dropped != list(plan.segments):
        end = log.first("flow_end")
        why = ""
        if end is not None and not end.get("plan_done"):
            why = (f": the flow ended after {end['originals']} original segments, the plan "
                   f"names up to {plan.last}")
        problems.append(f"dropped segments {dropped or 'none'}, planned {list(plan.segments)}"
                        + why)
    elif log.first("plan_done") is None:
        problems.append("the plan's drops were logged but never its completion")
    elif log.direct_time is None:
        problems.append("the direct flow was never installed after the plan")
    late = len(log.late_segments)
    if late:
        problems.append(f"{late} packets of the flow reached the controller after the direct "
                        "flow was sent: they may have been overtaken (reordering)")
    return problems
