"""The switched path: one TCP transfer through Open vSwitch under an OpenFlow controller
that drops chosen segments (the PRR experiment).

Measured in order:

1. The recovery's congestion control is provided (kernel/recovery.py: the
   kernel's PRR with plain cubic/reno, or an eBPF cong_control) and held for
   the run; which one served is recorded.
2. The path is built (topologies/prr_path.py): sender -- Open vSwitch under
   the run's own controller carrying out the drop plan -- fixed-rate
   bottleneck -- receiver, IW10, offloads off, loss-detection sysctls set.
3. A few pings measure the round trip through the controller.
4. tcpdump starts on the sender's and the receiver's interface; tcp_probe is
   armed for the flow's ports; the transfer of exactly N bytes runs
   (schemes/transfer.py).
5. Pings again (the direct flow is in by now): the controller's added delay
   is the difference.
6. The controller's drop log, the captures' counts, the sysctls, the TCP
   counters of the sender's namespace and the clock offset between the
   captures and tcp_probe go into meta.json.

The run's metrics (analysis/prr_run.py) include the drop verdict; a run
whose drops were not exactly the plan is invalid with the verdict's reason.
"""
from __future__ import annotations

import json
import logging
import statistics
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from analysis.prr_run import check_drops_as_planned, load_prr_run, prr_run_metrics
from core.active_runs import ActiveRun
from core.artifacts import RECEIVER_PCAP, SENDER_PCAP
from core.errors import UsageError
from core.paths import ProjectPaths
from core.run_kind import RunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from core.worker_resources import CONTROLLER, OPENFLOW
from runkinds.drive import RunEnd, drive

log = logging.getLogger(__name__)

TRANSFER_TIMEOUT_S = 60.0  # a transfer of 64 KB takes well under a second without timeouts
POLL_S = 0.2
PINGS = 3
# The plan's expectation of one run. Alone a run takes ~2.7 s (pings, controller,
# transfer), but it is set-up work on the CPU, not waiting: side by side runs share the two
# cores. Set so the runner's plan (sum / jobs) matches what was measured: the 12 quick runs
# took 31-48 s at --jobs 10 on the 2-core VM.
RUN_EXPECTED_S = 25.0
OPTIONS = ("pattern", "size", "recovery", "controller", "bottleneck", "rtt")
# Options a run may add (absent: the path as it always was): `sysctls`, the sender's own
# loss-detection settings ("tcp_recovery=5,tcp_reordering=1"), and `rwnd`, the most segments
# of the path's MSS the receiver ever advertises (a cap: kernel/window_cap.py).
OPTIONAL = ("sysctls", "rwnd")
PATH_MSS = 1448  # 1500-byte MTU, IPv4, TCP with timestamps


def switched_path_options(spec: RunSpec) -> dict[str, Any]:
    """A switched-path run's options, checked against the spec's path fields derived from
    them."""
    o = dict(spec.options)
    missing = [k for k in OPTIONS if k not in o]
    if missing:
        raise UsageError(f"a switched-path run needs the options {', '.join(missing)}")
    try:
        path_extras(o)
    except ValueError as e:
        raise UsageError(f"a switched-path run's options: {e}") from e
    rate = f"rate:{float(o['bottleneck']):g}"
    if spec.data_trace != rate or spec.ack_trace != rate or spec.delay_ms * 2 != int(o["rtt"]):
        raise UsageError(f"the spec's path ({spec.data_trace}, {spec.ack_trace}, "
                         f"{spec.delay_ms} ms each way) disagrees with its options "
                         f"(bottleneck {o['bottleneck']}, rtt {o['rtt']})")
    return o


def path_extras(options: dict[str, Any]) -> dict[str, Any]:
    """PrrPathConfig's sender_sysctls and receiver_window from a run's optional options."""
    from topologies.prr_config import parse_sender_sysctls
    rwnd = options.get("rwnd")
    if rwnd is not None and (not isinstance(rwnd, int) or not 1 <= rwnd <= 45):
        raise ValueError(f"rwnd {rwnd!r}: a whole number of segments from 1 to 45")
    return {"sender_sysctls": parse_sender_sysctls(str(options.get("sysctls") or "")),
            "receiver_window": None if rwnd is None else rwnd * PATH_MSS}


class SwitchedPathKind(RunKind):
    name = "openflow-switch"

    def check(self, spec: RunSpec, traces: TraceSet) -> None:
        switched_path_options(spec)

    def planned_seconds(self, spec: RunSpec, traces: TraceSet) -> float:
        return RUN_EXPECTED_S

    def worker_needs(self, spec: RunSpec,
                     traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
        needs: dict[str, float] = {OPENFLOW: 1}
        # Decided before planning (pox or os-ken); `auto` only when this client has neither,
        # and then the worker decides, and its meta.json says which served.
        controller = spec.option("controller")
        if controller in ("pox", "os-ken"):
            needs[CONTROLLER + str(controller)] = 1
        return needs, {}

    def measure(self, spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                meta: dict[str, Any]) -> None:
        # Open vSwitch, Mininet and the controllers are needed only here.
        from core.endpoints import Endpoints
        from controllers.drop_plan import DropPlan
        from kernel.congestion_control import CongestionControlResolver
        from kernel.packet_capture import PacketCapture, clock_offset
        from kernel.recovery import RecoveryRequest
        from kernel.tcp_probe_recorder import TcpProbeSetup
        from schemes.base import SchemeUnavailable
        from schemes.transfer import SERVER_PORT, TransferScheme
        from topologies.prr_path import PrrPath, PrrPathConfig
        from topologies.trace_path import new_prefix
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
            config = PrrPathConfig(plan=plan, controller=str(o["controller"]),
                                   rate_mbps=float(o["bottleneck"]), delay_ms=spec.delay_ms,
                                   queue=spec.queue, tcp_port=SERVER_PORT, **path_extras(o))
            path = stack.enter_context(PrrPath(config, log_dir=out, active=active, paths=paths))
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
            meta["tcp_counters"] = _tcp_counters(path.sender)
            meta["window_cap"] = path.window_cap_stats()
            meta["verification"] = scheme.verify(ends)
        meta["sysctls"] = _sender_sysctls(out)
        check_drops_as_planned(out, meta)

    def metrics(self, run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
        return prr_run_metrics(load_prr_run(run_dir, meta), meta)


def _tcp_counters(host: Any) -> dict[str, int]:
    """The sender namespace's TcpExt and Tcp counters (the namespace is the run's own)."""
    text = host.cmd("cat", "/proc/net/netstat", "/proc/net/snmp")
    counters: dict[str, int] = {}
    lines = text.splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        prefix, _, keys = names.partition(":")
        vprefix, _, nums = values.partition(":")
        if prefix != vprefix or prefix not in ("TcpExt", "Tcp"):
            continue
        for key, value in zip(keys.split(), nums.split()):
            try:
                counters[f"{prefix}.{key}"] = int(value)
            except ValueError:
                pass
    return counters


def _sender_sysctls(out: Path) -> dict[str, str]:
    try:
        return dict(json.loads((out / "sysctls.json").read_text()).get("sender", {}))
    except (OSError, ValueError):
        return {}
