"""`repro bench link`: does the emulator deliver what the trace offers, and how fast can it go?

(a) Conformance: a saturating sender (a fixed window far above the path's
    bandwidth-delay product, so the queue never empties) through the
    Verizon-LTE-short trace link. Delivered bytes are compared with the
    opportunities counted from the trace file itself (not from the emulator's
    log), over the span where the queue was busy; the receiver's count checks
    the log. Lateness percentiles come from the emulator.
(b) Fixed-rate ceiling: UDP at 110% of the configured rate through fixed-rate
    links of rising rate. A rate holds when its steady departure rate (from
    the log, start and end cut) is >= 99% of the configured rate. The climb
    goes up the ladder and on past its top (+25% a step) until a rate fails
    twice in a row (a second attempt, so one noisy moment does not end it);
    the failing rate and the highest that held below it are reported, next to
    the lateness at each rate.
The last line printed is one JSON object with every figure.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from analysis.mahimahi_log import parse_log
from core.active_runs import ActiveRun
from core.endpoints import Endpoints
from core.paths import ProjectPaths
from core.traces import TraceSet, load_trace
from schemes.base import ManagedProcess
from schemes.grump import GrumpScheme
from topologies.link_side import LinkSide

if TYPE_CHECKING:  # the network modules need Mininet: imported where a network is built
    from runkinds.trace_path.network import TracePath

CONFORMANCE_TRACE = "Verizon-LTE-short.down"
ACK_TRACE = "Verizon-LTE-short.up"
SATURATING_WINDOW = 3000  # datagrams; the path's BDP is < 100
SETTLE_S = 1.0  # ignore the first second: the queue is still filling
SUSTAINED_FRACTION = 0.99  # "< 1% of opportunities lost to lateness"
RATES_MBPS = (100, 250, 500, 750, 1000, 1500, 2000)
CLIMB_FACTOR = 1.25  # past the ladder's top, each step is 25% above the last ...
CLIMB_ROUNDING_MBPS = 250  # ... rounded up to a multiple of this
MAX_RATE_MBPS = 1e6  # the highest rate netrepro-link accepts
ATTEMPTS_PER_RATE = 2  # a rate fails only when every attempt fails
RATE_SECONDS = 5.0
STEADY_MARGIN_MS = 500  # the sender's start and end are not the emulator's doing
OPPORTUNITY_BYTES = 1504


def _path(paths: ProjectPaths, out: Path, data: LinkSide, ack: LinkSide, queue: str,
          active: ActiveRun) -> TracePath:
    from runkinds.trace_path.network import TracePath
    return TracePath(data=data, ack=ack, emulator=paths.native_binary("link", "netrepro-link"),
                     log_dir=out, delay_ms=0 if data.rate_mbps else 20, queue=queue, once=False,
                     active=active)


def conformance(paths: ProjectPaths, traces: TraceSet, out: Path, seconds: float) -> dict[str, Any]:
    from runkinds.trace_path.network import RECEIVER_IP
    from topologies.guarded_network import new_prefix
    data_trace = traces.resolve(CONFORMANCE_TRACE)
    ack_trace = traces.resolve(ACK_TRACE)
    out.mkdir(parents=True, exist_ok=True)
    scheme = GrumpScheme("fixed-window", paths, {"window": SATURATING_WINDOW})
    active = ActiveRun(paths.state_dir / "active", new_prefix())
    with ExitStack() as stack:
        stack.callback(active.close)
        path = stack.enter_context(_path(paths, out, LinkSide(trace=data_trace),
                                         LinkSide(trace=ack_trace), "infinite", active))
        assert path.link is not None
        ends = Endpoints(path.sender, path.receiver, RECEIVER_IP, out, active.add)
        stack.callback(scheme.stop)
        scheme.start_receiver(ends)
        path.link.start()
        scheme.start_sender(ends, seconds)
        scheme.wait_sender(seconds + 30)
        scheme.stop()
        path.link.stop_emulator()
        stats = json.loads(path.link.stats_file.read_text())
        facts = scheme.verify(ends)
    log = parse_log(out / "data.log")
    dep_t = log.departure_time
    start, end = dep_t.min() + SETTLE_S * 1000, dep_t.max()
    opportunities = load_trace(data_trace)
    period = int(opportunities[-1])
    offered = _opportunities_between(opportunities, period, start, end) * OPPORTUNITY_BYTES
    delivered = int(log.departure_size[(dep_t > start) & (dep_t <= end)].sum())
    received = int(facts["receiver"].get("datagrams_received", 0))
    departed = int(len(dep_t))
    lateness = stats["a2b"]["lateness_us"]
    return {"trace": CONFORMANCE_TRACE, "seconds": seconds, "window": SATURATING_WINDOW,
            "span_ms": [float(start), float(end)],
            "delivered_vs_trace": delivered / offered if offered else None,
            "offered_bytes": int(offered), "delivered_bytes": delivered,
            "receiver_datagrams": received, "log_departures": departed,
            "lateness_us": lateness, "socket_drops": stats["a2b"].get("socket_drops")}


def _opportunities_between(trace: np.ndarray, period: int, start: float, end: float) -> int:
    """Opportunities with start < t <= end on the looped trace (period = last value)."""
    def upto(t: float) -> int:
        loops, rest = divmod(int(t), period)
        return loops * len(trace) + int(np.searchsorted(trace, rest, side="right"))
    return upto(end) - upto(start)


def fixed_rate(paths: ProjectPaths, out: Path, rate: float, seconds: float) -> dict[str, Any]:
    from runkinds.trace_path.network import RECEIVER_IP
    from topologies.guarded_network import new_prefix
    out.mkdir(parents=True, exist_ok=True)
    active = ActiveRun(paths.state_dir / "active", new_prefix())
    with ExitStack() as stack:
        stack.callback(active.close)
        side = LinkSide(rate_mbps=rate)
        path = stack.enter_context(_path(paths, out, side, side, "droptail:packets=1000", active))
        assert path.link is not None
        server = ManagedProcess(path.receiver, ["iperf3", "-s", "-1", "-J"], out,
                                "iperf3-server", active.add)
        stack.callback(server.stop)
        path.link.start()
        time.sleep(0.3)
        client = ManagedProcess(path.sender, ["iperf3", "-c", RECEIVER_IP, "-u", "-l", "1472",
                                              "-b", f"{rate * 1.1:g}M", "-w", "4M",
                                              "-t", f"{seconds:g}", "-J"],
                                out, "iperf3-client", active.add)
        client.wait(seconds + 30)
        server.wait(10)
        path.link.stop_emulator()
        stats = json.loads(path.link.stats_file.read_text())
    a2b = stats["a2b"]
    sent = json.loads(client.stdout_path.read_text()).get("end", {}).get("sum", {})
    delivered = _steady_rate_mbps(parse_log(out / "data.log"))
    # Independent of the emulator's own log: what the receiving application measured.
    received = _received_sum(json.loads(server.stdout_path.read_text()))
    return {"rate_mbps": rate,
            "offered_mbps": sent.get("bits_per_second", 0) / 1e6,
            "delivered_mbps": delivered,
            "delivered_vs_rate": delivered / rate,
            "receiver_udp_payload_mbps": (received["bits_per_second"] / 1e6
                                          if "bits_per_second" in received else None),
            "receiver_lost_percent": received.get("lost_percent"),
            "queue_drops": a2b["drops"], "socket_drops": a2b.get("socket_drops"),
            "lateness_us": a2b["lateness_us"]}


def next_rate(rate: float) -> float | None:
    """The rate after `rate`: the ladder's next step, then +25% rounded up to 250 Mbit/s;
    None past the emulator's limit."""
    for step in RATES_MBPS:
        if step > rate:
            return step
    up = math.ceil(rate * CLIMB_FACTOR / CLIMB_ROUNDING_MBPS) * CLIMB_ROUNDING_MBPS
    return up if up <= MAX_RATE_MBPS else None


