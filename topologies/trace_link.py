"""TraceLink: a Mininet link whose middle is our trace-driven emulator.

    net.addLink(sender, receiver, cls=TraceLink, data_trace="traces/X.down",
                ack_trace="traces/X.up", delay_ms=20, queue="infinite", log_dir=out)
    ...
    link.start()   # the trace clock starts here

(or data=LinkSide(rate_mbps=12), ack=LinkSide(...) for fixed rates.)

Under the hood the link is two veth pairs through a hidden namespace node that
runs `netrepro-link`, bridging its two interfaces. The data direction (sender to
receiver) crosses the data trace queue then the fixed delay; the ack direction
crosses the fixed delay then the ack trace queue, as in `mm-delay D mm-link DATA ACK`.
Call start() once the network is up, so the trace clock starts with the experiment.
"""
from __future__ import annotations

import logging
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from mininet.link import Link
from mininet.node import Node

from core.paths import ProjectPaths
from topologies.link_side import LinkSide
from topologies.offloads import disable_offloads

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 10.0
# The emulator's timing loop runs under SCHED_FIFO when the link is slow enough that it needs
# little CPU (cellular traces need a few percent of one core): the set-up and teardown of runs
# side by side then cannot delay its deliveries. A fast link would starve everything else.
REALTIME_MAX_RATE_MBPS = 100.0


class EmulatorFailed(RuntimeError):
    """The link emulator would not start, or died while the run was going on."""


def _side(direction: str, side: LinkSide | None, trace: str | Path | None) -> LinkSide:
    """A direction given as a LinkSide or as a trace file path (exactly one of them)."""
    if (side is None) == (trace is None):
        raise ValueError(f"TraceLink: give exactly one of {direction}= (a LinkSide) and "
                         f"{direction}_trace= (a trace file)")
    if side is not None:
        return side
    path = Path(trace)  # type: ignore[arg-type]
    if not path.is_file():
        raise FileNotFoundError(f"TraceLink: {direction}_trace {path} is not a file")
    return LinkSide(trace=path)


def _random_mac() -> str:
    """A locally administered unicast MAC, as Mininet's own randMac makes."""
    octets = [random.randrange(256) for _ in range(6)]
    octets[0] = (octets[0] & 0xFC) | 0x02
    return ":".join(f"{o:02x}" for o in octets)


class TraceLink:
    """A sender<->receiver link through the emulator; quacks like a Mininet Link."""

    def __init__(self, node1: Node, node2: Node, port1: int | None = None,
                 port2: int | None = None, addr1: str | None = None, addr2: str | None = None,
                 *, log_dir: Path, data: LinkSide | None = None, ack: LinkSide | None = None,
                 data_trace: str | Path | None = None, ack_trace: str | Path | None = None,
                 emulator: Path | None = None,
                 delay_ms: int = 0, queue: str = "infinite", ack_queue: str | None = None,
                 once: bool = False, span_ms: int | None = None,
                 on_process: Callable[[int, str], None] | None = None,
                 **_mininet_options: Any) -> None:
        self.data = _side("data", data, data_trace)
        self.ack = _side("ack", ack, ack_trace)
        self.emulator = emulator or ProjectPaths().native_binary("link", "netrepro-link")
        self.log_dir = log_dir
        self.delay_ms = delay_ms
        self.queue = queue
        self.ack_queue = ack_queue or queue
        self.once = once
        self.span_ms = span_ms  # no service later than this after the start
        self.realtime = max(self.data.mean_rate_mbps(),
                            self.ack.mean_rate_mbps()) <= REALTIME_MAX_RATE_MBPS
        self._on_process = on_process or (lambda pid, marker: None)
        self.process: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self.middle = Node(f"{node1.name}e", inNamespace=True)
        self._on_process(self.middle.pid, f"mininet:{self.middle.name}")
        self.left = Link(node1, self.middle, port1=port1, addr1=addr1 or _random_mac(),
                         addr2=_random_mac())
        self.right = Link(self.middle, node2, port2=port2, addr1=_random_mac(),
                          addr2=addr2 or _random_mac())
        # What Mininet and callers see: the sender's and the receiver's interfaces.
        self.intf1, self.intf2 = self.left.intf1, self.right.intf2

    @property
    def data_log(self) -> Path:
        return self.log_dir / "data.log"

    @property
    def ack_log(self) -> Path:
        return self.log_dir / "ack.log"

    @property
    def stats_file(self) -> Path:
        return self.log_dir / "link-stats.json"

    def emulator_args(self) -> list[str]:
        side_a, side_b = self.left.intf2.name, self.right.intf1.name
        args = [str(self.emulator), "--iface-a", side_a, "--iface-b", side_b]
        args += self.data.args("a2b") + self.ack.args("b2a")
        args += ["--a2b-delay-ms", str(self.delay_ms), "--b2a-delay-ms", str(self.delay_ms),
                 "--a2b-order", "queue-delay", "--b2a-order", "delay-queue",
                 "--a2b-queue", self.queue, "--b2a-queue", self.ack_queue,
                 "--a2b-log", str(self.data_log), "--b2a-log", str(self.ack_log),
                 "--a2b-lateness", str(self.log_dir / "data-lateness.txt"),
                 "--b2a-lateness", str(self.log_dir / "ack-lateness.txt"),
                 "--stats", str(self.stats_file),
                 "--ready-file", str(self.log_dir / "link-ready")]
        if self.once:
            args.append("--once")
        if self.span_ms is not None:
            args += ["--span-ms", str(self.span_ms)]
        if self.realtime:
            args.append("--realtime")
        return args

    def start(self) -> None:
        """Turn offloads off on the whole path and start the emulator."""
        for intf in (self.intf1, self.left.intf2, self.right.intf1, self.intf2):
            disable_offloads(intf.node, intf.name)
        for intf in (self.left.intf2, self.right.intf1):
            self.middle.cmd("ip", "link", "set", intf.name, "up")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        ready = self.log_dir / "link-ready"
        ready.unlink(missing_ok=True)
        stderr = open(self.log_dir / "link-stderr.txt", "wb")
        process = self.middle.popen(self.emulator_args(), stdout=stderr, stderr=stderr)
        self.process = process
        stderr.close()
        self._on_process(process.pid, self.emulator.name)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.exists():
            self.check_alive()
            if time.monotonic() > deadline:
                raise EmulatorFailed(f"link emulator not ready after {READY_TIMEOUT_S:.0f} s: "
                                     f"{self.stderr_tail()}")
            time.sleep(0.02)

    def stderr_tail(self, lines: int = 5) -> str:
        path = self.log_dir / "link-stderr.txt"
        if not path.exists():
            return "(no output)"
        text = path.read_text(errors="replace").strip().splitlines()[-lines:]
        return " | ".join(text) or "(no output)"

    def check_alive(self) -> None:
        if self.process is None:
            raise EmulatorFailed("link emulator was never started")
        code = self.process.poll()
        if code is not None:
            raise EmulatorFailed(f"link emulator exited with status {code}: {self.stderr_tail()}")

    def stop_emulator(self) -> int | None:
        """SIGTERM the emulator so it flushes its logs; returns its exit status."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def stop(self) -> None:
        """Tear down exactly what this link made (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self.stop_emulator()
        self.left.stop()
        self.right.stop()
        self.middle.terminate()

    delete = stop

    def status(self) -> str:
        return "(OK OK)" if not self._stopped else "(stopped)"

    def __str__(self) -> str:
        return f"{self.intf1}<->{self.intf2} via {self.middle.name}"
