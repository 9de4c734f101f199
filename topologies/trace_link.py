"""TraceLink: a Mininet link whose middle is our trace-driven emulator.

With Mininet's own words, as TCLink means them (see docs/trace-link.md):

    net.addLink(a, b, cls=TraceLink, delay="20ms", bw=10, max_queue_size=100)
    net.start()    # the emulator already runs: 20 ms each way, 10 Mbit/s each way

With traces (the trace clock starts on start(), with the experiment):

    net.addLink(sender, receiver, cls=TraceLink, data_trace="traces/X.down",
                ack_trace="traces/X.up", delay_ms=20, queue="infinite", log_dir=out)
    ...
    link.start()   # the trace clock starts here

(or data=LinkSide(rate_mbps=12), ack=LinkSide(...) for fixed rates, rate_steps= in a
LinkSide for a fixed rate that changes at given times; data_loss=0.01 for random loss after
the data direction's queue.) A keyword the link would otherwise ignore (loss=, jitter=,
use_htb=, ...) raises TraceLinkOptionError.

Under the hood the link is two veth pairs through a hidden namespace node that
runs `netrepro-link`, bridging its two interfaces. The data direction (sender to
receiver) crosses the data trace queue then the fixed delay; the ack direction
crosses the fixed delay then the ack trace queue, as in `mm-delay D mm-link DATA ACK`.
Call start() once the network is up, so the trace clock starts with the experiment.
"""
from __future__ import annotations

import logging
import random
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from mininet.link import Intf, Link
from mininet.node import Node

from core.paths import ProjectPaths
from core.processes import stop_child
from kernel import receive_steering
from kernel.htb import htb_rate_steps
from kernel.offloads import disable_offloads
from topologies import queue_log as queue_log_files
from topologies.cpu_placement import Placement, place
from topologies.link_side import LinkSide
from topologies.network_start import GuardedNode, NetworkStartError, entering_hint
from topologies.trace_link_options import (TraceLinkOptionError, check_loss,
                                           check_loss_seed, check_peer_delays,
                                           check_rate_steps, loss_args, peer_delay_args)

log = logging.getLogger(__name__)

# The native programs this module starts (the emulator): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("link",)

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


# Interface options Mininet's Intf.config honours: passed to the outer interfaces.
INTF_WORDS = frozenset({"ip", "mac", "ifconfig", "up"})
# TCLink words with a meaning here, per direction (params1: node1's egress = the data
# direction; params2: node2's egress = the ack direction; top level: both).
TC_WORDS = frozenset({"bw", "delay", "max_queue_size"})
# TCLink words we cannot honour, and why (a silent ignore would be a wrong experiment).
REFUSED_WORDS = {
    "loss": "TCLink's loss (a percentage, netem's, before the queue) is not taken: give "
            "data_loss= / ack_loss= (fractions; after the queue, as mahimahi's mm-loss)",
    "jitter": "delay is fixed (jitter would reorder packets; use a trace for variable service)",
    "use_htb": "the rate is the emulator's own, not a tc qdisc",
    "use_hfsc": "the rate is the emulator's own, not a tc qdisc",
    "use_tbf": "the rate is the emulator's own, not a tc qdisc",
    "enable_red": "the queue is droptail or infinite (RED is not emulated)",
    "enable_ecn": "ECN marking is a queue of its own: queue='ecn:k=K,packets=N'",
    "speedup": "the rate is the emulator's own, not a tc qdisc",
    "latency_ms": "tbf's latency has no meaning here: use max_queue_size= or queue=",
    "gro": "offloads are always turned off on the whole path",
    "txo": "offloads are always turned off on the whole path",
    "rxo": "offloads are always turned off on the whole path",
}
# Without bw= or a trace a direction is served as fast as the emulator can forward: a rate
# far above its ceiling (see `./repro bench link`).
UNLIMITED_RATE_MBPS = 100_000.0
IFNAME_MAX = 15
_DELAY_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec)\s*$")
_DELAY_SCALE_MS = {"us": 0.001, "usec": 0.001, "ms": 1.0, "msec": 1.0, "s": 1000.0,
                   "sec": 1000.0}


def parse_delay(value: object) -> int:
    """Mininet's delay string ('20ms', '1s', '500us') as whole milliseconds."""
    if not isinstance(value, str):
        raise TraceLinkOptionError(
            f"TraceLink: delay={value!r}: write it as Mininet does, with a unit, e.g. "
            "delay='20ms' (or give delay_ms=20)")
    match = _DELAY_RE.match(value)
    if match is None:
        raise TraceLinkOptionError(f"TraceLink: delay={value!r} is not a time such as '20ms'")
    ms = float(match.group(1)) * _DELAY_SCALE_MS[match.group(2)]
    if abs(ms - round(ms)) > 1e-9:
        raise TraceLinkOptionError(f"TraceLink: delay={value!r}: the emulator's delay is a "
                                   "whole number of milliseconds")
    return int(round(ms))


