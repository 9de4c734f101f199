"""`repro bench cc --variant V`: the kernel's V next to netrepro's eBPF bpf_V.

The same run is made once with the kernel's implementation (`--cc-impl
kernel`: built in, or its module tcp_V) and once with ours (`--cc-impl ebpf`),
one after the other, on two links:

- fixed: 12 Mbit/s both ways, 5 ms each way, drop-tail 200 packets (the
  behaviour tests' short path, tests/integration/test_cc_behaviour.py);
- trace: Verizon-LTE-short down/up, 20 ms each way, infinite queue (as in
  sprout-fig7).

Each side's throughput, 95% end-to-end delay, median queue occupancy and
median cwnd are printed with the eBPF side's difference from the kernel's, and
the two cwnd traces (tcp_probe) are compared every 100 ms from each run's
first sample. One pair of runs also carries run-to-run variation: repeat the
bench before reading a small difference as an implementation difference.

When the kernel cannot provide V (no module), the bench says so, naming the
module and the fix, still runs and reports the eBPF side, and exits 0; the
JSON then has "kernel": {"status": "unavailable", "reason": ...}. Exit 1
when a run failed, 2 for a variant netrepro has no eBPF version of. The last
line printed is one JSON object with every figure.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from analysis.tcp_probe import read_probe
from core.paths import ProjectPaths, display
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from kernel.congestion_control import (EBPF_PREFIX, EBPF_VARIANTS, CcUnavailable,
                                       CongestionControlResolver)

EXPERIMENT = "bench-cc"
SIDES = ("kernel", "ebpf")
DEFAULT_SECONDS = 20.0
CWND_STEP_S = 0.1
# What is compared: metric -> (label, unit) for the printed lines.
COMPARED = {"throughput_mbps": ("throughput", "Mbit/s"), "p95_e2e_delay_ms": ("p95 delay", "ms"),
            "queue_occupancy_median_pkts": ("queue median", "pkts"),
            "cwnd_median_pkts": ("cwnd median", "pkts")}
REPORTED = (*COMPARED, "cc_used", "cc_provider", "loss_episodes", "tcp_probe_status")


@dataclass(frozen=True)
class BenchLink:
    name: str
    data_trace: str
    ack_trace: str
    delay_ms: int
    queue: str

    def describe(self) -> str:
        traces = self.data_trace if self.data_trace == self.ack_trace else \
            f"{self.data_trace} / {self.ack_trace}"
        return f"{traces}, {self.delay_ms} ms each way, {self.queue} queue"


LINKS = (BenchLink("fixed", "rate:12", "rate:12", 5, "droptail:packets=200"),
         BenchLink("trace", "Verizon-LTE-short.down", "Verizon-LTE-short.up", 20, "infinite"))


@dataclass(frozen=True)
class SideRun:
    """One finished (or failed) run, reduced to what the bench compares."""
    ok: bool
    reason: str
    metrics: dict[str, Any]
    cwnd: np.ndarray | None  # cwnd every CWND_STEP_S from the run's first probe sample
    run_dir: str


Runner = Callable[[RunSpec], SideRun]
# The reason the kernel cannot provide a variant, or None when it can.
KernelCheck = Callable[[str], "str | None"]


def bench_spec(variant: str, link: BenchLink, side: str, seconds: float) -> RunSpec:
    return RunSpec(experiment=EXPERIMENT, scheme=variant, data_trace=link.data_trace,
                   ack_trace=link.ack_trace, delay_ms=link.delay_ms, queue=link.queue,
                   duration_s=seconds, params=make_params(cc_impl=side))


# ------------------------------------------------------------ pure figures

def cwnd_series(time_s: np.ndarray, cwnd: np.ndarray, step_s: float = CWND_STEP_S) -> np.ndarray:
    """cwnd at every step from the first sample: the last sample at or before each point."""
    if time_s.size == 0:
        return np.zeros(0)
    points = np.arange(0.0, time_s[-1] - time_s[0] + 1e-9, step_s)
    index = np.searchsorted(time_s - time_s[0], points, side="right") - 1
    return cwnd[index].astype(float)


def cwnd_difference(kernel: np.ndarray, ebpf: np.ndarray,
                    step_s: float = CWND_STEP_S) -> dict[str, float] | None:
    """How far apart two cwnd traces are over their common span (ebpf minus kernel)."""
    n = min(kernel.size, ebpf.size)
    if n == 0:
        return None
    diff = ebpf[:n] - kernel[:n]
    scale = (np.abs(ebpf[:n]) + np.abs(kernel[:n])).mean() / 2
    return {"compared_s": round(n * step_s, 3),
            "mean_pkts": float(diff.mean()),
            "median_abs_pkts": float(np.median(np.abs(diff))),
            "max_abs_pkts": float(np.abs(diff).max()),
            "mean_abs_relative": float(np.abs(diff).mean() / scale) if scale else 0.0}


def metric_differences(kernel: dict[str, Any], ebpf: dict[str, Any]) -> dict[str, Any]:
    """Per compared metric: both values, ebpf minus kernel, and that relative to the kernel."""
    out: dict[str, Any] = {}
    for metric in COMPARED:
        k, e = kernel.get(metric), ebpf.get(metric)
        if k is None or e is None:
            out[metric] = None
            continue
        out[metric] = {"kernel": k, "ebpf": e, "ebpf_minus_kernel": e - k,
                       "relative": (e - k) / k if k else None}
    return out


def kernel_fix(variant: str, modules_supported: bool) -> str:
    """How to give this machine the kernel's implementation of `variant`."""
    module = f"tcp_{variant}"
    if not modules_supported:
        return (f"this kernel cannot load modules (built without CONFIG_MODULES): boot a "
                f"kernel with CONFIG_TCP_CONG_{variant.upper()}=y, or =m with {module}.ko "
                "installed (distribution kernels ship it)")
    return (f"install the package that ships {module}.ko (Debian: linux-image-$(uname -r); "
            f"Ubuntu: linux-modules-extra-$(uname -r)), then `modprobe {module}`")


