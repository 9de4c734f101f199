"""`repro doctor`: one line per prerequisite, a fix for each failure.

Required checks failing make the exit status 1 (the suite cannot run);
warnings name what a particular experiment or scheme will lack.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any, Callable

from app.commands.shared import traces_of
from core.checks import INSTALL, Check
from core.paths import ProjectPaths
from core.traces import TraceError, TraceSet

__all__ = ["Check", "run_doctor"]

NAME = "doctor"
PYTHON = "/usr/bin/python3"


def _run(args: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def check_root() -> list[Check]:
    ok = os.geteuid() == 0
    return [Check("root", ok, "running as root" if ok else f"running as uid {os.geteuid()}",
                  "run with sudo (namespaces, raw sockets and BPF need root)")]


def check_python() -> list[Check]:
    checks = []
    for module, required, why in (("mininet", True, "topologies"), ("numpy", True, "metrics"),
                                  ("matplotlib", True, "figures"), ("dpkt", True, "pcap analysis"),
                                  ("rich", True, "progress"), ("jinja2", True, "the report"),
                                  ("pytest", True, "tests"),
                                  ("distributed", False, "--cluster and repro worker")):
        checks.append(_python_module(module, why, required))
    return checks


def check_experiment_modules(traces: TraceSet) -> list[Check]:
    """The Python modules a paper's own commands need (Experiment.python_modules)."""
    from experiments.registry import all_experiments
    return [_python_module(module, f"{exp.name}: {why}", required=False)
            for exp in all_experiments(traces) for module, why in exp.python_modules]


def _python_module(module: str, why: str, required: bool) -> Check:
    result = _run([PYTHON, "-c",
                   f"import {module}; print(getattr({module}, '__version__', ''))"])
    ok = result.returncode == 0
    detail = (f"{module} {result.stdout.strip()}".strip() if ok
              else f"cannot import {module} ({why})")
    return Check(f"python {module}", ok, detail, INSTALL, required)


def check_commands() -> list[Check]:
    checks = []
    for cmd, required, why in (("mnexec", True, "Mininet"), ("iperf3", True, "TCP schemes"),
                               ("ethtool", True, "offloads off"), ("ip", True, "links"),
                               ("ping", True, "reachability checks, Mininet pingAll"),
                               ("ss", True, "congestion-control check"),
                               ("tcpdump", False, "packet captures"),
                               ("bpftool", False, "eBPF congestion controls"),
                               ("clang", False, "building eBPF congestion controls")):
        path = shutil.which(cmd)
        checks.append(Check(f"command {cmd}", path is not None,
                            path or f"not found ({why})", INSTALL, required))
    return checks


def check_native(paths: ProjectPaths) -> list[Check]:
    """Every native program some kind of run starts (the modules that start one declare it:
    core/code_identity.py)."""
    from runkinds.registry import native_programs
    checks = []
    for component, name in native_programs():
        path = paths.build_dir / component / name
        checks.append(Check(f"built {name}", path.is_file(),
                            str(path.relative_to(paths.root)) if path.is_file() else "not built",
                            INSTALL))
    return checks


def check_kernel() -> list[Check]:
    checks = [Check("network namespaces", Path("/proc/self/ns/net").exists(),
                    "/proc/self/ns/net", "a kernel with CONFIG_NET_NS")]
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close()
        checks.append(Check("AF_PACKET raw sockets", True, "available"))
    except OSError as e:
        checks.append(Check("AF_PACKET raw sockets", False, str(e),
                            "run as root on a kernel with CONFIG_PACKET"))
    checks.append(_check_veth())
    btf = Path("/sys/kernel/btf/vmlinux")
    checks.append(Check("kernel BTF", btf.exists(), str(btf) if btf.exists() else "absent",
                        "a kernel built with CONFIG_DEBUG_INFO_BTF (needed for eBPF variants)",
                        required=False))
    probe = Path("/sys/kernel/tracing/events/tcp/tcp_probe")
    checks.append(Check("tracepoint tcp:tcp_probe", probe.exists(),
                        "available" if probe.exists() else "tracefs not mounted or no tcp_probe",
                        "mount -t tracefs nodev /sys/kernel/tracing", required=False))
    return checks