def _check_bw(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise TraceLinkOptionError(f"TraceLink: bw={value!r} must be a rate in Mbit/s > 0 "
                                   "(as TCLink's bw=)")
    return float(value)


def _check_queue_size(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TraceLinkOptionError(f"TraceLink: max_queue_size={value!r} must be a number of "
                                   "packets >= 1")
    return f"droptail:packets={value}"


def refuse_unknown(words: dict[str, Any], where: str = "") -> None:
    """Fail on every keyword TraceLink would otherwise ignore, naming why."""
    if not words:
        return
    reasons = [f"{k} ({REFUSED_WORDS[k]})" if k in REFUSED_WORDS else f"{k} (unknown)"
               for k in sorted(words)]
    raise TraceLinkOptionError(
        f"TraceLink does not support {', '.join(reasons)}{where}. It takes Mininet's "
        "delay='20ms' (each way), bw= (Mbit/s), max_queue_size= (packets), port1/port2, "
        "intfName1/2, addr1/2, params1/2, or its own data_trace=/ack_trace=, data=/ack=, "
        "delay_ms=, data_delays_ms=/ack_delays_ms=, queue=, queue_log=, data_loss=/ack_loss=, "
        "loss_seed=, data_path=, refuse_placement=")


@dataclass(frozen=True)
class _Direction:
    """What one direction was asked for through Mininet's words."""
    bw: float | None = None
    delay_ms: int | None = None
    queue: str | None = None


def _split_params(params: dict[str, Any] | None, which: str) -> tuple[dict[str, Any], _Direction]:
    """params1/params2: interface words for the outer interface, TC words for its egress."""
    params = dict(params or {})
    intf_words = {k: params.pop(k) for k in list(params) if k in INTF_WORDS}
    tc = {k: params.pop(k) for k in list(params) if k in TC_WORDS}
    refuse_unknown(params, f" in {which}")
    return intf_words, _Direction(
        bw=_check_bw(tc["bw"]) if "bw" in tc else None,
        delay_ms=parse_delay(tc["delay"]) if "delay" in tc else None,
        queue=_check_queue_size(tc["max_queue_size"]) if "max_queue_size" in tc else None)


def _one(name: str, *values: Any) -> Any:
    """The one value given among several spellings of the same setting."""
    given = [v for v in values if v is not None]
    if len(given) > 1 and any(v != given[0] for v in given[1:]):
        raise TraceLinkOptionError(f"TraceLink: the {name} is given more than once, "
                                   f"with different values: {given}")
    return given[0] if given else None


def htb_commands(dev: str, rate_mbps: float, limit_packets: int) -> list[list[str]]:
    """tc commands for an HTB class of `rate_mbps` on `dev`'s egress with a pfifo of
    `limit_packets`: burst and cburst one full frame, so it paces every packet rather than
    letting several through back to back as its default burst (rate / HZ + MTU) would."""
    return [["tc", *args] for args in htb_rate_steps(
        dev, rate_mbps, ["handle", "10:", "pfifo", "limit", str(limit_packets)],
        burst_bytes=1514)]


class TraceLink(Link):
    """A Mininet link whose middle is the emulator: node1 -- [netrepro-link] -- node2.

    Mininet's words, with TCLink's meaning (each applies to both directions; in
    params1 only node1's egress, the data direction; in params2 node2's, the ack one):
      delay='20ms'        fixed delay each way (40 ms round trip); whole milliseconds
      bw=10               a fixed rate in Mbit/s (default: as fast as the emulator goes)
      max_queue_size=100  a droptail queue of that many packets (default: infinite)
    and Link's port1/port2, intfName1/2, addr1/2, params1/2 (ip=, mac= for the outer
    interfaces), intf/cls1/cls2, fast. Every other keyword (loss, jitter, use_htb,
    enable_red, ...) is refused with the reason.

    netrepro's own words: data_trace=/ack_trace= (trace files) or data=/ack= (LinkSide),
    delay_ms= (both ways), data_delays_ms=/ack_delays_ms= ({IPv4 address: ms}: a delay
    of its own for a host on node1's side, by source in the data direction and by
    destination in the ack one; others get the direction's delay), queue=/ack_queue=
    (queue specs), once=, span_ms=, log_dir=,
    queue_log= (True: a per-packet queue log per direction, data-queue.log and
    ack-queue.log in log_dir), data_loss=/ack_loss= (random loss after the direction's
    queue, a probability in [0, 1); the queue log is then always kept, and the lost packets
    are its `l` lines), loss_seed= (default 1), emulator=, on_process=, autostart=,
    data_path= (the emulator's receive path, 'mmsg' or 'rings'; default: the emulator's, mmsg),
    refuse_placement= (default None: a link fast enough to need it gets a CPU for its emulator
    and steers its hosts' received frames to the others, topologies/cpu_placement.py; a reason:
    never, and `placement` says that reason).

    A link given only Mininet's words starts its emulator at once (`autostart`), so
    `net.start()` is all it needs; one given traces or sides starts on `start()`, so the
    trace clock starts with the experiment. `start()` is idempotent.
    """

    def __init__(self, node1: Node, node2: Node, port1: int | None = None,
                 port2: int | None = None, intfName1: str | None = None,  # noqa: N803
                 intfName2: str | None = None, addr1: str | None = None,  # noqa: N803
                 addr2: str | None = None, intf: type = Intf, cls1: type | None = None,
                 cls2: type | None = None, params1: dict[str, Any] | None = None,
                 params2: dict[str, Any] | None = None, fast: bool = True, *,
                 delay: str | None = None, bw: float | None = None,
                 max_queue_size: int | None = None,
                 log_dir: Path | None = None, data: LinkSide | None = None,
                 ack: LinkSide | None = None, data_trace: str | Path | None = None,
                 ack_trace: str | Path | None = None, emulator: Path | None = None,
                 delay_ms: int | None = None,
                 data_delays_ms: Mapping[str, int] | None = None,
                 ack_delays_ms: Mapping[str, int] | None = None, queue: str | None = None,
                 ack_queue: str | None = None, once: bool = False, span_ms: int | None = None,
                 queue_log: bool = False, data_loss: float | None = None,
                 ack_loss: float | None = None, loss_seed: int = 1,
                 on_process: Callable[[int, str], None] | None = None,
                 autostart: bool | None = None, data_path: str | None = None,
                 refuse_placement: str | None = None, **unknown: Any) -> None:
        refuse_unknown(unknown)
        self.data_loss = check_loss("data_loss", data_loss)
        self.ack_loss = check_loss("ack_loss", ack_loss)
        self.loss_seed = check_loss_seed(loss_seed)
        self.data_delays_ms = check_peer_delays("data_delays_ms", data_delays_ms)
        self.ack_delays_ms = check_peer_delays("ack_delays_ms", ack_delays_ms)
        outer1, dir1 = _split_params(params1, "params1")
        outer2, dir2 = _split_params(params2, "params2")
        both = _Direction(bw=_check_bw(bw) if bw is not None else None,
                          delay_ms=parse_delay(delay) if delay is not None else None,
                          queue=_check_queue_size(max_queue_size)
                          if max_queue_size is not None else None)
        if delay_ms is not None and (not isinstance(delay_ms, int) or delay_ms < 0):
            raise TraceLinkOptionError(f"TraceLink: delay_ms={delay_ms!r} must be a whole "
                                       "number of ms >= 0")
        self.data_delay_ms = _one("data direction's delay", delay_ms, both.delay_ms,
                                  dir1.delay_ms) or 0
        self.ack_delay_ms = _one("ack direction's delay", delay_ms, both.delay_ms,
                                 dir2.delay_ms) or 0
        self.queue = _one("data direction's queue", queue, both.queue, dir1.queue) or "infinite"
        self.ack_queue = _one("ack direction's queue",
                              ack_queue if ack_queue is not None else queue, both.queue,
                              dir2.queue) or self.queue
        data_bw = _one("data direction's rate (bw)", both.bw, dir1.bw)
        ack_bw = _one("ack direction's rate (bw)", both.bw, dir2.bw)
        mininet_only = data is None and ack is None and data_trace is None and ack_trace is None
        self.data = self._side("data", data, data_trace, data_bw, mininet_only)
        self.ack = self._side("ack", ack, ack_trace, ack_bw, mininet_only)
        self.emulator = emulator or ProjectPaths().native_binary("link", "netrepro-link")
        self._own_log_dir = log_dir is None
        self.log_dir = log_dir if log_dir is not None else \
            Path(tempfile.mkdtemp(prefix="netrepro-link-"))
        self.once = once
        # The emulator's receive path (`--data-path`, native/link/README.md); None: its default.
        self.data_path = data_path
        self.refuse_placement = refuse_placement
        self.placement = Placement(why_not="not started")  # start() decides
        self.span_ms = span_ms  # no service later than this after the start
        for name, side in (("data", self.data), ("ack", self.ack)):
            check_rate_steps(name, side.rate_steps, span_ms)
            if side.rate_steps and side.trace is not None:
                raise TraceLinkOptionError(f"TraceLink: the {name} direction's rate steps "
                                           "change a fixed rate, not a trace")
        # Random loss is logged in the queue log (its `l` lines): asking for loss keeps it.
        self.queue_log = queue_log or self.data_loss is not None or self.ack_loss is not None
        self.offloads_off: list[str] = []  # every interface of the path, once started
        self.realtime = max(self.data.mean_rate_mbps(),
                            self.ack.mean_rate_mbps()) <= REALTIME_MAX_RATE_MBPS
        self._on_process = on_process or (lambda pid, marker: None)
        self.process: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self.fast = fast
        port1 = port1 if port1 is not None else node1.newPort()
        middle_name = f"{node1.name}e" + ("" if port1 == node1.portBase else str(port1))
        names = [intfName1 or f"{node1.name}-eth{port1}", f"{middle_name}-a", f"{middle_name}-b",
                 intfName2 or f"{node2.name}-eth{port2 if port2 is not None else node2.newPort()}"]
        too_long = [n for n in names if len(n) > IFNAME_MAX]
        if too_long:
            raise TraceLinkOptionError(f"TraceLink: interface names longer than {IFNAME_MAX} "
                                       f"characters: {too_long} (shorten the node names)")
        self.middle: Node = GuardedNode(middle_name, inNamespace=True)
        self._on_process(self.middle.pid, f"mininet:{self.middle.name}")
        try:
            self.left = Link(node1, self.middle, port1=port1, intfName1=intfName1,
                             intfName2=names[1], addr1=addr1 or _random_mac(),
                             addr2=_random_mac(), cls1=cls1 or intf, cls2=Intf,
                             params1=outer1, fast=fast)
            self.right = Link(self.middle, node2, port2=port2, intfName1=names[2],
                              intfName2=intfName2, addr1=_random_mac(),
                              addr2=addr2 or _random_mac(), cls1=Intf, cls2=cls2 or intf,
                              params2=outer2, fast=fast)
        except BaseException:
            self.middle.terminate()
            raise
        # What Mininet and callers see: node1's and node2's interfaces, owned by this link.
        self.intf1, self.intf2 = self.left.intf1, self.right.intf2
        self.intf1.link = self.intf2.link = self
        if autostart if autostart is not None else mininet_only:
            try:
                self.start()
            except BaseException:
                self.stop()
                raise

    @staticmethod
    def _side(direction: str, side: LinkSide | None, trace: str | Path | None,
              bw: float | None, mininet_only: bool) -> LinkSide:
        """A direction from bw= (or nothing: unlimited) when the link is described in
        Mininet's words only; else exactly one of side / trace / bw, as before."""
        if bw is not None and (side is not None or trace is not None):
            raise TraceLinkOptionError(f"TraceLink: the {direction} direction has both bw= and "
                                       f"{direction}= / {direction}_trace=: give one")
        if bw is not None:
            return LinkSide(rate_mbps=bw)
        if mininet_only:
            return LinkSide(rate_mbps=UNLIMITED_RATE_MBPS)
        return _side(direction, side, trace)

    @property
    def delay_ms(self) -> int:
        """The data direction's fixed delay (the ack direction's is ack_delay_ms)."""
        return self.data_delay_ms

    @property
    def data_log(self) -> Path:
        return self.log_dir / "data.log"

    @property
    def ack_log(self) -> Path:
        return self.log_dir / "ack.log"

    @property
    def data_queue_log(self) -> Path:
        return self.log_dir / queue_log_files.DATA_FILE

    @property
    def ack_queue_log(self) -> Path:
        return self.log_dir / queue_log_files.ACK_FILE

    @property
    def stats_file(self) -> Path:
        return self.log_dir / "link-stats.json"

    def emulator_args(self) -> list[str]:
        side_a, side_b = self.left.intf2.name, self.right.intf1.name
        args = [str(self.emulator), "--iface-a", side_a, "--iface-b", side_b]
        args += self.data.args("a2b") + self.ack.args("b2a")
        args += ["--a2b-delay-ms", str(self.data_delay_ms),
                 "--b2a-delay-ms", str(self.ack_delay_ms)]
        args += peer_delay_args(self.data_delays_ms, self.ack_delays_ms)
        args += loss_args(self.data_loss, self.ack_loss, self.loss_seed)
        args += ["--a2b-order", "queue-delay", "--b2a-order", "delay-queue",
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
        if self.data_path is not None:
            args += ["--data-path", self.data_path]
        if self.placement.placed:
            args += ["--cpu", str(self.placement.emulator_cpu)]
        if self.queue_log:
            args += ["--a2b-queue-log", str(self.data_queue_log),
                     "--b2a-queue-log", str(self.ack_queue_log)]
        return args

    def _prepare_path(self) -> None:
        """Offloads off on the whole path, the middle's interfaces up."""
        for intf in (self.intf1, self.left.intf2, self.right.intf1, self.intf2):
            disable_offloads(intf.node, intf.name)
            self.offloads_off.append(intf.name)
        for intf in (self.left.intf2, self.right.intf1):
            self.middle.cmd("ip", "link", "set", intf.name, "up")

    def forward_in_kernel(self, htb_rate_mbps: float | None = None,
                          htb_limit_packets: int = 1000) -> None:
        """The same path with no emulator: the middle node's kernel redirects every frame
        from one interface to the other (tc ingress, u32, mirred), for `bench link`'s bare path.
        With `htb_rate_mbps`, the frames towards the receiver leave through the kernel's HTB
        shaper at that rate instead (Mininet-HiFi's link: bench/shaper_precision.py).
        Instead of start(), never with it; the rules go with the middle's namespace."""
        if self.process is not None or self._stopped:
            raise EmulatorFailed("forward_in_kernel: the link already started or stopped")
        self._prepare_path()
        a, b = self.left.intf2.name, self.right.intf1.name
        for src, dst in ((a, b), (b, a)):
            for command in (["tc", "qdisc", "add", "dev", src, "ingress"],
                            # u32 matching every frame: matchall is not in every kernel
                            ["tc", "filter", "add", "dev", src, "parent", "ffff:", "protocol",
                             "all", "u32", "match", "u32", "0", "0",
                             "action", "mirred", "egress", "redirect", "dev", dst]):
                self._middle_tc(command, "")
        if htb_rate_mbps is not None:
            for command in htb_commands(b, htb_rate_mbps, htb_limit_packets):
                self._middle_tc(command, "the kernel's HTB qdisc (CONFIG_NET_SCH_HTB) is needed")

    def _middle_tc(self, command: list[str], needs: str) -> None:
        out = self.middle.cmd(*command, "&&", "echo", "tc-ok")
        if "tc-ok" not in out:
            raise EmulatorFailed(f"{' '.join(command)}: {out.strip()}"
                                 + (f" ({needs})" if needs else ""))

    def start(self) -> None:
        """Turn offloads off on the whole path and start the emulator (once)."""
        if self.process is not None:
            self.check_alive()
            return
        if self._stopped:
            raise EmulatorFailed("the link was stopped; it cannot start again")
        self._prepare_path()
        self.placement = self._place()
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

    def _place(self) -> Placement:
        """A CPU for the emulator, and the hosts' received frames steered off it, when the
        link is fast enough to need it (topologies/cpu_placement.py); else why not."""
        if self.refuse_placement is not None:
            return Placement(why_not=self.refuse_placement)
        placement = place((self.data, self.ack), self.realtime,
                          steering=receive_steering.available())
        if not placement.placed:
            return placement
        sent_into = [(intf.node, intf.name) for intf in (self.intf1, self.intf2)]
        try:
            receive_steering.steer_all(sent_into, placement.host_rx_cpus)
        except receive_steering.ReceiveSteeringError as e:
            placement.release()
            log.warning("%s: emulator not placed: %s", self, e)
            return Placement(why_not=str(e))
        return placement

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
            tail = self.stderr_tail()
            raise EmulatorFailed(f"link emulator exited with status {code}: {tail}"
                                 + entering_hint(tail))

    def stop_emulator(self) -> int | None:
        """SIGTERM the emulator so it flushes its logs; returns its exit status."""
        if self.process is None:
            return None
        return stop_child(self.process, grace_s=10)

    def stop(self) -> None:
        """Tear down exactly what this link made (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self.stop_emulator()
        self.placement.release()
        for link in (self.left, self.right):
            if link.intf1 is not None and link.intf2 is not None:
                try:
                    link.stop()
                except NetworkStartError as e:  # a shell that died cannot delete: go on
                    log.warning("%s: %s", self, e)
        self.middle.terminate()
        if self._own_log_dir:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def delete(self) -> None:
        self.stop()

    def status(self) -> str:
        return "(OK OK)" if not self._stopped else "(stopped)"

    def __str__(self) -> str:
        return f"{self.intf1}<->{self.intf2} via {self.middle.name}"
