"""N long TCP flows into one receiver, via iperf3 (one per sender, or several per sender).

One provision of the congestion control (kernel/congestion_control.py: the kernel's, a
module, or netrepro's eBPF) serves every flow. Each flow is a TcpScheme (schemes/tcp.py):
its own iperf3 server on the receiver at FIRST_PORT + i - 1, its own client on sender i,
its data connection bound to a known local port, and its own folder (flow-01/, ...) for
iperf3's reports, the ss samples and, with DCTCP, both ends' routes, ECN evidence and alpha
(kernel/dctcp.py). Each flow's congestion control is verified from its own sockets; one
flow failing its check makes the run invalid, naming the flow.

tcp_probe records the first flow only (one tracefs instance; the end hosts' stack delay
comes with it): recording every flow would evaluate 40 filters on every TCP event of the
machine, slowing the hosts under test. Instead, `sample_windows` takes one `ss -tin` of every
sender near the flows' end: each connection's own record of how long the receiver's window
or its send buffer limited it (`rwnd_limited`, `sndbuf_limited`).

The flows start one after the other as fast as they can, or each at its own offset from the
first start (`start_offsets_s`). With `sample_ms`, each flow's sender samples its sockets to
the receiver into its folder (kernel/socket_samples.py).
"""
from __future__ import annotations

import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from core.errors import RunInvalid
from kernel.congestion_control import CcResolution, CcUnavailable, CongestionControlResolver
from kernel.tcp_probe_recorder import TcpProbeSetup
from schemes.base import Endpoints, Scheme, SchemeUnavailable, StillRunning
from schemes.tcp import TcpScheme

FIRST_PORT = 5201
# The data connections' local ports when tcp_probe has not reserved one (flow i's is
# CLIENT_PORT + i - 1): below tcp_probe's range (20000-31999) and the ephemeral range
# (32768-), where iperf3's control connection gets its port; one port per flow, as flows
# may share a sender.
CLIENT_PORT = 19000
FLOW_DIR = "flow-{:02d}"
SS_END_FILE = "ss-end-{}.txt"  # a sender's `ss -tin` near the flows' end, by host name
SS_TIMEOUT_S = 10.0


def flow_dir(index: int) -> str:
    """The folder of flow `index` (1-based) in the run's folder."""
    return FLOW_DIR.format(index)


@dataclass
class FlowEndpoints(Endpoints):
    """The run's endpoints as a whole (the first flow's, for what asks for one pair), and
    each flow's own: sender i, the receiver, its folder."""

    flows: tuple[Endpoints, ...] = ()


class TcpFlows(Scheme):
    """N flows of one TCP variant, each verified from its sockets."""

    def __init__(self, cc: str, flows: int, resolver: CongestionControlResolver,
                 impl: str = "auto", probe: TcpProbeSetup | None = None,
                 start_offsets_s: Sequence[float] | None = None,
                 sample_ms: int | None = None) -> None:
        if flows < 1:
            raise ValueError(f"flows: {flows} (at least 1)")
        if start_offsets_s is not None and len(start_offsets_s) != flows:
            raise ValueError(f"start_offsets_s: {len(start_offsets_s)} offsets for {flows} "
                             "flows")
        self.start_offsets_s = tuple(start_offsets_s or (0.0,) * flows)
        self.name = cc
        self.cc = cc
        self.impl = impl
        self.resolver = resolver
        self.resolution: CcResolution | None = None
        self.flows = [TcpScheme(cc, resolver, impl=impl, probe=probe if i == 1 else None,
                                port=FIRST_PORT + i - 1,
                                client_port=None if i == 1 and probe else CLIENT_PORT + i - 1,
                                sample_ms=sample_ms)
                      for i in range(1, flows + 1)]
        self.started_s: list[float] = []  # CLOCK_MONOTONIC, each client's start
        self._ends: FlowEndpoints | None = None

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        try:
            self.resolution = stack.enter_context(self.resolver.resolve(self.cc, self.impl))
        except CcUnavailable as e:
            raise SchemeUnavailable(str(e)) from e
        facts: dict[str, Any] = {}
        for flow in self.flows:
            facts = flow.use(self.resolution)
        return dict(facts, flows=len(self.flows))

    def _each(self, ends: Endpoints) -> list[Endpoints]:
        if not isinstance(ends, FlowEndpoints) or len(ends.flows) != len(self.flows):
            raise ValueError(f"{len(self.flows)} flows need FlowEndpoints with as many "
                             "flows' endpoints")
        self._ends = ends
        return list(ends.flows)

    def start_receiver(self, ends: Endpoints) -> None:
        for flow, each in zip(self.flows, self._each(ends)):
            Path(each.out_dir).mkdir(parents=True, exist_ok=True)
            flow.start_receiver(each)

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        """Every flow's client, each for `duration_s` from its own start: in flow order as
        fast as they can, or each at its offset from the first start."""
        each = self._each(ends)
        started: dict[int, float] = {}
        first = time.monotonic()
        for i in sorted(range(len(self.flows)), key=lambda i: (self.start_offsets_s[i], i)):
            wait = first + self.start_offsets_s[i] - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self.flows[i].start_sender(each[i], duration_s)
            started[i] = time.monotonic()
        self.started_s = [started[i] for i in range(len(self.flows))]

    def sample_windows(self, ends: Endpoints) -> list[Path]:
        """One `ss -tin` of every sender's connections to the receiver, written into the
        run's folder (SS_END_FILE): each connection's time limited by the receiver's window
        and by its send buffer, so far. Call it while every flow still runs."""
        written = []
        for host in {id(e.sender): e.sender for e in self._each(ends)}.values():
            proc = host.popen(["ss", "-tin", "dst", ends.receiver_ip], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
            try:
                out, _ = proc.communicate(timeout=SS_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
            path = Path(ends.out_dir) / SS_END_FILE.format(host.name)
            path.write_bytes(out)
            written.append(path)
        return written

    def wait_sender(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for i, flow in enumerate(self.flows, 1):
            try:
                flow.wait_sender(max(0.0, deadline - time.monotonic()))
            except StillRunning:
                raise
            except RuntimeError as e:
                raise RuntimeError(f"flow {i}: {e}") from e

    def stop_sender(self) -> None:
        for flow in self.flows:
            if flow.client is not None and flow.client.running():
                flow.stop_sender()

    def stop(self) -> None:
        for flow in self.flows:
            flow.stop()

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.resolution is not None
        flows = []
        for i, (flow, each) in enumerate(zip(self.flows, self._each(ends)), 1):
            try:
                facts = flow.verify(each)
            except RunInvalid as e:
                raise RunInvalid(f"flow {i} of {len(self.flows)}: {e}") from e
            facts.update(flow=i, folder=flow_dir(i), server_port=flow.port,
                         client_port=flow.data_port(), sender=each.sender.name,
                         start_offset_s=self.start_offsets_s[i - 1],
                         started_s=self.started_s[i - 1] if i <= len(self.started_s) else None)
            flows.append(facts)
        first = flows[0]
        return {"cc_requested": self.cc, "cc_used": first.get("cc_used"),
                "cc_seen_by_ss": first.get("cc_seen_by_ss"),
                "cc_provider": self.resolution.provider,
                "cc_source_sha256": self.resolution.source_sha256,
                "tcp_probe": first.get("tcp_probe"), "probed_flow": 1,
                "flows": flows}

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "tcp", "cc": self.cc, "cc_impl": self.impl,
                "flows": len(self.flows), "first_server_port": FIRST_PORT}