def _check_veth() -> Check:
    name = f"nrdoc{os.getpid() % 100000}"
    result = _run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"])
    if result.returncode != 0:
        return Check("veth", False, result.stderr.strip() or "cannot create a veth pair",
                     "a kernel with CONFIG_VETH, and root")
    _run(["ip", "link", "del", name])
    return Check("veth", True, "created and removed a test pair")


def check_congestion_controls(paths: ProjectPaths) -> list[Check]:
    from kernel.congestion_control import CongestionControlResolver
    from schemes.registry import TCP_VARIANTS
    resolver = CongestionControlResolver.for_project(paths)
    available = resolver.available_variants(TCP_VARIANTS)
    checks = []
    for variant in TCP_VARIANTS:
        provider = available.get(variant)
        checks.append(Check(f"congestion control {variant}", provider is not None,
                            f"served by {provider}" if provider else "no provider",
                            f"load the module tcp_{variant}, or build native/ so the eBPF "
                            f"version exists ({INSTALL})", required=False))
    return checks


def check_experiment_kernels(paths: ProjectPaths, traces: TraceSet) -> list[Check]:
    """Per experiment: which of its TCP variants and recoveries this kernel can serve."""
    from app.commands.doctor_kernel import experiment_capabilities
    from experiments.registry import all_experiments
    from kernel.congestion_control import CongestionControlResolver
    resolver = CongestionControlResolver.for_project(paths)
    return [Check(f"kernel for {c.experiment}", c.ok, c.detail, c.fix, required=False)
            for c in experiment_capabilities(all_experiments(traces), resolver)]


def check_kinds_and_schemes(paths: ProjectPaths) -> list[Check]:
    """What each kind of run and each scheme family needs of this machine beyond the common
    checks (a switch, a controller, a box for submitted code): they say."""
    from runkinds.registry import KINDS
    from schemes.registry import doctor_checks
    return [c for kind in KINDS.values() for c in kind.doctor_checks(paths)] + \
        doctor_checks(paths)


def check_traces(traces: TraceSet, required_names: set[str]) -> list[Check]:
    checks = []
    for name in traces.known_traces():
        required = name in required_names
        try:
            path = traces.resolve(name)
            checks.append(Check(f"trace {name}", True, f"verified ({path})", required=required))
        except TraceError as e:
            problem, _, fix = str(e).partition("; fix: ")
            checks.append(Check(f"trace {name}", False, problem,
                                fix or "set NETREPRO_TRACES=DIR or run ./setup/install.sh "
                                "with network access", required=required))
    return checks


def required_traces(traces: TraceSet) -> set[str]:
    from experiments.registry import all_experiments
    names: set[str] = set()
    for exp in all_experiments(traces):
        for quick in (True, False):
            for spec in exp.matrix(quick=quick):
                names.update((spec.data_trace, spec.ack_trace))
    from topologies.link_side import FIXED_RATE_PREFIX  # rate:<Mbit/s>: a fixed rate, no file
    return {name for name in names if not name.startswith(FIXED_RATE_PREFIX)}


def run_doctor(paths: ProjectPaths, traces: TraceSet) -> int:
    from app.commands.doctor_namespaces import check_namespaces
    groups: list[Callable[[], list[Check]]] = [
        check_root, check_python, lambda: check_experiment_modules(traces), check_commands,
        lambda: check_native(paths), check_kernel,
        lambda: check_namespaces(paths), lambda: check_congestion_controls(paths),
        lambda: check_experiment_kernels(paths, traces), lambda: check_kinds_and_schemes(paths),
        lambda: check_traces(traces, required_traces(traces)),
    ]
    failed = 0
    for group in groups:
        try:
            checks = group()
        except Exception as e:  # a broken check must not hide the others
            checks = [Check(getattr(group, "__name__", "check"), False, f"check crashed: {e}")]
        for check in checks:
            print(check.line())
            failed += int(check.required and not check.ok)
    print("doctor: " + ("everything required is in place" if not failed
                        else f"{failed} required check(s) failed"))
    return 0 if failed == 0 else 1


def add_parser(sub: Any) -> None:
    sub.add_parser(NAME, help="check every prerequisite and say how to fix what is missing")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    return run_doctor(paths, traces_of(args, paths))