@dataclass
class Climb:
    """The rates measured, in order (every attempt), the highest rate that held before
    the first failure, and that failing rate (None if the climb ran out of rates)."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    highest_held_mbps: float = 0
    first_failed_mbps: float | None = None


def climb(measure: Callable[[float], dict[str, Any]], holds: Callable[[dict[str, Any]], bool],
          first: float = RATES_MBPS[0], attempts_per_rate: int = ATTEMPTS_PER_RATE,
          report: Callable[[dict[str, Any], int], None] | None = None) -> Climb:
    """Measures rising rates until one fails on every attempt."""
    result = Climb()
    rate: float | None = first
    while rate is not None:
        held = False
        for attempt in range(1, attempts_per_rate + 1):
            r = measure(rate)
            r["attempt"] = attempt
            r["held"] = holds(r)
            result.attempts.append(r)
            if report is not None:
                report(r, attempt)
            if r["held"]:
                held = True
                break
        if not held:
            result.first_failed_mbps = rate
            return result
        result.highest_held_mbps = rate
        rate = next_rate(rate)
    return result


def _holds(r: dict[str, Any]) -> bool:
    return bool(r["delivered_vs_rate"] >= SUSTAINED_FRACTION)


def _received_sum(server_json: dict[str, Any]) -> dict[str, Any]:
    """What the iperf3 server received over UDP. iperf3 3.16+ puts it in
    `end.sum_received` (its `end.sum` then reads 0 bytes); older ones in `end.sum`."""
    end = server_json.get("end", {})
    return end.get("sum_received") or end.get("sum") or {}


def _steady_rate_mbps(log: Any) -> float:
    """Departure rate while the sender was saturating: the middle of the run, edges cut."""
    t = log.departure_time
    start, end = t.min() + STEADY_MARGIN_MS, t.max() - STEADY_MARGIN_MS
    if end <= start:
        return 0.0
    inside = (t > start) & (t <= end)
    return float(log.departure_size[inside].sum()) * 8 / ((end - start) / 1000) / 1e6


def _report_rate(r: dict[str, Any], attempt: int) -> None:
    got = r["receiver_udp_payload_mbps"]
    got_text = "not reported by iperf3" if got is None else f"{got:.1f} Mbit/s"
    again = f" (attempt {attempt})" if attempt > 1 else ""
    verdict = "held" if r["held"] else "failed"
    print(f"  {r['rate_mbps']:5g} Mbit/s{again}: delivered {r['delivered_mbps']:.1f} Mbit/s "
          f"({r['delivered_vs_rate']:.3f} of the rate; receiver got {got_text} of UDP "
          f"payload), lateness p99 {r['lateness_us']['p99']} us: {verdict}", flush=True)


def main(paths: ProjectPaths, traces: TraceSet, args: argparse.Namespace) -> int:
    seconds = args.seconds or 60.0
    out = paths.results_dir / "bench" / f"link-{time.strftime('%Y%m%d-%H%M%S')}"
    print(f"bench link: (a) conformance, {seconds:g} s on {CONFORMANCE_TRACE}", flush=True)
    result: dict[str, Any] = {
        "conformance": conformance(paths, traces, out / "conformance", seconds)}
    c = result["conformance"]
    print(f"  delivered/trace = {c['delivered_vs_trace']:.4f}; lateness p50 "
          f"{c['lateness_us']['p50']} us, p99 {c['lateness_us']['p99']} us, "
          f"max {c['lateness_us']['max']} us", flush=True)
    print(f"bench link: (b) fixed-rate ceiling, {RATE_SECONDS:g} s per rate", flush=True)
    tries: dict[float, int] = {}

    def measure(rate: float) -> dict[str, Any]:
        tries[rate] = tries.get(rate, 0) + 1
        return fixed_rate(paths, out / f"rate-{rate:g}-{tries[rate]}", rate, RATE_SECONDS)

    ceiling = climb(measure, _holds, report=_report_rate)
    result["fixed_rate"] = ceiling.attempts
    result["max_sustained_mbps"] = ceiling.highest_held_mbps
    result["first_failing_mbps"] = ceiling.first_failed_mbps
    if ceiling.first_failed_mbps is None:
        print(f"  no rate up to {MAX_RATE_MBPS:g} Mbit/s failed", flush=True)
    else:
        print(f"  ceiling: {ceiling.highest_held_mbps:g} Mbit/s held, "
              f"{ceiling.first_failed_mbps:g} Mbit/s failed {ATTEMPTS_PER_RATE} times", flush=True)
    result["conformance_ok"] = (c["delivered_vs_trace"] or 0) >= 0.995
    print(json.dumps(result, sort_keys=True))
    return 0
