"""A transfer of exactly N bytes on one TCP connection, its congestion control set and verified.

The PRR experiment's flow (netcat's transfer in the 2015 reproduction): our
own endpoints (schemes/transfer_endpoint.py, run under /usr/bin/python3 in
the Mininet hosts) so that nothing but the measured connection crosses the
path. The sender sets the congestion control with setsockopt(TCP_CONGESTION)
and reads it back; the run is invalid when the socket reports another one,
when the receiver did not read exactly N bytes, or when the reply that ends
the transfer never came. The kernel's tcp_probe and tcp_cong_state_set are
recorded for the connection's client port (kernel/tcp_probe_recorder.py).
"""
from __future__ import annotations

import json
import logging
import random
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from core.endpoints import Endpoints
from core.errors import RunInvalid
from schemes.base import ManagedProcess, Scheme, SchemeUnavailable, StillRunning
from kernel.congestion_control import CcResolution, CcUnavailable, CongestionControlResolver
from kernel.recovery import RecoveryRequest, provide_recovery
from kernel.tcp_probe_recorder import (CLIENT_PORTS, ProbeUnavailable, TcpProbeRecorder,
                                       TcpProbeSetup)

log = logging.getLogger(__name__)

PYTHON = "/usr/bin/python3"
ENDPOINT = Path(__file__).resolve().with_name("transfer_endpoint.py")
SERVER_PORT = 5001  # the transfer's receiver
RECEIVER_JSON = "transfer-receiver.json"
SENDER_JSON = "transfer-sender.json"
LISTEN_TIMEOUT_S = 5.0
RECEIVER_EXIT_S = 10.0


class TransferScheme(Scheme):
    def __init__(self, request: RecoveryRequest, size_bytes: int,
                 resolver: CongestionControlResolver, probe: TcpProbeSetup | None = None,
                 server_port: int = SERVER_PORT) -> None:
        if size_bytes <= 0:
            raise ValueError(f"a transfer needs a positive size, not {size_bytes}")
        self.name = f"transfer-{request.cc}"
        self.cc = request.cc
        self.request = request
        self.size_bytes = size_bytes
        self.resolver = resolver
        self.probe = probe
        self.server_port = server_port
        self.client_port = random.choice(CLIENT_PORTS)
        self.resolution: CcResolution | None = None
        self.receiver: ManagedProcess | None = None
        self.sender: ManagedProcess | None = None
        self.recorder: TcpProbeRecorder | None = None
        self.probe_facts: dict[str, Any] = {"status": "not requested"}
        self._out: Path | None = None

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        try:
            served = stack.enter_context(provide_recovery(self.resolver, self.request))
        except CcUnavailable as e:
            raise SchemeUnavailable(str(e)) from e
        self.resolution = served.resolution
        return served.facts()

    def start_probe(self, ends: Endpoints) -> None:
        """Reserve the client port and start tcp_probe (before the capture and the flow)."""
        if self.probe is None or self.recorder is not None:
            return
        try:
            self.recorder = self.probe.start(ends.out_dir, self.server_port, tag=ends.run_tag)
            self.client_port = self.recorder.client_port
        except ProbeUnavailable as e:
            log.warning("tcp_probe not recorded: %s", e)
            self.probe_facts = {"status": "unavailable", "reason": str(e)}

    def start_receiver(self, ends: Endpoints) -> None:
        self._out = ends.out_dir
        self.receiver = ManagedProcess(
            ends.receiver, [PYTHON, str(ENDPOINT), "receiver", "--port", str(self.server_port),
                            "--bytes", str(self.size_bytes),
                            "--out", str(ends.out_dir / RECEIVER_JSON)],
            ends.out_dir, "transfer-receiver", ends.on_process)
        deadline = time.monotonic() + LISTEN_TIMEOUT_S
        while "listening" not in self.receiver.stdout_path.read_text(errors="replace"):
            if not self.receiver.running():
                raise RuntimeError(f"transfer receiver exited: {self.receiver.stderr_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"transfer receiver not listening after "
                                   f"{LISTEN_TIMEOUT_S:g} s")
            time.sleep(0.02)

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        assert self.resolution is not None, "prepare() first"
        self.start_probe(ends)
        self.sender = ManagedProcess(
            ends.sender, [PYTHON, str(ENDPOINT), "sender", "--dst", ends.receiver_ip,
                          "--port", str(self.server_port), "--cport", str(self.client_port),
                          "--bytes", str(self.size_bytes), "--cc", self.resolution.kernel_name,
                          "--out", str(ends.out_dir / SENDER_JSON)],
            ends.out_dir, "transfer-sender", ends.on_process)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.sender is not None
        code = self.sender.wait(timeout_s)
        if code != 0:
            raise RuntimeError(f"transfer sender exited with status {code}: "
                               f"{self._error(SENDER_JSON) or self.sender.stderr_tail()}")
        # The receiver ends once the sender's FIN arrives (half a round trip later) and
        # writes its report then: stopping it earlier would lose the report.
        assert self.receiver is not None
        try:
            self.receiver.wait(RECEIVER_EXIT_S)
        except StillRunning:
            raise RuntimeError(f"the transfer receiver was still running {RECEIVER_EXIT_S:g} s "
                               "after the sender finished") from None

    def stop_sender(self) -> None:
        if self.sender is not None:
            self.sender.stop()

    def stop(self) -> None:
        for proc in (self.sender, self.receiver):
            if proc is not None:
                proc.stop()
        if self.recorder is not None:
            self.probe_facts = self.recorder.finish()

    def _error(self, name: str) -> str:
        if self._out is None:
            return ""
        try:
            return str(json.loads((self._out / name).read_text()).get("error", ""))
        except (OSError, ValueError):
            return ""

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.resolution is not None
        sender = _read(ends.out_dir / SENDER_JSON, "sender")
        receiver = _read(ends.out_dir / RECEIVER_JSON, "receiver")
        expected = self.resolution.kernel_name
        facts: dict[str, Any] = {
            "cc_requested": self.cc, "recovery": self.request.recovery,
            "cc_used": sender.get("cc_read"),
            "cc_used_at_end": sender.get("cc_read_at_end"),
            "cc_provider": self.resolution.provider,
            "cc_source_sha256": self.resolution.source_sha256,
            "bytes_requested": self.size_bytes, "bytes_received": receiver.get("bytes"),
            "client_port": self.client_port, "server_port": self.server_port,
            "tcp_info": sender.get("tcp_info"), "tcp_probe": self.probe_facts}
        for side, report in (("sender", sender), ("receiver", receiver)):
            if "error" in report:
                raise RunInvalid(f"the transfer {side} failed: {report['error']}")
        for key in ("cc_read", "cc_read_at_end"):
            if sender.get(key) != expected:
                raise RunInvalid(f"congestion control mismatch: asked for {expected}, the "
                                 f"socket reported {sender.get(key)!r}")
        if receiver.get("bytes") != self.size_bytes or receiver.get("bytes_after_expected"):
            raise RunInvalid(f"the receiver read {receiver.get('bytes')} bytes (then "
                             f"{receiver.get('bytes_after_expected')} more), not exactly "
                             f"{self.size_bytes}")
        if sender.get("reply") != "k":
            raise RunInvalid("the receiver's reply after the last byte never reached the sender")
        return facts

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "transfer", "cc": self.cc,
                "recovery": self.request.recovery, "size_bytes": self.size_bytes}


def _read(path: Path, side: str) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError) as e:
        raise RunInvalid(f"the transfer {side} wrote no report ({path.name}): {e}") from None