# ------------------------------------------------------------------ the bench

def _summary(run: SideRun) -> dict[str, Any]:
    if not run.ok:
        return {"status": "failed", "reason": run.reason, "run_dir": run.run_dir}
    return {"status": "ran", "run_dir": run.run_dir,
            **{k: run.metrics.get(k) for k in REPORTED}}


def _fmt(value: Any, unit: str) -> str:
    return "n/a" if value is None else f"{value:.2f} {unit}"


def _why(reason: str) -> str:
    """The line of the resolver's message that says why (modprobe's own error when it ran)."""
    lines = reason.splitlines()
    return next((line for line in lines if "modprobe" in line), lines[0] if lines else reason)


def _side_line(side: str, run: SideRun) -> str:
    if not run.ok:
        return f"  {side:6s} FAILED: {run.reason} ({run.run_dir})"
    m = run.metrics
    return (f"  {side:6s} {m.get('cc_used')} ({m.get('cc_provider')}): "
            + ", ".join(f"{label} {_fmt(m.get(k), unit)}"
                        for k, (label, unit) in COMPARED.items()))


def _difference_line(diff: dict[str, Any]) -> str:
    parts = []
    for metric, (label, unit) in COMPARED.items():
        d = diff["metrics"].get(metric)
        if d is not None:
            rel = "" if d["relative"] is None else f" ({d['relative']:+.1%})"
            parts.append(f"{label} {d['ebpf_minus_kernel']:+.2f} {unit}{rel}")
    cwnd = diff["cwnd_trace"]
    if cwnd is not None:
        parts.append(f"cwnd trace: median |diff| {cwnd['median_abs_pkts']:.1f} pkts, mean "
                     f"|diff| {cwnd['mean_abs_relative']:.1%} of the window, over "
                     f"{cwnd['compared_s']:g} s")
    return "  ebpf - kernel: " + "; ".join(parts)


