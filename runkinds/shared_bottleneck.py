"""The shared bottleneck: N long TCP flows, one per sender, into one switch port (DCTCP).

Measured in order:

1. The congestion control is provided once for every flow (kernel/congestion_control.py;
   DCTCP: the kernel's where it exists, else netrepro's eBPF), and held for the run.
2. The network is built with the run's own prefix (topologies/shared_bottleneck.py): N
   senders, a Linux bridge, and the bridge's port towards the receiver through
   netrepro-link at the run's fixed rate with the run's queue and its per-packet queue log;
   the path's delay is the emulator's. With `marking=red` the kernel's RED marks instead
   (or the build fails here, naming the missing qdisc).
3. Each flow's iperf3 server starts on the receiver (DCTCP: both ends' routes first, so
   ECN is negotiated from the SYN: kernel/dctcp.py), then the emulator, then the flows'
   clients, one after the other; every client runs the run's duration and the link serves
   a margin longer (the last client starts later than the first); a client still running
   after the margin is stopped.
4. The emulator is stopped first, then the flows; each flow is verified from its own
   sockets (and DCTCP's ECN on both ends); the flows' starts and the emulator's stats go
   into meta.json.

Its metrics: analysis/shared_bottleneck.py. A run takes the whole pool (`slots`): at
100 Mbit/s the emulator logs every packet and up to 40 iperf3 pairs run beside it, which
side by side with a pool's worth of other runs on two cores would move its queue.

Options (RunSpec.options): topology (this kind's name), flows (N), rtt_ms (the emulated
round trip: data direction rtt_ms // 2 after the queue, the ACKs the rest; the spec's
delay_ms must be rtt_ms // 2), marking (emulator or red; with red the spec's queue,
ecn:k=K,packets=N, sets RED's threshold and buffer, and the emulator's own queue is
droptail:packets=N), warmup_s (left out of the scored window), and optionally k (the
queue's marking threshold again, so the run's label names it; checked against the queue).
The spec's traces are `rate:<Mbit/s>` both ways; its duration is each flow's.
"""
from __future__ import annotations

import logging
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from analysis.shared_bottleneck import shared_bottleneck_metrics
from core.active_runs import ActiveRun
from core.errors import UsageError
from core.paths import ProjectPaths
from core.queue_spec import QueueSpecError, parse_queue
from core.results import read_json
from core.run_kind import RunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from core.worker_resources import CC
from runkinds.drive import RunEnd, drive
from topologies.link_side import FIXED_RATE_PREFIX

log = logging.getLogger(__name__)

NAME = "shared-bottleneck"
MARKINGS = ("emulator", "red")
OPTIONS = ("flows", "rtt_ms", "marking", "warmup_s")
MAX_FLOWS = 99
# The link serves this much longer than each flow runs: the clients start one after the
# other (tens of ms each with DCTCP's set-up), and each must end on its own, not be cut off.
SERVE_MARGIN_S = 3.0
SERVE_MARGIN_PER_FLOW_S = 0.1
# After the margin, a client still running is stopped (the link serves nothing more).
STOP_AFTER_S = 1.0
# Set-up and teardown per sender (namespaces, veth pairs, static ARP, iperf3 pairs:
# measured 6 s to build 40 senders on the 2-core VM under load), beyond the runner's
# per-run overhead.
SETUP_PER_FLOW_S = 0.25
# More slots than any pool has: the run takes the whole pool and goes alone.
WHOLE_POOL = 1 << 16


def serve_margin_s(flows: int) -> float:
    return SERVE_MARGIN_S + SERVE_MARGIN_PER_FLOW_S * flows


def bottleneck_options(spec: RunSpec) -> dict[str, Any]:
    """The run's options, checked against its spec (UsageError naming the disagreement)."""
    o = dict(spec.options)
    missing = [k for k in OPTIONS if k not in o]
    if missing:
        raise UsageError(f"a {NAME} run needs the options {', '.join(missing)}")
    flows, rtt = o["flows"], o["rtt_ms"]
    if not isinstance(flows, int) or not 1 <= flows <= MAX_FLOWS:
        raise UsageError(f"{NAME}: flows={flows!r} must be 1..{MAX_FLOWS}")
    if not isinstance(rtt, int) or rtt < 0:
        raise UsageError(f"{NAME}: rtt_ms={rtt!r} must be a whole number of ms >= 0")
    if spec.delay_ms != rtt // 2:
        raise UsageError(f"{NAME}: the spec's delay ({spec.delay_ms} ms) is not rtt_ms // 2 "
                         f"({rtt // 2} ms; the ACKs carry the rest of the {rtt} ms)")
    if o["marking"] not in MARKINGS:
        raise UsageError(f"{NAME}: marking={o['marking']!r} is not one of "
                         f"{', '.join(MARKINGS)}")
    rates = {spec.data_trace, spec.ack_trace}
    if len(rates) != 1 or not spec.data_trace.startswith(FIXED_RATE_PREFIX):
        raise UsageError(f"{NAME}: both directions must be the same fixed rate "
                         f"(rate:<Mbit/s>), not {spec.data_trace} / {spec.ack_trace}")
    try:
        rate = float(spec.data_trace[len(FIXED_RATE_PREFIX):])
    except ValueError:
        rate = -1.0
    if not rate > 0:
        raise UsageError(f"{NAME}: bad rate {spec.data_trace!r}")
    if spec.duration_s is None or spec.duration_s <= o["warmup_s"]:
        raise UsageError(f"{NAME}: the flows need a duration longer than the warm-up "
                         f"({o['warmup_s']} s), not {spec.duration_s}")
    try:
        queue = parse_queue(spec.queue)
    except QueueSpecError as e:
        raise UsageError(str(e)) from e
    if o["marking"] == "red" and not queue.marks_ecn:
        raise UsageError(f"{NAME}: marking=red takes its threshold and buffer from an "
                         f"ecn:k=K,packets=N queue, not {spec.queue!r}")
    if queue.packets is None:
        raise UsageError(f"{NAME}: the port's buffer must be counted in packets "
                         f"(droptail:packets=N or ecn:k=K,packets=N), not {spec.queue!r}")
    if "k" in o and o["k"] != queue.mark_threshold:
        raise UsageError(f"{NAME}: the option k={o['k']!r} disagrees with the queue "
                         f"{spec.queue!r}")
    return dict(o, rate_mbps=rate)


