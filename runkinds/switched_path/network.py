"""The switched path: sender -- Open vSwitch -- TraceLink -- receiver.

The switch is an Open vSwitch bridge (kernel datapath when the openvswitch
module is loaded, else the userspace `netdev` datapath; `SwitchedPath.datapath`
says which) with `fail_mode=secure` under one remote OpenFlow controller that
carries out a drop plan (controllers/). Between the switch and the receiver,
a TraceLink in fixed-rate mode is the bottleneck: `rate_mbps` each way and
`delay_ms` each way (round trip 2 x delay_ms), with a droptail or infinite queue.

        from runkinds.switched_path.network import SwitchedPath, SwitchedPathConfig

    cfg = SwitchedPathConfig(plan=DropPlan.parse("heavy"), controller="auto",
                             rate_mbps=10, delay_ms=20, tcp_port=5001)
    with SwitchedPath(cfg, log_dir=out, active=active) as path:   # built, controller ready
        before = path.ping_rtts(5)          # ICMP crosses the controller
        path.receiver.popen(...); path.sender.popen(...)   # the transfer to tcp_port
        path.check_alive()                  # ControllerError / EmulatorFailed if a piece died
        after = path.ping_rtts(5)           # after the plan: the direct flow
        path.drop_log()                     # controllers.drop_log.DropLog
        path.plan_problems()                # [] when exactly the plan was dropped
        path.describe()                     # datapath, controller, ports, sysctls: for meta.json
    # leaving the block tears down exactly what was built

A run may add loss-detection sysctls of the sender's namespace (`sender_sysctls`) and a cap
on the receiver's advertised window (`receiver_window`: kernel/window_cap.py, window
scaling off at the receiver); both are recorded (sysctls.json, `window_cap_stats()`).

Names carry the run's prefix (`active.prefix`): hosts <p>s and <p>r, the
bridge <p>x, the link's middle <p>xe, so runs side by side never collide; each
run's controller listens on 127.0.0.1 on a port of its own. The run's folder
gets controller-log.jsonl (every drop), controller-stderr.txt, the link's logs,
and sysctls.json (every net.ipv4.tcp_* setting of both hosts' namespaces).
"""
from __future__ import annotations

import json
import logging
import re
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mininet.net import Mininet
from mininet.node import Host, OVSSwitch

from controllers.drop_log import DropLog, plan_problems
from controllers.launcher import ControllerChoice, ControllerProcess, choose_controller
from controllers.plan_logic import ControllerConfig
from core.active_runs import ActiveRun
from core.errors import Unavailable
from core.paths import ProjectPaths
from kernel.offloads import disable_offloads
from kernel.window_cap import WindowCap, WindowCapError, run_in_namespace
from topologies.network_start import GuardedOVSSwitch, NetworkStartError
from runkinds.switched_path.config import SwitchedPathConfig
from topologies.trace_link import TraceLink
from topologies.guarded_network import RECEIVER_IP, HostPair

log = logging.getLogger(__name__)

# The native programs this module starts (the receiver's window cap): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("bpf",)

SUBNET = "10.0.0.0/24"
SENDER_PORT = 1      # OpenFlow port numbers on the bridge (ofport_request)
RECEIVER_PORT = 2
INITIAL_CWND = 10
# Set in both hosts' namespaces: SACK on (the paper's flows used it), no cached metrics from an
# earlier connection, and no early retransmit / tail loss probe (2011 kernels had neither).
SYSCTLS = {"net.ipv4.tcp_sack": "1", "net.ipv4.tcp_no_metrics_save": "1",
           "net.ipv4.tcp_early_retrans": "0"}
OVS_MODULE = Path("/sys/module/openvswitch")
# Hosts, switch, link, the controller up and the switch connected to it (its own deadline,
# ready_timeout_s, is within this); a node's shell that dies fails it at once.
NETWORK_START_TIMEOUT_S = 90.0
PORT_TIMEOUT_S = 10.0  # for Open vSwitch to number a port it was given
WINDOW_SCALING = "net.ipv4.tcp_window_scaling"
WINDOW_CAP_OBJECT = "window_cap.bpf.o"  # native/bpf/window_cap.bpf.c


class OvsUnavailable(Unavailable):
    """Open vSwitch is not installed or not running."""


class PathSetupError(RuntimeError):
    """A setting of the path could not be applied or read back."""


def ovs_datapath() -> str:
    """'kernel' when the openvswitch module is loaded, else 'user' (netdev)."""
    return "kernel" if OVS_MODULE.is_dir() else "user"


