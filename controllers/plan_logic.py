"""What every controller adapter does, free of any OpenFlow library.

The switch has two ports: the sender's (`sender_port`) and the one towards the
receiver (`receiver_port`). At connection the adapter installs, by the
numbers in `INITIAL_FLOWS`:

    priority 30  in_port=receiver            -> output sender    (ACKs never wait)
    priority 20  in_port=sender, ARP         -> output receiver
    priority 10  in_port=sender, IPv4        -> CONTROLLER       (full packet)

then a barrier; its reply means the switch is ready (logged as `ready`). Every
packet-in goes through `on_packet_in`: the flow's segments (TCP from the sender
to `tcp_port`, the first connection opened to it) go through the drop plan;
everything else is forwarded. The controller forwards packets in the order it
gets them, so the flow stays in order while it crosses the controller. When
the plan is done, the switch-over to the direct path waits for a pause in the
flow (`quiet_s` without one of its packets: the gap between two bursts of the
ACK clock), so that no packet of the flow is on its way to the controller when
the direct path opens. Then the adapter sends a barrier (every packet-out it
sent before is then on the wire), and on its reply installs the direct flow

    priority 100 in_port=sender -> output receiver

followed by another barrier, whose reply is logged as `direct`. The flow's
packets that still reach the controller once the direct flow was sent are
forwarded and marked (`after_direct` on their segment events): such a packet
may have been overtaken by one on the direct path.

Events go to `log_path` as JSON lines (see controllers/drop_log.py).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from controllers.drop_plan import DropPlan, FlowTracker
from controllers.frames import TcpSegment, parse_tcp

CONFIG_ENV = "NETREPRO_CONTROLLER_CONFIG"
PRIORITY_REVERSE = 30
PRIORITY_ARP = 20
PRIORITY_TO_CONTROLLER = 10
PRIORITY_DIRECT = 100


@dataclass(frozen=True)
class ControllerConfig:
    plan: DropPlan
    sender_port: int
    receiver_port: int
    tcp_port: int
    log_path: Path
    quiet_s: float = 0.005

    def to_dict(self) -> dict[str, Any]:
        return {"plan": self.plan.to_dict(), "sender_port": self.sender_port,
                "receiver_port": self.receiver_port, "tcp_port": self.tcp_port,
                "log_path": str(self.log_path), "quiet_s": self.quiet_s}

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def read(cls, path: Path) -> "ControllerConfig":
        data = json.loads(Path(path).read_text())
        return cls(DropPlan.from_dict(data["plan"]), int(data["sender_port"]),
                   int(data["receiver_port"]), int(data["tcp_port"]), Path(data["log_path"]),
                   float(data.get("quiet_s", 0.005)))


@dataclass(frozen=True)
class PacketAction:
    """Forward the packet-in out of `out_port`, or drop it (out_port None)."""

    out_port: int | None
    check_after: float | None = None   # call on_timer() after this many seconds


class PlanController:
    """The adapters' common state: the plan, the flow, the finish sequence, the event log."""

    def __init__(self, config: ControllerConfig, implementation: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.tracker = FlowTracker(config.plan)
        self.flow: tuple[str, int, str, int] | None = None
        self.clock = clock
        # planning -> quieting (plan done) -> flushing -> installing -> direct
        self.finish_state = "planning"
        self.last_flow_packet = 0.0
        self.late_packet_ins = 0
        self._flow_end_logged = False
        self._log: TextIO = open(config.log_path, "a", buffering=1)
        self.log("start", implementation=implementation, plan=config.plan.to_dict(),
                 sender_port=config.sender_port, receiver_port=config.receiver_port,
                 tcp_port=config.tcp_port)

    def log(self, event: str, **fields: Any) -> None:
        self._log.write(json.dumps({"t": self.clock(), "event": event, **fields}) + "\n")

    def close(self) -> None:
        self._log.close()

    def on_connect(self, dpid: int) -> None:
        self.log("connected", dpid=f"{dpid:016x}")

    def on_ready(self) -> None:
        self.log("ready")

    def other_port(self, in_port: int) -> int | None:
        if in_port == self.config.sender_port:
            return self.config.receiver_port
        if in_port == self.config.receiver_port:
            return self.config.sender_port
        return None

    def _is_flow(self, seg: TcpSegment) -> bool:
        if self.flow is None:
            if seg.dport == self.config.tcp_port and seg.syn and not seg.has_ack:
                self.flow = (seg.src, seg.sport, seg.dst, seg.dport)
                self.log("flow", src=seg.src, sport=seg.sport, dst=seg.dst, dport=seg.dport,
                         isn=seg.seq)
                return True
            return False
        return (seg.src, seg.sport, seg.dst, seg.dport) == self.flow

    def on_packet_in(self, in_port: int, frame: bytes) -> PacketAction:
        out = self.other_port(in_port)
        if in_port != self.config.sender_port or out is None:
            return PacketAction(out)
        seg = parse_tcp(frame)
        if seg is None or not self._is_flow(seg):
            return PacketAction(out)
        was_done = self.tracker.done
        self.last_flow_packet = self.clock()
        decision = self.tracker.on_segment(seg.seq, seg.payload_len, syn=seg.syn, fin=seg.fin)
        # Sent on after the direct flow was (being) installed: it may have been overtaken.
        after_direct = self.finish_state in ("installing", "direct")
        if after_direct:
            self.late_packet_ins += 1
        if seg.payload_len > 0 or seg.fin:
            self.log("drop" if decision.drop else "segment", segment=decision.segment,
                     seq=seg.seq, rel_seq=decision.relative_seq, len=seg.payload_len,
                     original=decision.original, fin=seg.fin, after_direct=after_direct)
        if seg.fin and not self._flow_end_logged:
            self._flow_end_logged = True
            self.log("flow_end", originals=self.tracker.originals,
                     plan_done=self.tracker.done, missing=self.tracker.missing())
        if self.tracker.done and not was_done and self.finish_state == "planning":
            self.finish_state = "quieting"
            self.log("plan_done", originals=self.tracker.originals,
                     dropped=self.tracker.dropped)
        check = self.config.quiet_s if self.finish_state == "quieting" else None
        return PacketAction(None if decision.drop else out, check_after=check)

    def on_timer(self) -> bool:
        """True when the flow has paused long enough: send the flush barrier now."""
        if self.finish_state != "quieting":
            return False
        gap = self.clock() - self.last_flow_packet
        if gap < self.config.quiet_s * 0.999:
            return False
        self.finish_state = "flushing"
        self.log("quiet", gap_s=gap)
        return True

    def on_flush_barrier(self) -> None:
        """Every packet-out sent before the plan completed has left the switch."""
        self.finish_state = "installing"
        self.log("flushed")

    def on_direct_barrier(self) -> None:
        self.finish_state = "direct"
        self.log("direct", late_packet_ins_so_far=self.late_packet_ins)