class SharedBottleneckKind(RunKind):
    name = NAME

    def check(self, spec: RunSpec, traces: TraceSet) -> None:
        bottleneck_options(spec)
        from schemes.registry import TCP_VARIANTS, check_params
        if spec.scheme not in TCP_VARIANTS:
            raise UsageError(f"{NAME}: the flows are TCP ({', '.join(TCP_VARIANTS)}), not "
                             f"{spec.scheme!r}")
        check_params(spec)

    def planned_seconds(self, spec: RunSpec, traces: TraceSet) -> float:
        flows = int(spec.option("flows", 1))
        return float(spec.duration_s or 0) + serve_margin_s(flows) + SETUP_PER_FLOW_S * flows

    def worker_needs(self, spec: RunSpec,
                     traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
        needs: dict[str, float] = {CC + spec.scheme: 1}
        impl = spec.param("cc_impl")
        if impl in ("kernel", "ebpf"):
            needs[f"{CC}{spec.scheme}:{impl}"] = 1
        return needs, {}

    def slots(self, spec: RunSpec) -> int:
        return WHOLE_POOL

    def measure(self, spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                meta: dict[str, Any]) -> None:
        # Mininet, the kernel's facilities and the endpoints are needed only here.
        from kernel import tcp_buffers
        from kernel.congestion_control import CongestionControlResolver
        from kernel.tcp_probe_recorder import TcpProbeSetup
        from schemes.base import Endpoints
        from schemes.tcp_flows import FlowEndpoints, TcpFlows, flow_dir
        from topologies.shared_bottleneck import (RECEIVER_IP, BottleneckConfig,
                                                  SharedBottleneck)
        from topologies.tc_red import RedMarking, RedQueueSampler
        from topologies.trace_path import new_prefix
        o = bottleneck_options(spec)
        flows, rtt = int(o["flows"]), int(o["rtt_ms"])
        queue = parse_queue(spec.queue)
        duration_s = float(spec.duration_s or 0)
        margin_s = serve_margin_s(flows)
        red = None
        emulator_queue = spec.queue
        if o["marking"] == "red":
            assert queue.mark_threshold is not None and queue.packets is not None
            red = RedMarking(k=queue.mark_threshold, packets=queue.packets)
            emulator_queue = f"droptail:packets={queue.packets}"
        config = BottleneckConfig(senders=flows, rate_mbps=float(o["rate_mbps"]),
                                  data_delay_ms=rtt // 2, ack_delay_ms=rtt - rtt // 2,
                                  queue=emulator_queue,
                                  span_ms=int(round((duration_s + margin_s) * 1000)), red=red)
        meta["duration_s"] = duration_s
        meta["serve_margin_s"] = margin_s
        scheme = TcpFlows(spec.scheme, flows, CongestionControlResolver.for_project(paths),
                          impl=str(spec.param("cc_impl") or "auto"),
                          probe=TcpProbeSetup(paths.state_dir / "tcp-probe"))
        meta["scheme"] = scheme.describe()
        emulator = paths.native_binary("link", "netrepro-link")
        with ExitStack() as stack:
            meta["provider"] = scheme.prepare(stack)
            active = ActiveRun(paths.state_dir / "active", new_prefix())
            stack.callback(active.close)
            meta["prefix"] = active.prefix
            net = stack.enter_context(SharedBottleneck(config, emulator=emulator,
                                                       log_dir=out, active=active))
            meta["topology"] = net.describe()
            meta["marking"] = _marking_facts(spec.queue, net.red_facts)
            assert net.receiver is not None
            meta["host_settings"] = {"sender 1": _sysctls(net.senders[0]),
                                     "receiver": _sysctls(net.receiver)}
            # The machine's limits (every namespace starts with them): the window's ceiling.
            meta["tcp_buffer_profile"] = tcp_buffers.MACHINE
            meta["tcp_buffers"] = {"sender": tcp_buffers.read(net.senders[0]),
                                   "receiver": tcp_buffers.read(net.receiver)}
            each = tuple(Endpoints(s, net.receiver, RECEIVER_IP, out / flow_dir(i), active.add,
                                   run_tag=active.prefix)
                         for i, s in enumerate(net.senders, 1))
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
            meta["sender_end"] = drive(scheme, ends, duration_s, net.check_alive,
                                       RunEnd(duration_s + margin_s + STOP_AFTER_S,
                                              stop_sender=True))
            meta["flows_started_s"] = scheme.started_s
            net.check_alive()
            assert net.link is not None
            net.link.stop_emulator()
            if sampler is not None:
                meta["marking"]["samples"] = sampler.stop()
            scheme.stop()
            meta["verification"] = scheme.verify(ends)
        stats = out / "link-stats.json"
        meta["link"] = read_json(stats) if stats.exists() else None

    def metrics(self, run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
        return shared_bottleneck_metrics(run_dir, spec, meta)

    def missing_artifacts(self, run_dir: Path) -> str | None:
        return None if (run_dir / "data-queue.log").is_file() else "data-queue.log is missing"


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
