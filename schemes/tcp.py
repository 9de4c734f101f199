"""Linux TCP variants via iperf3, with the congestion control verified from the socket.

The variant is set per socket (`iperf3 -C`), never system-wide, and read back
twice: iperf3's own getsockopt(TCP_CONGESTION) in its JSON, and `ss -tin` on the
live connection. Either disagreeing with what was loaded makes the run invalid.
With a `TcpProbeSetup`, the kernel's tcp:tcp_probe samples of the sender's data
socket are recorded as tcp-probe.csv (kernel/tcp_probe_recorder.py); when
they cannot be, the run goes on and its verification facts say why. The same
recording keeps how late each end host's kernel processed what arrived
(kernel/stack_delay.py: `tcp_probe.stack_delay` in the facts). With `sample_ms`, the
sender's sockets to the receiver are also sampled every that many ms into
socket-samples.csv (kernel/socket_samples.py: tcp_info and, for BBR, its own state), from
before the connection opens to the end.
"""
from __future__ import annotations

import json
import logging
import math
import threading
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from core.artifacts import IPERF_PORT, REVERSE_DIR
from core.endpoints import Endpoints
from core.errors import RunInvalid
from core.run_span import both_directions
from core.settings import Setting
from core.worker_resources import CC
from kernel.congestion_control import CcResolution, CcUnavailable, CongestionControlResolver
from kernel.dctcp import DctcpRun, is_dctcp
from kernel import socket_samples
from kernel.recovery import RECOVERIES, RECOVERY_BASES, RecoveryRequest, provide_recovery
from kernel.socket_samples import SocketSampler
from kernel.tcp_probe_recorder import ProbeUnavailable, TcpProbeRecorder, TcpProbeSetup
from schemes.base import ManagedProcess, Scheme, SchemeUnavailable
from schemes.table import SchemeEntry, SchemeParameterError

if TYPE_CHECKING:
    from core.paths import ProjectPaths
    from core.runspec import RunSpec

log = logging.getLogger(__name__)

SS_SAMPLE_AFTER_S = 2.0
SS_RESAMPLE_S = 1.0   # again every second until the data connections show up...
SS_SAMPLE_FOR_S = 30.0  # ...for at most this long
# What iperf3 -J reports when it is stopped by a signal; its "end" section is still complete.
IPERF_INTERRUPTED = "interrupt - the client has terminated"
# iperf3 ends a test on its own after 2 min without data (`--rcv-timeout`). The run's span
# ends every run; a flow may rightly go without data for longer: with traces played once
# (the paper's 2012 emulator) the AT&T LTE downlink serves nothing for the run's last 226 s.
IPERF_IDLE_TIMEOUT_MS = 3_600_000


