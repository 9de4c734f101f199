"""A switched-path run, measured (needs root, Mininet and Open vSwitch; imported only when a
run is made).

In order:

1. The recovery's congestion control is provided (kernel/recovery.py: the kernel's own
   recovery with plain cubic/reno, or an eBPF cong_control) and held for the run; which one served
   is recorded.
2. The path is built (network.py): sender -- Open vSwitch under the run's own controller
   carrying out the drop plan -- fixed-rate bottleneck -- receiver, IW10, offloads off,
   loss-detection sysctls set.
3. A few pings measure the round trip through the controller.
4. tcpdump starts on the sender's and the receiver's interface; tcp_probe is armed for the
   flow's ports; the transfer of exactly N bytes runs (schemes/transfer.py).
5. Pings again (the direct flow is in by now): the controller's added delay is the
   difference.
6. The controller's drop log, the captures' counts, the sysctls, the TCP counters of the
   sender's namespace and the clock offset between the captures and tcp_probe go into
   meta.json; a run whose drops were not exactly the plan fails with the verdict's reason.
"""
from __future__ import annotations

import json
import logging
import statistics
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from controllers.drop_plan import DropPlan
from core.active_runs import ActiveRun
from runkinds.switched_path.options import RECEIVER_PCAP, SENDER_PCAP
from core.endpoints import Endpoints
from core.paths import ProjectPaths
from core.runspec import RunSpec
from core.traces import TraceSet
from kernel.congestion_control import CongestionControlResolver
from kernel.packet_capture import PacketCapture, clock_offset
from kernel.recovery import RecoveryRequest
from kernel.tcp_counters import read_tcp_counters
from kernel.tcp_probe_recorder import TcpProbeSetup
from runkinds.drive import RunEnd, drive
from runkinds.switched_path.options import (PINGS, POLL_S, TRANSFER_TIMEOUT_S, path_extras,
                                            switched_path_options)
from runkinds.switched_path.network import SwitchedPath, SwitchedPathConfig
from schemes.base import SchemeUnavailable
from schemes.transfer import SERVER_PORT, TransferScheme
from topologies.guarded_network import new_prefix

log = logging.getLogger(__name__)

# The native programs this module starts (core/code_identity.py hashes their sources into
# the run's id): the emulator, and the receiver's window cap (bpf).
NATIVE = ("link", "bpf")


def measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
            meta: dict[str, Any]) -> None:
    o = switched_path_options(spec)
    plan = DropPlan.parse(str(o["pattern"]))
    meta["drop_plan"] = plan.to_dict()
    try:
        request = RecoveryRequest(spec.scheme, str(o["recovery"]))
    except ValueError as e:
        raise SchemeUnavailable(str(e)) from e
    scheme = TransferScheme(request, int(o["size"]),
                            CongestionControlResolver.for_project(paths),
                            probe=TcpProbeSetup(paths.state_dir / "tcp-probe"))
    meta["scheme"] = scheme.describe()
    with ExitStack() as stack:
        meta["provider"] = scheme.prepare(stack)
        active = ActiveRun(paths.state_dir / "active", new_prefix())
        stack.callback(active.close)
        meta["prefix"] = active.prefix
        config = SwitchedPathConfig(plan=plan, controller=str(o["controller"]),
                                    rate_mbps=float(o["bottleneck"]), delay_ms=spec.delay_ms,
                                    queue=spec.queue, tcp_port=SERVER_PORT, **path_extras(o))
        path = stack.enter_context(SwitchedPath(config, log_dir=out, active=active, paths=paths))
        meta["topology"] = path.describe()
        before = path.ping_rtts(PINGS)
        captures = {side: PacketCapture(host, str(host.defaultIntf()), out / pcap,
                                        f"tcp port {SERVER_PORT}", active.add)
                    for side, host, pcap in (("sender", path.sender, SENDER_PCAP),
                                             ("receiver", path.receiver, RECEIVER_PCAP))}
        for capture in captures.values():
            stack.callback(capture.stop)
            capture.start()
        meta["clock"] = clock_offset()
        ends = Endpoints(path.sender, path.receiver, path.receiver.IP(), out, active.add,
                         run_tag=active.prefix)
        stack.callback(scheme.stop)
        scheme.start_receiver(ends)
        drive(scheme, ends, TRANSFER_TIMEOUT_S, path.check_alive,
              RunEnd(TRANSFER_TIMEOUT_S, stop_sender=False, poll_s=POLL_S,
                     why=f"the transfer did not finish in {TRANSFER_TIMEOUT_S:g} s"))
        path.check_alive()
        scheme.stop()
        meta["captures"] = {side: c.stop() for side, c in captures.items()}
        after = path.ping_rtts(PINGS)
        drop_log = path.drop_log()
        meta["controller"] = {
            "name": (meta["topology"].get("controller") or {}).get("kind"),
            "dropped_segments": drop_log.dropped_segments,
            "plan_problems": path.plan_problems(), "log": drop_log.summary(),
            "ping_ms_through_controller": before, "ping_ms_direct": after,
            "added_latency_ms": (statistics.median(before) - statistics.median(after)
                                 if before and after else None)}
        meta["tcp_counters"] = read_tcp_counters(path.sender)
        meta["window_cap"] = path.window_cap_stats()
        meta["verification"] = scheme.verify(ends)
    meta["sysctls"] = _sender_sysctls(out)


def _sender_sysctls(out: Path) -> dict[str, str]:
    try:
        return dict(json.loads((out / "sysctls.json").read_text()).get("sender", {}))
    except (OSError, ValueError):
        return {}
