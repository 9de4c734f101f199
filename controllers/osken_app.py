"""The drop plan as an os-ken application (OpenFlow 1.0), run by `osken-manager`.

    NETREPRO_CONTROLLER_CONFIG=config.json osken-manager --ofp-listen-host 127.0.0.1 \
        --ofp-tcp-listen-port PORT controllers/osken_app.py

Only translation lives here; what to do is controllers/plan_logic.py.
"""
from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path
from typing import Any

# osken-manager loads this file by path: make the project importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from os_ken.base import app_manager  # noqa: E402
from os_ken.controller import ofp_event  # noqa: E402
from os_ken.lib import hub  # noqa: E402
from os_ken.controller.handler import (CONFIG_DISPATCHER, DEAD_DISPATCHER,  # noqa: E402
                                       MAIN_DISPATCHER, set_ev_cls)
from os_ken.ofproto import ofproto_v1_0  # noqa: E402

from controllers.plan_logic import (CONFIG_ENV, PRIORITY_ARP, PRIORITY_DIRECT,  # noqa: E402
                                    PRIORITY_REVERSE, PRIORITY_TO_CONTROLLER,
                                    ControllerConfig, PlanController)

ETH_ARP = 0x0806
ETH_IPV4 = 0x0800


class DropPlanApp(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config = ControllerConfig.read(Path(os.environ[CONFIG_ENV]))
        version = importlib.metadata.version("os-ken")
        self.logic = PlanController(config, f"os-ken {version}")
        self.ready_xid: int | None = None
        self.flush_xid: int | None = None
        self.direct_xid: int | None = None

    def _flow(self, dp: Any, priority: int, out_port: int, **match: Any) -> None:
        ofp, parser = dp.ofproto, dp.ofproto_parser
        max_len = 0xFFFF if out_port == ofp.OFPP_CONTROLLER else 0
        dp.send_msg(parser.OFPFlowMod(
            datapath=dp, match=parser.OFPMatch(**match), command=ofp.OFPFC_ADD,
            priority=priority, actions=[parser.OFPActionOutput(out_port, max_len)]))

    def _barrier(self, dp: Any) -> int:
        msg = dp.ofproto_parser.OFPBarrierRequest(dp)
        dp.send_msg(msg)
        return int(msg.xid)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_features(self, ev: Any) -> None:
        dp = ev.msg.datapath
        cfg = self.logic.config
        self.logic.on_connect(dp.id)
        self._flow(dp, PRIORITY_REVERSE, cfg.sender_port, in_port=cfg.receiver_port)
        self._flow(dp, PRIORITY_ARP, cfg.receiver_port, in_port=cfg.sender_port,
                   dl_type=ETH_ARP)
        self._flow(dp, PRIORITY_TO_CONTROLLER, dp.ofproto.OFPP_CONTROLLER,
                   in_port=cfg.sender_port, dl_type=ETH_IPV4)
        self.ready_xid = self._barrier(dp)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def on_barrier(self, ev: Any) -> None:
        dp, xid = ev.msg.datapath, ev.msg.xid
        if xid == self.ready_xid:
            self.logic.on_ready()
        elif xid == self.flush_xid:
            self.logic.on_flush_barrier()
            cfg = self.logic.config
            self._flow(dp, PRIORITY_DIRECT, cfg.receiver_port, in_port=cfg.sender_port)
            self.direct_xid = self._barrier(dp)
        elif xid == self.direct_xid:
            self.logic.on_direct_barrier()

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def on_packet_in(self, ev: Any) -> None:
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        action = self.logic.on_packet_in(msg.in_port, bytes(msg.data))
        actions = [] if action.out_port is None else [parser.OFPActionOutput(action.out_port, 0)]
        if action.out_port is not None or msg.buffer_id != ofp.OFP_NO_BUFFER:
            data = None if msg.buffer_id != ofp.OFP_NO_BUFFER else msg.data
            dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id,
                                            in_port=msg.in_port, actions=actions, data=data))
        if action.check_after is not None:
            hub.spawn_after(action.check_after, self._on_timer, dp)

    def _on_timer(self, dp: Any) -> None:
        if self.logic.on_timer():
            self.flush_xid = self._barrier(dp)

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def on_dead(self, ev: Any) -> None:
        if ev.datapath is not None and ev.datapath.id is not None:
            self.logic.log("disconnected", dpid=f"{ev.datapath.id:016x}")