def check_ovs() -> None:
    try:
        out = subprocess.run(["ovs-vsctl", "--timeout=3", "show"], capture_output=True,
                             text=True, timeout=10)
    except FileNotFoundError:
        raise OvsUnavailable("Open vSwitch is not installed (ovs-vsctl missing): run "
                             "./setup/install.sh (package openvswitch-switch)") from None
    except subprocess.TimeoutExpired:
        out = None
    if out is None or out.returncode != 0:
        detail = (out.stderr.strip() if out is not None else "timed out") or "no output"
        raise OvsUnavailable(f"Open vSwitch is not running (ovs-vsctl show: {detail}): start "
                             "it with ./setup/start-ovs.sh")


@dataclass(frozen=True)
class _Remote:
    """What OVSSwitch.start needs of a controller, without a Mininet node for it."""
    name: str
    port: int
    protocol: str = "tcp"

    def IP(self) -> str:  # noqa: N802 (Mininet's name)
        return "127.0.0.1"


class SwitchedPath(HostPair):
    """The switched path's network and its controller (both torn down on exit)."""

    start_timeout_s = NETWORK_START_TIMEOUT_S
    what = "the switched path"

    def __init__(self, config: SwitchedPathConfig, *, log_dir: Path, active: ActiveRun,
                 paths: ProjectPaths | None = None) -> None:
        super().__init__(active)
        self.config = config
        self.log_dir = log_dir
        self.paths = paths or ProjectPaths()
        self.datapath = ovs_datapath()
        self.switch: OVSSwitch | None = None
        self.controller: ControllerProcess | None = None
        self.choice: ControllerChoice | None = None
        self.sysctls: dict[str, dict[str, str]] = {}
        self.window_cap: WindowCap | None = None

    @property
    def bridge(self) -> str:
        return f"{self.prefix}x"

    def _refuse(self) -> None:
        # Everything that can be refused is refused before anything is built.
        self.choice = choose_controller(self.config.controller, self.paths.root)
        check_ovs()
        self.log_dir.mkdir(parents=True, exist_ok=True)

    def _build(self, net: Mininet) -> None:
        assert self.choice is not None
        cfg = self.config
        sender, receiver = self.add_hosts(net)
        self.record_hosts(net)
        dpid = f"{int(self.prefix[2:], 16):016x}" if re.fullmatch(r"nr[0-9a-f]+", self.prefix) \
            else None
        # Mininet sets up a node class once, on its first node, and counts a class as set up
        # when a base class is: a plain Node made first in this process (a trace path's
        # middle node) leaves OVSSwitch without its OVSVersion. Set it up here, after
        # check_ovs() has made sure ovs-vsctl answers.
        if not hasattr(GuardedOVSSwitch, "OVSVersion"):
            GuardedOVSSwitch.setup()
        self.switch = net.addSwitch(self.bridge, cls=GuardedOVSSwitch, failMode="secure",
                                    datapath=self.datapath, protocols="OpenFlow10", dpid=dpid)
        self.active.add(self.switch.pid, f"mininet:{self.switch.name}")
        self.active.add_bridge(self.bridge)
        net.addLink(sender, self.switch, port2=SENDER_PORT)
        # Mininet's words, as TCLink means them: bw and delay each way.
        self.link = net.addLink(
            self.switch, receiver, cls=TraceLink, port1=RECEIVER_PORT, bw=cfg.rate_mbps,
            delay=f"{cfg.delay_ms}ms", queue=cfg.queue, log_dir=self.log_dir,
            on_process=self.active.add, autostart=False,
            # Behind a switch, as the shared bottleneck, where placement was measured to help
            # one experiment only; PRR's recoveries are eBPF ones (topologies/cpu_placement.py).
            refuse_placement="behind Open vSwitch: not measured there")
        net.build()
        for host in (sender, receiver):
            host.cmd("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        net.staticArp()
        for node, intf in ((sender, sender.defaultIntf()),
                           (self.switch, self.switch.intfs[SENDER_PORT])):
            disable_offloads(node, str(intf))
        self._configure_tcp(sender, receiver)

        ctl_config = ControllerConfig(cfg.plan, SENDER_PORT, RECEIVER_PORT, cfg.tcp_port,
                                      self.log_dir / "controller-log.jsonl", cfg.quiet_s)
        self.controller = ControllerProcess(self.choice, ctl_config, self.log_dir,
                                            on_process=self.active.add, root=self.paths.root)
        self.controller.start()
        assert self.controller.port is not None
        self.switch.start([_Remote(f"c{self.controller.port}", self.controller.port)])
        self._check_ports()
        self.controller.wait_ready(cfg.ready_timeout_s, dpid=self.switch.dpid)
        assert self.link is not None
        self.link.start()

    def _configure_tcp(self, sender: Host, receiver: Host) -> None:
        cfg = self.config
        for host in (sender, receiver):
            wanted = dict(SYSCTLS)
            if host is sender:  # the run's own loss-detection settings: the sender's only
                wanted.update(cfg.sender_sysctls)
            elif cfg.receiver_window is not None:  # the cap reads the window field as bytes
                wanted[WINDOW_SCALING] = "0"
            for key, value in wanted.items():
                host.cmd("sysctl", "-qw", f"{key}={value}")
            intf = str(host.defaultIntf())
            out = host.cmd("ip", "route", "replace", SUBNET, "dev", intf, "proto", "kernel",
                           "scope", "link", "src", host.IP(), "initcwnd", str(INITIAL_CWND))
            route = host.cmd("ip", "route", "show", SUBNET)
            if f"initcwnd {INITIAL_CWND}" not in route:
                raise PathSetupError(f"{host.name}: route initcwnd {INITIAL_CWND} not set: "
                                     f"{out.strip()} / {route.strip()}")
            values = _read_sysctls(host)
            for key, want in wanted.items():
                if values.get(key) != want:
                    raise PathSetupError(f"{host.name}: {key} is {values.get(key)!r}, "
                                         f"not {want} (is it per network namespace here?)")
            self.sysctls[host.name] = values
        (self.log_dir / "sysctls.json").write_text(json.dumps(
            {"sender": self.sysctls[sender.name], "receiver": self.sysctls[receiver.name]},
            indent=1, sort_keys=True))
        if cfg.receiver_window is not None:
            self.window_cap = WindowCap(self.paths.build_dir / "bpf" / WINDOW_CAP_OBJECT,
                                        str(receiver.defaultIntf()),
                                        run_in_namespace(receiver.pid))
            try:
                self.window_cap.attach(cfg.tcp_port, cfg.receiver_window)
            except WindowCapError as e:
                raise PathSetupError(f"{receiver.name}: the receiver's window cap: {e}") from e

    def window_cap_stats(self) -> dict[str, Any] | None:
        """What the receiver's window cap did (None when the run has none)."""
        return None if self.window_cap is None else self.window_cap.stats().to_dict()

    def _check_ports(self) -> None:
        assert self.switch is not None
        for port, intf in self.switch.intfs.items():
            if port == 0:
                continue
            # ovs-vswitchd assigns the number after ovs-vsctl returns: '[]' until it has (a
            # busy machine's userspace datapath took seconds); -1 means it refused the port.
            deadline = time.monotonic() + PORT_TIMEOUT_S
            while True:
                got = self.switch.cmd("ovs-vsctl", "get", "Interface", str(intf),
                                      "ofport").strip()
                if got != "[]" or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            if got != str(port):
                waited = f" after {PORT_TIMEOUT_S:g} s" if got == "[]" else ""
                raise PathSetupError(f"bridge {self.bridge}: {intf} is OpenFlow port {got!r}"
                                     f"{waited}, expected {port}")

    def check_alive(self) -> None:
        """Raise ControllerError or EmulatorFailed if a piece of the path died."""
        assert self.controller is not None and self.link is not None
        self.controller.check_alive()
        self.link.check_alive()

    def ping_rtts(self, count: int = 5, interval_s: float = 0.2) -> list[float]:
        """Round-trip times (ms) of `count` pings from the sender to the receiver."""
        out = self.sender.cmd("ping", "-n", "-c", str(count), "-i", f"{interval_s:g}",
                              "-W", "2", RECEIVER_IP)
        return [float(m) for m in re.findall(r"time=([0-9.]+) ms", out)]

    def drop_log(self) -> DropLog:
        assert self.controller is not None
        return self.controller.drop_log()

    def plan_problems(self) -> list[str]:
        return plan_problems(self.config.plan, self.drop_log())

    def describe(self) -> dict[str, Any]:
        return {"config": {**asdict(self.config), "plan": self.config.plan.to_dict()},
                "datapath": "kernel (system)" if self.datapath == "kernel"
                else "userspace (netdev)",
                "bridge": self.bridge,
                "controller": self.controller.describe() if self.controller else None,
                "sysctls": "sysctls.json", "initcwnd": INITIAL_CWND}

    def _stop_between(self) -> None:
        # After the link, before the hosts: the switch takes its ends of the sender's link
        # with it; the hosts' go with them.
        if self.window_cap is not None:
            self.window_cap.detach()
        try:
            if self.switch is not None:
                self.switch.stop()
        except NetworkStartError as e:  # its shell died: the controller still goes
            log.warning("teardown: %s", e)
        finally:
            self.switch = None
            if self.controller is not None:
                self.controller.stop()


def _read_sysctls(host: Host) -> dict[str, str]:
    out = host.cmd("sysctl", "-a", "-r", r"^net\.ipv4\.tcp_")
    values: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition(" = ")
        if sep:
            values[key.strip()] = value.strip()
    return values
