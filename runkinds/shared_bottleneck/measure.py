"""A shared-bottleneck run, measured (needs root and Mininet; imported only when a run is
made).

In order:

1. The congestion control is provided once for every flow (kernel/congestion_control.py;
   DCTCP: the kernel's where it exists, else netrepro's eBPF), and held for the run.
2. The network is built with the run's own prefix (network.py): N senders, a Linux bridge,
   and the bridge's port towards the receiver through netrepro-link at the run's fixed rate
   with the run's queue and its per-packet queue log; the path's delay is the emulator's.
   With `marking=red` the kernel's RED marks instead (or the build fails here, naming the
   missing qdisc).
3. Each flow's iperf3 server starts on the receiver (DCTCP: both ends' routes first, so
   ECN is negotiated from the SYN: kernel/dctcp.py), then the emulator, then the flows'
   clients, one after the other; every client runs the run's duration and the link serves
   a margin longer (the last client starts later than the first); a client still running
   after the margin is stopped.
4. The emulator is stopped first, then the flows; each flow is verified from its own
   sockets (and DCTCP's ECN on both ends); the flows' starts and the emulator's stats go
   into meta.json.
"""
from __future__ import annotations

import logging
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from core.active_runs import ActiveRun
from core.endpoints import Endpoints
from core.paths import ProjectPaths
from core.queue_spec import parse_queue
from core.results import read_json
from core.runspec import RunSpec
from core.traces import TraceSet
from kernel import tcp_buffers
from kernel.congestion_control import CongestionControlResolver
from kernel.tcp_counters import read_tcp_counters
from kernel.tcp_probe_recorder import TcpProbeSetup
from runkinds.drive import RunEnd, drive
from runkinds.shared_bottleneck.options import (STOP_AFTER_S, bottleneck_options, layout,
                                                serve_margin_s, start_offsets_s)
from runkinds.shared_bottleneck.network import RECEIVER_IP, BottleneckConfig, SharedBottleneck
from runkinds.shared_bottleneck.red import RedMarking, RedQueueSampler
from schemes.tcp_flows import FlowEndpoints, TcpFlows, flow_dir
from topologies.cpu_placement import refused_for
from topologies.guarded_network import new_prefix

log = logging.getLogger(__name__)

# The native programs this module starts (core/code_identity.py hashes their sources into
# the run's id).
NATIVE = ("link",)
# The flows' window records are taken this long before the first of them ends.
WINDOWS_BEFORE_END_S = 1.0
SS_WAIT_S = 15.0


def measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
            meta: dict[str, Any]) -> None:
    o = bottleneck_options(spec)
    flows, rtt = int(o["flows"]), int(o["rtt_ms"])
    hosts = layout(o)
    offsets = start_offsets_s(o, spec.trial)
    queue = parse_queue(spec.queue)
    duration_s = float(spec.duration_s or 0)
    margin_s = serve_margin_s(flows, max(offsets))
    red = None
    emulator_queue = spec.queue
    if o["marking"] == "red":
        assert queue.mark_threshold is not None and queue.packets is not None
        red = RedMarking(k=queue.mark_threshold, packets=queue.packets)
        emulator_queue = f"droptail:packets={queue.packets}"
    config = BottleneckConfig(senders=hosts.hosts, rate_mbps=float(o["rate_mbps"]),
                              data_delay_ms=rtt // 2, ack_delay_ms=rtt - rtt // 2,
                              queue=emulator_queue,
                              span_ms=int(round((duration_s + margin_s) * 1000)), red=red,
                              sender_rtts_ms=hosts.host_rtts_ms if "host_rtts" in o else None,
                              one_segment_packets=bool(o.get("one_segment_packets", False)))
    meta["duration_s"] = duration_s
    meta["serve_margin_s"] = margin_s
    meta["flow_hosts"] = list(hosts.host_of_flow)
    meta["start_offsets_s"] = list(offsets)
    scheme = TcpFlows(spec.scheme, flows, CongestionControlResolver.for_project(paths),
                      impl=str(spec.param("cc_impl") or "auto"),
                      probe=TcpProbeSetup(paths.state_dir / "tcp-probe"),
                      start_offsets_s=offsets, sample_ms=o.get("socket_sample_ms"))
    meta["scheme"] = scheme.describe()
    emulator = paths.native_binary("link", "netrepro-link")
    with ExitStack() as stack:
        meta["provider"] = scheme.prepare(stack)
        active = ActiveRun(paths.state_dir / "active", new_prefix())
        stack.callback(active.close)
        meta["prefix"] = active.prefix
        net = stack.enter_context(SharedBottleneck(
            config, emulator=emulator, log_dir=out, active=active,
            refuse_placement=placement_refused(bool(o.get("cpu_placement", False)),
                                               meta["provider"])))
        meta["topology"] = net.describe()
        meta["marking"] = _marking_facts(spec.queue, net.red_facts)
        assert net.receiver is not None
        meta["host_settings"] = {"sender 1": _sysctls(net.senders[0]),
                                 "receiver": _sysctls(net.receiver)}
        # The machine's limits (every namespace starts with them): the window's ceiling.
        meta["tcp_buffer_profile"] = tcp_buffers.MACHINE
        meta["tcp_buffers"] = {"sender": tcp_buffers.read(net.senders[0]),
                               "receiver": tcp_buffers.read(net.receiver)}
        each = tuple(Endpoints(net.senders[host - 1], net.receiver, RECEIVER_IP,
                               out / flow_dir(i), active.add, run_tag=active.prefix)
                     for i, host in enumerate(hosts.host_of_flow, 1))
        ends = FlowEndpoints(net.senders[0], net.receiver, RECEIVER_IP, out, active.add,
                             run_tag=active.prefix, flows=each)
        stack.callback(scheme.stop)
        scheme.start_receiver(ends)
        net.start()
        sampler = None
        if red is not None:
            assert net.switch is not None
            sampler = RedQueueSampler(net.switch, net.uplink, out)
            stack.callback(sampler.stop)
            sampler.start()
        # Every flow's record of how long its windows limited it, taken while all still run:
        # the first flow ends duration_s after it starts (the last has started by then: the
        # scored window, from the last start plus the warm-up, must not be empty).
        windows = threading.Timer(max(0.0, duration_s - WINDOWS_BEFORE_END_S),
                                  scheme.sample_windows, args=(ends,))
        windows.daemon = True
        stack.callback(windows.cancel)
        windows.start()
        meta["sender_end"] = drive(scheme, ends, duration_s, net.check_alive,
                                   RunEnd(duration_s + margin_s + STOP_AFTER_S,
                                          stop_sender=True))
        windows.join(timeout=SS_WAIT_S)
        # Each sender's namespace's counters: its flows' timeouts and retransmissions.
        meta["tcp_counters"] = {s.name: read_tcp_counters(s) for s in net.senders}
        meta["flows_started_s"] = scheme.started_s
        net.check_alive()
        assert net.link is not None
        net.link.stop_emulator()
        meta["cpu_placement"] = net.link.placement.facts()
        if sampler is not None:
            meta["marking"]["samples"] = sampler.stop()
        scheme.stop()
        meta["verification"] = scheme.verify(ends)
    stats = out / "link-stats.json"
    meta["link"] = read_json(stats) if stats.exists() else None


def placement_refused(asked: bool, provider: dict[str, Any]) -> str | None:
    """Why the bottleneck's emulator is not to take a CPU (None: it may, if the link needs
    it): not asked for by the run, or an eBPF congestion control, whose ssthresh came back
    as a stale kernel word in every such run measured (6 of 6 DCTCP runs at N = 2,
    docs/dctcp.md, "The emulator's CPU")."""
    if not asked:
        return "not asked for (the run's cpu_placement option)"
    return refused_for(provider)


def _marking_facts(queue: str, red: dict[str, Any] | None) -> dict[str, Any]:
    """Which queue marked CE in the run, for meta.json."""
    if red is not None:
        return dict(red)
    spec = parse_queue(queue)
    if spec.marks_ecn:
        return {"marked_by": "netrepro-link (ECN threshold marking)",
                "queue": spec.describe(), "k": spec.mark_threshold, "packets": spec.packets}
    return {"marked_by": "nothing (drop-tail)", "queue": spec.describe()}


def _sysctls(host: Any) -> dict[str, str]:
    """The namespace's TCP settings a run's numbers depend on (goodput's header size among
    them: tcp_timestamps)."""
    out = {}
    for key in ("tcp_ecn", "tcp_timestamps", "tcp_sack", "tcp_congestion_control"):
        out[key] = " ".join(host.cmd(f"cat /proc/sys/net/ipv4/{key}").split()) or "unreadable"
    return out