def run_bench(variant: str, seconds: float, runner: Runner, kernel_check: KernelCheck,
              modules_supported: bool, say: Callable[[str], None] = print) -> tuple[int, dict]:
    """Both sides on every link; returns (exit status, the JSON object), printing as it goes."""
    module = f"tcp_{variant}"
    say(f"bench cc: {variant}: the kernel's ({module} or built in) vs netrepro's eBPF "
        f"({EBPF_PREFIX}{variant}), {seconds:g} s per run, one run at a time")
    reason = kernel_check(variant)
    result: dict[str, Any] = {"variant": variant, "seconds": seconds}
    sides = list(SIDES)
    if reason is not None:
        fix = kernel_fix(variant, modules_supported)
        result["kernel"] = {"status": "unavailable", "module": module, "reason": reason,
                            "fix": fix}
        sides.remove("kernel")
        say(f"kernel side UNAVAILABLE: no kernel {variant} here ({module} is neither built "
            "in nor loadable)")
        say(f"  {_why(reason)}")
        say(f"  fix: {fix}")
        say("  the eBPF side runs alone: nothing to compare it with")
    failed = False
    links = []
    for link in LINKS:
        say(f"== {link.name}: {link.describe()}")
        entry: dict[str, Any] = {"name": link.name, "data_trace": link.data_trace,
                                 "ack_trace": link.ack_trace, "delay_ms": link.delay_ms,
                                 "queue": link.queue, "kernel": {"status": "unavailable"},
                                 "difference": None}
        runs: dict[str, SideRun] = {}
        for side in sides:
            runs[side] = runner(bench_spec(variant, link, side, seconds))
            entry[side] = _summary(runs[side])
            failed |= not runs[side].ok
            say(_side_line(side, runs[side]))
        if all(side in runs and runs[side].ok for side in SIDES):
            k, e = runs["kernel"], runs["ebpf"]
            cwnd = cwnd_difference(k.cwnd, e.cwnd) \
                if k.cwnd is not None and e.cwnd is not None else None
            entry["difference"] = {"metrics": metric_differences(k.metrics, e.metrics),
                                   "cwnd_trace": cwnd}
            say(_difference_line(entry["difference"]))
        links.append(entry)
    for side, name in (("kernel", variant), ("ebpf", EBPF_PREFIX + variant)):
        if side in sides:
            ran = all(link[side]["status"] == "ran" for link in links)
            result[side] = {"status": "ran" if ran else "failed", "name": name}
    result["links"] = links
    result["ok"] = not failed
    return (1 if failed else 0), result


class ExecutorRunner:
    """Runs a spec for real (app.executor) into the bench's own results folder."""

    def __init__(self, paths: ProjectPaths, traces: TraceSet, out: Path) -> None:
        self.paths, self.traces = paths, traces
        self.store = ExperimentStore(out)

    def __call__(self, spec: RunSpec) -> SideRun:
        from app.executor import execute
        outcome = execute(spec, self.store, self.paths, self.traces)
        cwnd = None
        if outcome.ok:
            probe = read_probe(outcome.path)
            if probe is not None and len(probe):
                cwnd = cwnd_series(probe.time_s, probe.snd_cwnd)
        return SideRun(outcome.ok, outcome.reason, outcome.metrics or {}, cwnd,
                       display(outcome.path))


def resolver_kernel_check(resolver: CongestionControlResolver) -> KernelCheck:
    """Asks the resolver for the kernel's implementation (loading its module if installed)."""
    def check(variant: str) -> str | None:
        try:
            with resolver.resolve(variant, impl="kernel"):
                return None
        except CcUnavailable as e:
            return str(e)
    return check


def main(paths: ProjectPaths, traces: TraceSet, args: argparse.Namespace) -> int:
    variant = (args.variant or "").strip().lower()
    if variant not in EBPF_VARIANTS:
        print(f"error: bench cc compares the kernel's implementation with netrepro's eBPF "
              f"one: pass --variant with one of {', '.join(EBPF_VARIANTS)}"
              + (f" (netrepro has no eBPF {variant})" if variant else ""), file=sys.stderr)
        return 2
    seconds = args.seconds or DEFAULT_SECONDS
    out = paths.results_dir / "bench" / f"cc-{variant}-{time.strftime('%Y%m%d-%H%M%S')}"
    resolver = CongestionControlResolver.for_project(paths)
    status, result = run_bench(variant, seconds, ExecutorRunner(paths, traces, out),
                               resolver_kernel_check(resolver),
                               modules_supported=Path("/proc/modules").exists(),
                               say=lambda line: print(line, flush=True))
    result["artifacts"] = display(out)
    print(f"bench cc: artifacts in {display(out)}", flush=True)
    print(json.dumps(result, sort_keys=True))
    return status