class TcpScheme(Scheme):
    def __init__(self, cc: str, resolver: CongestionControlResolver, impl: str = "auto",
                 probe: TcpProbeSetup | None = None,
                 recovery: RecoveryRequest | None = None, both_directions: bool = False,
                 name: str | None = None, port: int = IPERF_PORT,
                 client_port: int | None = None, sample_ms: int | None = None) -> None:
        self.name = name or cc
        # Every sample_ms, the kernel's record of the sender's sockets (None: not sampled).
        self.sample_ms = sample_ms
        self.sampler: SocketSampler | None = None
        self.sampler_facts: dict[str, Any] = {"status": "not requested"}
        self.cc = cc
        # The iperf3 server's port, and (without tcp_probe, which reserves one) the data
        # connection's own: flows side by side to one receiver each have their own.
        self.port = port
        self.client_port = client_port
        # iperf3 --bidir: one bulk flow each way at once (the server sends the reverse one,
        # with the same congestion control, which iperf3 passes to it).
        self.both = both_directions
        self.reverse_recorder: TcpProbeRecorder | None = None
        self.reverse_probe_facts: dict[str, Any] = {"status": "not requested"}
        self.ss_reverse_sample: str = ""
        self.impl = impl
        # A fast-recovery request decides the congestion control (kernel/recovery.py).
        self.recovery = recovery
        self.resolver = resolver
        self.resolution: CcResolution | None = None
        self.server: ManagedProcess | None = None
        self.client: ManagedProcess | None = None
        self.ss_sample: str = ""
        self._sampler: threading.Thread | None = None
        self.probe = probe
        self.recorder: TcpProbeRecorder | None = None
        self.probe_facts: dict[str, Any] = {"status": "not requested"}
        self.stopped_at_span_end = False
        self._ends: Endpoints | None = None
        # DCTCP: both hosts' routes, ECN evidence and alpha (kernel/dctcp.py).
        self.dctcp: DctcpRun | None = None

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        try:
            if self.recovery is not None:
                served = stack.enter_context(provide_recovery(self.resolver, self.recovery))
                self.resolution = served.resolution
                return served.facts()
            self.resolution = stack.enter_context(self.resolver.resolve(self.cc, self.impl))
        except CcUnavailable as e:
            raise SchemeUnavailable(str(e)) from e
        return self.use(self.resolution)

    def use(self, r: CcResolution) -> dict[str, Any]:
        """Run with `r`, provided by the caller (one provision serving several flows); the
        facts for meta.json."""
        self.resolution = r
        if is_dctcp(r.kernel_name):
            self.dctcp = DctcpRun(r.kernel_name, r.provider, self.port)
        return {"cc_requested": r.requested, "cc_kernel_name": r.kernel_name,
                "cc_provider": r.provider, "cc_source_sha256": r.source_sha256,
                "cc_detail": r.detail}

    def start_receiver(self, ends: Endpoints) -> None:
        if self.dctcp is not None:
            self.dctcp.setup(ends)
        self.server = ManagedProcess(
            ends.receiver, ["iperf3", "-s", "-1", "-J", "-p", str(self.port),
                            "--rcv-timeout", str(IPERF_IDLE_TIMEOUT_MS)],
            ends.out_dir, "iperf3-server", ends.on_process)
        deadline = time.monotonic() + 5
        while not _listening(ends.receiver, self.port):
            if not self.server.running():
                raise RuntimeError(f"iperf3 server exited: {self.server.stderr_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError("iperf3 server not listening after 5 s")
            time.sleep(0.05)

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        assert self.resolution is not None, "prepare() first"
        self._ends = ends
        args = ["iperf3", "-c", ends.receiver_ip, "-p", str(self.port), "-J",
                "-t", str(max(1, math.ceil(duration_s))), "-C", self.resolution.kernel_name]
        if self.both:  # the client receives too (iperf3 refuses the timeout otherwise)
            args += ["--bidir", "--rcv-timeout", str(IPERF_IDLE_TIMEOUT_MS)]
        args += self._start_probe(ends)
        if self.recorder is None and self.client_port is not None:
            args += ["--cport", str(self.client_port)]
        if self.sample_ms is not None:  # before the client: the samples see it connect
            self.sampler = SocketSampler(ends.sender, ends.receiver_ip, ends.out_dir,
                                         self.sample_ms, duration_s, ends.on_process)
            self.sampler.start()
        self.client = ManagedProcess(ends.sender, args, ends.out_dir, "iperf3-client",
                                     ends.on_process)
        if self.dctcp is not None:
            self.dctcp.start(ends, self.data_port())
        self._sampler = threading.Thread(target=self._sample_socket, args=(ends,), daemon=True)
        self._sampler.start()

    def data_port(self) -> int | None:
        """The data connection's local port, when known: the one tcp_probe reserved, else the
        one given, else None (the busiest connection is then read as the data one)."""
        return self.recorder.client_port if self.recorder is not None else self.client_port

    def _start_probe(self, ends: Endpoints) -> list[str]:
        """Start recording tcp_probe; the iperf3 arguments that bind the probed port."""
        if self.probe is None:
            return []
        try:
            self.recorder = self.probe.start(ends.out_dir, self.port, tag=ends.run_tag,
                                             interfaces=_interfaces(ends))
        except ProbeUnavailable as e:
            log.warning("tcp_probe not recorded: %s", e)
            self.probe_facts = {"status": "unavailable", "reason": str(e)}
            return []
        if self.both:
            try:
                self.reverse_recorder = self.probe.start(ends.out_dir / REVERSE_DIR, self.port,
                                                         tag=ends.run_tag,
                                                         reverse_of=self.recorder)
            except ProbeUnavailable as e:
                log.warning("tcp_probe of the reverse flow not recorded: %s", e)
                self.reverse_probe_facts = {"status": "unavailable", "reason": str(e)}
        return ["--cport", str(self.recorder.client_port)]

    def _sample_socket(self, ends: Endpoints) -> None:
        """`ss -tin` of the data connection(s), sampled until they show up: on a slow or dead
        stretch of a trace (with both directions loaded, iperf3's set-up waits behind data)
        they may not exist yet SS_SAMPLE_AFTER_S in."""
        time.sleep(SS_SAMPLE_AFTER_S)
        deadline = time.monotonic() + SS_SAMPLE_FOR_S
        while True:
            self.ss_sample = _ss(ends.sender, ["ss", "-tin", "dst", ends.receiver_ip])
            if self.both:  # the reverse flow's sender is the server, on the receiving host
                self.ss_reverse_sample = _ss(ends.receiver, ["ss", "-tin"])
            assert self.client is not None
            if self._sampled_data_connections() or time.monotonic() > deadline \
                    or not self.client.running():
                break
            time.sleep(SS_RESAMPLE_S)
        (ends.out_dir / "ss-sample.txt").write_text(self.ss_sample)
        if self.both:
            (ends.out_dir / "ss-sample-reverse.txt").write_text(self.ss_reverse_sample)

    def _sampled_data_connections(self) -> bool:
        """Whether the samples show the data connection(s) with the requested control (always
        true when their ports are not known: the busiest connection is read then). A
        connection still opening may show the namespace's default: iperf3 sets the control
        on its data socket around the connect, and on a stretch where the SYN waits for the
        link it is sampled again."""
        port = self.data_port()
        if port is None or self.resolution is None:
            return True
        expected = self.resolution.kernel_name
        forward = _cc_from_ss(self.ss_sample, port) == expected
        return forward and (not self.both or _cc_from_ss(self.ss_reverse_sample, self.port,
                                                         peer_port=port + 1) == expected)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.client is not None
        code = self.client.wait(timeout_s)
        if self._sampler is not None:
            self._sampler.join(timeout=SS_SAMPLE_FOR_S)
        if code != 0:
            raise RuntimeError(f"iperf3 client exited with status {code}: {self._client_error()}")

    def stop_sender(self) -> None:
        """iperf3 still waits for data stuck in the queue: SIGTERM makes it report and exit."""
        assert self.client is not None and self._ends is not None
        self.stopped_at_span_end = True
        self.client.stop()
        if self._sampler is not None:
            self._sampler.join(timeout=15)
        # Its connection, still holding unsent data, is now an orphan that would outlive the
        # network for minutes (holding memory, and an eBPF congestion control's struct_ops):
        # destroy it in our own sender namespace (needs CONFIG_INET_DIAG_DESTROY; harmless
        # without it).
        proc = self._ends.sender.popen(["ss", "-K", "-tn", "dst", self._ends.receiver_ip],
                                       stdout=-1, stderr=-1)
        proc.communicate(timeout=10)

    def _client_error(self) -> str:
        assert self.client is not None
        try:
            return json.loads(self.client.stdout_path.read_text()).get("error", "")
        except ValueError:
            return self.client.stderr_tail()

    def stop(self) -> None:
        for proc in (self.client, self.server):
            if proc is not None:
                proc.stop()
        if self.sampler is not None:
            self.sampler_facts = self.sampler.stop()
            self.sampler = None
        if self.dctcp is not None:
            self.dctcp.stop()
        if self.recorder is not None:
            self.probe_facts = self.recorder.finish()
        if self.reverse_recorder is not None:
            self.reverse_probe_facts = self.reverse_recorder.finish()

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.client is not None and self.resolution is not None
        try:
            report = json.loads(self.client.stdout_path.read_text())
        except ValueError:
            raise RunInvalid(f"iperf3 wrote no JSON report: {self.client.stderr_tail()}") \
                from None
        error = report.get("error")
        stopped_by_us = self.stopped_at_span_end and error == IPERF_INTERRUPTED
        if error and not stopped_by_us:
            raise RunInvalid(f"iperf3 reported an error: {error}")
        # DCTCP first: a socket without ECN reads as Reno, and that is the reason to give.
        dctcp = self.dctcp.verify(report.get("end", {}).get("receiver_tcp_congestion")) \
            if self.dctcp is not None else None
        from_iperf = report.get("end", {}).get("sender_tcp_congestion")
        from_ss = _cc_from_ss(self.ss_sample, self.data_port())
        expected = self.resolution.kernel_name
        facts = {"cc_requested": self.cc, "cc_used": from_iperf,
                 "recovery": self.recovery.recovery if self.recovery is not None else None,
                 "cc_seen_by_ss": from_ss,
                 "cc_provider": self.resolution.provider,
                 "cc_source_sha256": self.resolution.source_sha256,
                 "iperf3_bits_per_second": report.get("end", {}).get("sum_received", {})
                 .get("bits_per_second"), "tcp_probe": self.probe_facts,
                 "socket_samples": self.sampler_facts, "data_port": self.data_port(),
                 "iperf3_end": "stopped at the end of the span" if stopped_by_us else "finished"}
        if dctcp is not None:
            facts["dctcp"] = dctcp
        if from_iperf is None and stopped_by_us and self.both and from_ss is not None:
            # iperf3 --bidir stopped by a signal writes no sender_tcp_congestion: the socket's
            # own sample (ss -tin on the data connection) is then the record, and must agree.
            facts.update(cc_used=from_ss, cc_used_from="ss -tin (iperf3 stopped before "
                         "reporting its socket's congestion control)")
        elif from_iperf != expected:
            raise RunInvalid(f"congestion control mismatch: asked for {expected}, "
                             f"the socket reported {from_iperf!r}")
        if from_ss is not None and from_ss != expected:
            raise RunInvalid(f"congestion control mismatch: asked for {expected}, "
                             f"ss -tin showed {from_ss!r}")
        if self.both:
            facts.update(self._verify_reverse(report, expected))
        return facts

    def _verify_reverse(self, report: dict[str, Any], expected: str) -> dict[str, Any]:
        """The reverse flow (iperf3 --bidir): sent by the server, with the same control."""
        end = report.get("end", {})
        if "sum_received_bidir_reverse" not in end:
            raise RunInvalid("iperf3 ran one direction only: its report has no reverse "
                             "stream (--bidir needs iperf3 3.7 or later)")
        from_iperf = end.get("receiver_tcp_congestion")
        if self.recorder is not None:
            from_ss = _cc_from_ss(self.ss_reverse_sample, self.port,
                                  peer_port=self.recorder.client_port + 1)
        else:  # ports unknown: the busiest connection the server's side holds
            from_ss = _cc_from_ss(self.ss_reverse_sample)
        facts = {"cc_used_reverse": from_iperf, "cc_seen_by_ss_reverse": from_ss,
                 "iperf3_bits_per_second_reverse":
                     end.get("sum_received_bidir_reverse", {}).get("bits_per_second"),
                 "tcp_probe_reverse": self.reverse_probe_facts}
        if from_iperf != expected:
            raise RunInvalid(f"congestion control mismatch on the reverse flow: asked for "
                             f"{expected}, the server's socket reported {from_iperf!r}")
        if from_ss is None:
            raise RunInvalid("the reverse flow's sending socket was not in the server's "
                             "ss -tin sample: its congestion control is unverified")
        if from_ss != expected:
            raise RunInvalid(f"congestion control mismatch on the reverse flow: asked for "
                             f"{expected}, ss -tin showed {from_ss!r}")
        return facts

    def describe(self) -> dict[str, Any]:
        described = {"scheme": self.name, "family": "tcp", "cc": self.cc, "cc_impl": self.impl}
        if self.recovery is not None:
            described.update(recovery=self.recovery.recovery, cc_impl=self.recovery.impl)
        return described


def _interfaces(ends: Endpoints) -> dict[str, str]:
    """Each end host's interface on the path (a Mininet host's default one)."""
    return {role: str(host.defaultIntf()) for role, host in
            (("sender", ends.sender), ("receiver", ends.receiver))
            if hasattr(host, "defaultIntf")}


def _ss(host: Any, args: list[str]) -> str:
    proc = host.popen(args, stdout=-1, stderr=-1)
    out, _ = proc.communicate(timeout=10)
    return out.decode(errors="replace")


def _listening(host: Any, port: int) -> bool:
    proc = host.popen(["ss", "-Hltn", f"sport = :{port}"], stdout=-1, stderr=-1)
    out, _ = proc.communicate(timeout=5)
    return bool(out.strip())


_SS_FLAGS = {"ts", "sack", "ecn", "ecnseen", "fastopen", "cong_alg"}


def _cc_from_ss(text: str, data_port: int | None = None,
                peer_port: int | None = None) -> str | None:
    """The congestion control of iperf3's data connection in `ss -tin` output.

    iperf3 sets -C on its data socket only; its control connection keeps the
    namespace default. With the data connection's local port known (`--cport`)
    that connection is read, and None is returned when it is not in the sample;
    otherwise the busiest connection is taken for it, which can be the control
    connection while the data connection has sent no more than its cookie. With
    `peer_port` too, the connection between exactly those ports is read (the
    server's reverse flow of --bidir: local port 5201, the client's second port).
    """
    best: tuple[int, str] | None = None
    local_port: int | None = None
    remote_port: int | None = None
    for line in text.splitlines():
        if not line[:1].isspace():
            words = line.split()
            local_port = _port(words[3]) if len(words) > 3 else None
            remote_port = _port(words[4]) if len(words) > 4 else None
            continue
        words = line.split()
        names = [w for w in words if ":" not in w and w not in _SS_FLAGS]
        if not names:
            continue
        if peer_port is not None:
            if local_port == data_port and remote_port == peer_port:
                return names[0]
            continue
        if data_port is not None:
            if local_port == data_port:
                return names[0]
            continue
        acked = next((int(w.split(":")[1]) for w in words if w.startswith("bytes_acked:")), 0)
        if best is None or acked > best[0]:
            best = (acked, names[0])
    return best[1] if best else None


def _port(address: str) -> int | None:
    try:
        return int(address.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return None


def _build(entry: SchemeEntry, spec: "RunSpec", paths: "ProjectPaths") -> TcpScheme:
    return TcpScheme(entry.name, CongestionControlResolver.for_project(paths),
                     impl=entry.value(spec, "cc_impl"),
                     probe=TcpProbeSetup(paths.state_dir / "tcp-probe"),
                     recovery=_recovery_request(spec), both_directions=both_directions(spec),
                     sample_ms=spec.option(socket_samples.OPTION))


def _recovery_request(spec: "RunSpec") -> RecoveryRequest | None:
    """A run's fast-recovery request (`recovery` parameter), which decides the implementation."""
    recovery = spec.param("recovery")
    if recovery is None:
        return None
    if spec.param("cc_impl") is not None:
        raise SchemeParameterError("--recovery decides the implementation: drop --cc-impl")
    try:
        return RecoveryRequest(spec.scheme, str(recovery))
    except ValueError as e:
        raise SchemeParameterError(str(e)) from e


def _needs(spec: "RunSpec") -> dict[str, float]:
    """A worker that can provide the variant (by the provider the run asks for, if any)."""
    needs = {CC + spec.scheme: 1.0}
    impl = spec.param("cc_impl")
    if impl in ("kernel", "ebpf"):
        needs[f"{CC}{spec.scheme}:{impl}"] = 1.0
    return needs


CC_IMPL = Setting("cc_impl", str, "which provider must serve the congestion control "
                  "(auto: the kernel's, else a module, else our eBPF)",
                  choices=("auto", "kernel", "ebpf"), default="auto")
RECOVERY = Setting("recovery", str, "fast recovery: the kernel's PRR or our eBPF rate "
                   "halving, RFC 3517 or PRR (kernel/recovery.py; decides the implementation)",
                   choices=tuple(RECOVERIES))
# name, label, colour, marker
_VARIANTS = (("cubic", "Cubic", "tab:blue", "o"), ("reno", "Reno", "tab:purple", "^"),
             ("bbr", "BBR", "tab:gray", "X"), ("vegas", "Vegas", "tab:green", "s"),
             ("bic", "BIC", "tab:brown", "v"), ("hybla", "Hybla", "tab:pink", "D"),
             ("dctcp", "DCTCP", "tab:olive", "h"))
TABLE: tuple[SchemeEntry, ...] = tuple(
    SchemeEntry(name, "tcp", f"Linux TCP {name} via iperf3 -C (kernel, module or eBPF)", _build,
                params=(CC_IMPL, RECOVERY) if name in RECOVERY_BASES else (CC_IMPL,),
                label=label, colour=colour, marker=marker, needs=_needs)
    for name, label, colour, marker in _VARIANTS)
TCP_VARIANTS = tuple(e.name for e in TABLE)
