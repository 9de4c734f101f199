"""The drop plan as a POX component (OpenFlow 1.0), run by POX's own pox.py.

    PYTHONPATH=<checkout> python3 var/pox/pox.py log.level --WARNING \
        openflow.of_01 --address=127.0.0.1 --port=PORT \
        controllers.pox_component --config=config.json

Only translation lives here; what to do is controllers/plan_logic.py. POX
imports this module, never the project the other way round (POX is not a
project dependency: it is installed under var/pox by setup).
"""
from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from controllers.plan_logic import (PRIORITY_ARP, PRIORITY_DIRECT, PRIORITY_REVERSE,
                                    PRIORITY_TO_CONTROLLER, ControllerConfig,
                                    PlanController)

ETH_ARP = 0x0806
ETH_IPV4 = 0x0800


class _PoxDropPlan:
    def __init__(self, config: ControllerConfig, version: str) -> None:
        from pox.core import core  # POX ships no type information (mypy.ini)
        self.of = __import__("pox.openflow.libopenflow_01", fromlist=["x"])
        self.timer = __import__("pox.lib.recoco", fromlist=["x"]).Timer
        self.logic = PlanController(config, f"pox {version}")
        self.ready_xid: int | None = None
        self.flush_xid: int | None = None
        self.direct_xid: int | None = None
        core.openflow.addListenerByName("ConnectionUp", self.on_up)
        core.openflow.addListenerByName("ConnectionDown", self.on_down)
        core.openflow.addListenerByName("BarrierIn", self.on_barrier)
        core.openflow.addListenerByName("PacketIn", self.on_packet_in)

    def _flow(self, connection: Any, priority: int, out_port: int, **match: Any) -> None:
        of = self.of
        max_len = 0xFFFF if out_port == of.OFPP_CONTROLLER else 0
        connection.send(of.ofp_flow_mod(match=of.ofp_match(**match), priority=priority,
                                        actions=[of.ofp_action_output(port=out_port,
                                                                      max_len=max_len)]))

    def _barrier(self, connection: Any) -> int:
        msg = self.of.ofp_barrier_request()
        connection.send(msg)
        return int(msg.xid)

    def on_up(self, event: Any) -> None:
        cfg = self.logic.config
        # POX leaves Nagle on: a barrier written right after a flow-mod would wait for the
        # switch's delayed ACK (40 ms here), and packet-outs would be held back the same way.
        event.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.logic.on_connect(event.dpid)
        self._flow(event.connection, PRIORITY_REVERSE, cfg.sender_port,
                   in_port=cfg.receiver_port)
        self._flow(event.connection, PRIORITY_ARP, cfg.receiver_port,
                   in_port=cfg.sender_port, dl_type=ETH_ARP)
        self._flow(event.connection, PRIORITY_TO_CONTROLLER, self.of.OFPP_CONTROLLER,
                   in_port=cfg.sender_port, dl_type=ETH_IPV4)
        self.ready_xid = self._barrier(event.connection)

    def on_down(self, event: Any) -> None:
        self.logic.log("disconnected", dpid=f"{event.dpid:016x}")

    def on_barrier(self, event: Any) -> None:
        if event.xid == self.ready_xid:
            self.logic.on_ready()
        elif event.xid == self.flush_xid:
            self.logic.on_flush_barrier()
            cfg = self.logic.config
            self._flow(event.connection, PRIORITY_DIRECT, cfg.receiver_port,
                       in_port=cfg.sender_port)
            self.direct_xid = self._barrier(event.connection)
        elif event.xid == self.direct_xid:
            self.logic.on_direct_barrier()

    def on_packet_in(self, event: Any) -> None:
        of, pkt_in = self.of, event.ofp
        action = self.logic.on_packet_in(pkt_in.in_port, bytes(pkt_in.data))
        buffered = pkt_in.buffer_id is not None and pkt_in.buffer_id != -1 \
            and pkt_in.buffer_id != 0xFFFFFFFF
        if action.out_port is not None or buffered:
            msg = of.ofp_packet_out(in_port=pkt_in.in_port)
            if buffered:
                msg.buffer_id = pkt_in.buffer_id
            else:
                msg.data = pkt_in.data
            if action.out_port is not None:
                msg.actions.append(of.ofp_action_output(port=action.out_port))
            event.connection.send(msg)
        if action.check_after is not None:
            self.timer(action.check_after, self._on_timer, args=[event.connection])

    def _on_timer(self, connection: Any) -> None:
        if self.logic.on_timer():
            self.flush_xid = self._barrier(connection)


def launch(config: str) -> None:
    """POX's entry point: `controllers.pox_component --config=PATH`."""
    from pox.core import core
    version = getattr(core, "version_name", "") or ".".join(map(str, getattr(core, "version", ())))
    plan = _PoxDropPlan(ControllerConfig.read(Path(config)), version)
    core.register("netrepro_drop_plan", plan)
