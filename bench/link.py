"""`repro bench link`: does the emulator deliver what the trace offers, and how fast can it go?

(a) Conformance: a saturating sender (a fixed window far above the path's
    bandwidth-delay product, so the queue never empties) through the
    Verizon-LTE-short trace link. Delivered bytes are compared with the
    opportunities counted from the trace file itself (not from the emulator's
    log), over the span where the queue was busy; the receiver's count checks
    the log. Lateness percentiles come from the emulator.
(b) Fixed-rate ceiling: UDP at 110% of the configured rate (1514-byte frames, bursts of 10)
    through fixed-rate links of rising rate. A rate holds when its steady
    departure rate (from the log, start and end cut) is >= 99.5% of the
    configured rate AND the emulator's p99 lateness (the worse direction) is
    within the 2 ms runs are held to (analysis/fidelity.py). The climb goes up
    the ladder and on past its top (+25% a step) until a rate fails twice in a
    row (a second attempt, so one noisy moment does not end it); then the rate
    halfway between the highest held and the failing one is measured, twice over
    (750 and 1000 narrow to 62.5 Mbit/s apart); the lowest rate that failed and
    the highest that held below it are reported.
(c) The bare path's ceiling, the same way: the same load on the same veth pair and
    middle node with no emulator (the middle's kernel redirects frames from one
    interface to the other with tc mirred). A rate holds when the receiver got
    >= 99.5% of it. The emulator's ceiling is printed as a ratio to this one, so
    the figure means the same on a faster or slower machine.
(d) Packets per second: an unlimited iperf3 UDP sender of 64- and 1500-byte frames,
    through the emulator (a rate far above its ceiling) and across the bare path:
    offered and delivered datagrams per second, and the emulator's lateness. When
    the bare path delivers all iperf3 sent, iperf3 is the limit there, not the path.
(e) The machine's timing floor (bench/timing_floor.py): how many departure gaps any link can
    keep within 10% at 100 Mbit/s, given how often this machine takes a CPU away.
(f) Departure precision at 100 Mbit/s, netrepro-link against the kernel's HTB shaper (what
    Mininet-HiFi used) on the same path, one CUBIC flow each (bench/shaper_precision.py).
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

from analysis.fidelity import MAX_LATENESS_P99_US, lateness_p99_us
from analysis.mahimahi_log import parse_log
from bench import shaper_precision, timing_floor
from core.cpu_steal import StealMeter
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
SUSTAINED_FRACTION = 0.995  # a rate is held when >= 99.5% of it is delivered
RATES_MBPS = (100, 250, 500, 750, 1000, 1500, 2000)
CLIMB_FACTOR = 1.25  # past the ladder's top, each step is 25% above the last ...
CLIMB_ROUNDING_MBPS = 250  # ... rounded up to a multiple of this
MAX_RATE_MBPS = 1e6  # the highest rate netrepro-link accepts
ATTEMPTS_PER_RATE = 2  # a rate fails only when every attempt fails
# After the climb, halve the step between the highest rate held and the failing one this
# many times (750 to 1000 becomes 62.5 Mbit/s), at rates rounded to REFINE_ROUNDING_MBPS.
REFINE_STEPS = 2
REFINE_ROUNDING_MBPS = 25
RATE_SECONDS = 5.0
STEADY_MARGIN_MS = 500  # the sender's start and end are not the emulator's doing
OPPORTUNITY_BYTES = 1504
IP_UDP_HEADER_BYTES = 20 + 8
FRAME_OVERHEAD_BYTES = 14 + IP_UDP_HEADER_BYTES  # Ethernet + IPv4 + UDP; no FCS on a veth
CEILING_PAYLOAD = 1472  # 1514-byte frames: a full 1500-byte IP packet
# iperf3 (3.12) paced by -b sends one datagram per select() and stalls near 1 Gbit/s here,
# where unpaced it sends ~130 kpps of 1514-byte frames: a burst of 10 per wake-up (its own
# figure when unpaced) keeps the load generator from setting the bare path's ceiling.
BURST = 10
PPS_FRAMES = (64, 1500)
PPS_SECONDS = 5.0


def _path(paths: ProjectPaths, out: Path, data: LinkSide, ack: LinkSide, queue: str,
          active: ActiveRun, data_path: str | None = None) -> TracePath:
    from runkinds.trace_path.network import TracePath
    return TracePath(data=data, ack=ack, emulator=paths.native_binary("link", "netrepro-link"),
                     log_dir=out, delay_ms=0 if data.rate_mbps else 20, queue=queue, once=False,
                     active=active, data_path=data_path)


def conformance(paths: ProjectPaths, traces: TraceSet, out: Path, seconds: float,
                data_path: str | None = None) -> dict[str, Any]:
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
                                         LinkSide(trace=ack_trace), "infinite", active,
                                         data_path))
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
            "lateness_us": lateness, "socket_drops": stats["a2b"].get("socket_drops"),
            "data_path": stats.get("data_path")}


def _opportunities_between(trace: np.ndarray, period: int, start: float, end: float) -> int:
    """Opportunities with start < t <= end on the looped trace (period = last value)."""
    def upto(t: float) -> int:
        loops, rest = divmod(int(t), period)
        return loops * len(trace) + int(np.searchsorted(trace, rest, side="right"))
    return upto(end) - upto(start)


@dataclass
class UdpRun:
    """What one iperf3 UDP run across the path left: both ends' JSON, and the emulator's
    stats (None on the bare path)."""
    client: dict[str, Any]
    server: dict[str, Any]
    link_stats: dict[str, Any] | None
    out: Path


def udp_run(paths: ProjectPaths, out: Path, client_args: list[str], seconds: float, *,
            rate_mbps: float, bare: bool, data_path: str | None) -> UdpRun:
    """iperf3 UDP from sender to receiver across the path: through the emulator at a fixed
    rate (droptail 1000 packets), or `bare`: the same veth pair and middle node, its kernel
    redirecting the frames (TraceLink.forward_in_kernel), so only the emulator is missing."""
    from runkinds.trace_path.network import RECEIVER_IP
    from topologies.guarded_network import new_prefix
    out.mkdir(parents=True, exist_ok=True)
    active = ActiveRun(paths.state_dir / "active", new_prefix())
    with ExitStack() as stack:
        stack.callback(active.close)
        side = LinkSide(rate_mbps=rate_mbps)
        path = stack.enter_context(_path(paths, out, side, side, "droptail:packets=1000", active,
                                         data_path))
        assert path.link is not None
        server = ManagedProcess(path.receiver, ["iperf3", "-s", "-1", "-J"], out,
                                "iperf3-server", active.add)
        stack.callback(server.stop)
        if bare:
            path.link.forward_in_kernel()
        else:
            path.link.start()
        time.sleep(0.3)
        client = ManagedProcess(path.sender, ["iperf3", "-c", RECEIVER_IP, "-u", *client_args,
                                              "-w", "4M", "-t", f"{seconds:g}", "-J"],
                                out, "iperf3-client", active.add)
        client.wait(seconds + 30)
        server.wait(10)
        stats = None
        if not bare:
            path.link.stop_emulator()
            stats = json.loads(path.link.stats_file.read_text())
    return UdpRun(json.loads(client.stdout_path.read_text()),
                  json.loads(server.stdout_path.read_text()), stats, out)


def fixed_rate(paths: ProjectPaths, out: Path, rate: float, seconds: float, *,
               bare: bool = False, data_path: str | None = None) -> dict[str, Any]:
    """UDP at 110% of `rate` (1514-byte frames): through a fixed-rate emulated link of that
    rate, or across the bare path (which carries what it can)."""
    run = udp_run(paths, out, ["-l", str(CEILING_PAYLOAD), "-b", f"{rate * 1.1:g}M/{BURST}"],
                  seconds,
                  rate_mbps=rate, bare=bare, data_path=data_path)
    sent = run.client.get("end", {}).get("sum", {})
    # Independent of the emulator's own log: what the receiving application measured.
    received = _received_sum(run.server)
    got = (received["bits_per_second"] / 1e6 if "bits_per_second" in received else None)
    r: dict[str, Any] = {"rate_mbps": rate, "path": "bare" if bare else "emulator",
                         "offered_mbps": sent.get("bits_per_second", 0) / 1e6,
                         "receiver_udp_payload_mbps": got,
                         "receiver_lost_percent": received.get("lost_percent")}
    if run.link_stats is None:
        # On the emulator's byte basis (IP length + 4), so the two ceilings compare.
        delivered = ip4_basis_mbps(got or 0.0, CEILING_PAYLOAD)
        r.update(delivered_mbps=delivered, delivered_vs_rate=delivered / rate)
        return r
    a2b = run.link_stats["a2b"]
    delivered = _steady_rate_mbps(parse_log(out / "data.log"))
    r.update(delivered_mbps=delivered, delivered_vs_rate=delivered / rate,
             queue_drops=a2b["drops"], socket_drops=a2b.get("socket_drops"),
             lateness_us=a2b["lateness_us"], lateness_p99_us=lateness_p99_us(run.link_stats),
             data_path=run.link_stats.get("data_path"))
    return r


def packet_rate(paths: ProjectPaths, out: Path, frame_bytes: int, seconds: float, *,
                bare: bool, data_path: str | None = None) -> dict[str, Any]:
    """An unlimited iperf3 UDP sender (-b 0) of `frame_bytes`-byte frames: through the
    emulator at a rate far above what it can forward, or across the bare path."""
    from topologies.trace_link import UNLIMITED_RATE_MBPS  # needs Mininet: only when run
    payload = udp_payload_for_frame(frame_bytes)
    run = udp_run(paths, out, ["-l", str(payload), "-b", "0"], seconds,
                  rate_mbps=UNLIMITED_RATE_MBPS, bare=bare, data_path=data_path)
    r: dict[str, Any] = {"frame_bytes": frame_bytes, "udp_payload_bytes": payload,
                         "path": "bare" if bare else "emulator",
                         **packet_rates(run.client, run.server)}
    if run.link_stats is not None:
        a2b = run.link_stats["a2b"]
        r.update(lateness_us=a2b["lateness_us"], lateness_p99_us=lateness_p99_us(run.link_stats),
                 queue_drops=a2b["drops"], socket_drops=a2b.get("socket_drops"),
                 cpu_s=run.link_stats.get("cpu_user_s", 0) + run.link_stats.get("cpu_system_s", 0),
                 data_path=run.link_stats.get("data_path"))
    return r


def udp_payload_for_frame(frame_bytes: int) -> int:
    """The UDP payload that makes an Ethernet frame of `frame_bytes` on a veth (14 Ethernet +
    20 IP + 8 UDP header bytes; a veth carries no FCS and pads nothing)."""
    payload = frame_bytes - FRAME_OVERHEAD_BYTES
    if payload < 1:
        raise ValueError(f"a {frame_bytes}-byte frame has no room for a UDP payload")
    return payload


def ip4_basis_mbps(payload_mbps: float, payload_bytes: int) -> float:
    """A UDP payload rate on the emulator's byte basis: IP length + 4 (mahimahi's)."""
    return payload_mbps * (payload_bytes + IP_UDP_HEADER_BYTES + 4) / payload_bytes


def packet_rates(client: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """Offered (sent by iperf3) and delivered (received) datagrams per second, each over its
    own end's measured seconds. iperf3's receiver counts `packets` up to the highest
    sequence number seen and `lost_packets` among them: received = packets - lost."""
    sent = client.get("end", {}).get("sum", {})
    got = _received_sum(server)
    offered = sent.get("packets", 0) / sent["seconds"] if sent.get("seconds") else None
    received = got.get("packets", 0) - got.get("lost_packets", 0)
    delivered = received / got["seconds"] if got.get("seconds") else None
    return {"offered_pps": offered, "delivered_pps": delivered,
            "sent_packets": sent.get("packets"), "received_packets": received,
            "delivered_vs_offered": delivered / offered if offered and delivered is not None
            else None,
            "receiver_lost_percent": got.get("lost_percent")}


def ceiling_ratio(emulator_mbps: float, bare_mbps: float) -> float | None:
    """The emulator's ceiling as a fraction of the bare path's (None without a bare one)."""
    return emulator_mbps / bare_mbps if bare_mbps > 0 else None


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
    the first failure, and that failing rate (None if the climb ran out of rates); after
    refine(), the lowest rate that failed and the highest held below it."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    highest_held_mbps: float = 0
    first_failed_mbps: float | None = None


def _try_rate(measure: Callable[[float], dict[str, Any]],
              holds: Callable[[dict[str, Any]], bool], rate: float, attempts_per_rate: int,
              result: Climb, report: Callable[[dict[str, Any], int], None] | None) -> bool:
    """Measures `rate` until an attempt holds or every attempt failed (each attempt added to
    the result); whether it held."""
    for attempt in range(1, attempts_per_rate + 1):
        r = measure(rate)
        r["attempt"] = attempt
        r["held"] = holds(r)
        result.attempts.append(r)
        if report is not None:
            report(r, attempt)
        if r["held"]:
            return True
    return False


def climb(measure: Callable[[float], dict[str, Any]], holds: Callable[[dict[str, Any]], bool],
          first: float = RATES_MBPS[0], attempts_per_rate: int = ATTEMPTS_PER_RATE,
          report: Callable[[dict[str, Any], int], None] | None = None) -> Climb:
    """Measures rising rates until one fails on every attempt."""
    result = Climb()
    rate: float | None = first
    while rate is not None:
        if not _try_rate(measure, holds, rate, attempts_per_rate, result, report):
            result.first_failed_mbps = rate
            return result
        result.highest_held_mbps = rate
        rate = next_rate(rate)
    return result


def refine(measure: Callable[[float], dict[str, Any]], holds: Callable[[dict[str, Any]], bool],
           result: Climb, steps: int = REFINE_STEPS, attempts_per_rate: int = ATTEMPTS_PER_RATE,
           report: Callable[[dict[str, Any], int], None] | None = None) -> Climb:
    """Narrows a finished climb: measures the rate halfway between the highest held and the
    failing one, `steps` times, and moves whichever end it lands on (the same attempts per
    rate; the attempts are added to the climb's). Nothing to narrow when the climb failed
    at its first rate or never failed."""
    lo, hi = result.highest_held_mbps, result.first_failed_mbps
    if not lo or hi is None:
        return result
    for _ in range(steps):
        mid = round((lo + hi) / 2 / REFINE_ROUNDING_MBPS) * REFINE_ROUNDING_MBPS
        if not lo < mid < hi:
            break
        held = _try_rate(measure, holds, mid, attempts_per_rate, result, report)
        lo, hi = (mid, hi) if held else (lo, mid)
    result.highest_held_mbps, result.first_failed_mbps = lo, hi
    return result


def emulator_holds(r: dict[str, Any]) -> bool:
    """A rate the emulator holds: it delivered the rate, and on time as runs are held to
    (p99 lateness, the worse direction, within analysis.fidelity's limit)."""
    late = r.get("lateness_p99_us")
    return bool(r["delivered_vs_rate"] >= SUSTAINED_FRACTION
                and late is not None and late <= MAX_LATENESS_P99_US)


def bare_holds(r: dict[str, Any]) -> bool:
    """A rate the bare path holds: the receiver got the rate (nothing there can be late)."""
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
    late = (f", lateness p99 {r['lateness_p99_us']} us" if r["path"] == "emulator"
            else f", receiver lost {r['receiver_lost_percent']}%")
    print(f"  {r['rate_mbps']:5g} Mbit/s{again}: delivered {r['delivered_mbps']:.1f} Mbit/s "
          f"({r['delivered_vs_rate']:.3f} of the rate; receiver got {got_text} of UDP "
          f"payload){late}: {verdict}", flush=True)


def _report_pps(r: dict[str, Any]) -> None:
    late = (f", lateness p99 {r['lateness_p99_us']} us" if r["path"] == "emulator" else "")
    print(f"  {r['path']:8} {r['frame_bytes']:4d}-byte frames: offered "
          f"{_kpps(r['offered_pps'])}, delivered {_kpps(r['delivered_pps'])}{late}",
          flush=True)


def _kpps(pps: float | None) -> str:
    return "?" if pps is None else f"{pps / 1000:.1f} kpps"


def _climb(what: str, measure_one: Callable[[float, Path], dict[str, Any]],
           holds: Callable[[dict[str, Any]], bool], out: Path) -> Climb:
    tries: dict[float, int] = {}

    def measure(rate: float) -> dict[str, Any]:
        tries[rate] = tries.get(rate, 0) + 1
        return measure_one(rate, out / f"{what}-rate-{rate:g}-{tries[rate]}")

    ceiling = refine(measure, holds, climb(measure, holds, report=_report_rate),
                     report=_report_rate)
    if ceiling.first_failed_mbps is None:
        print(f"  no rate up to {MAX_RATE_MBPS:g} Mbit/s failed", flush=True)
    else:
        print(f"  {what} ceiling: {ceiling.highest_held_mbps:g} Mbit/s held, "
              f"{ceiling.first_failed_mbps:g} Mbit/s failed {ATTEMPTS_PER_RATE} times", flush=True)
    return ceiling


def iperf3_limited(bare: dict[str, Any]) -> bool:
    """Whether the bare path delivered (nearly) all iperf3 sent: then its packet rate is
    iperf3's own limit on this machine, not the path's."""
    share = bare.get("delivered_vs_offered")
    return share is not None and share >= SUSTAINED_FRACTION


def sender_limited(attempts: list[dict[str, Any]], failed_mbps: float | None) -> bool:
    """Whether the bare path failed its rate only because iperf3 could not offer it: every
    attempt at the failing rate lost (almost) nothing at the receiver. The bare ceiling is
    then the load generator's, a lower bound on the path's."""
    at = [r for r in attempts if r["rate_mbps"] == failed_mbps]
    return bool(at) and all((r.get("receiver_lost_percent") or 0) <= 100 * (1 - SUSTAINED_FRACTION)
                            for r in at)


def main(paths: ProjectPaths, traces: TraceSet, args: argparse.Namespace) -> int:
    seconds = args.seconds or 60.0
    data_path = getattr(args, "data_path", None)
    out = paths.results_dir / "bench" / f"link-{time.strftime('%Y%m%d-%H%M%S')}"
    steal = StealMeter()
    started = time.monotonic()
    print(f"bench link: (a) conformance, {seconds:g} s on {CONFORMANCE_TRACE}", flush=True)
    result: dict[str, Any] = {
        "conformance": conformance(paths, traces, out / "conformance", seconds, data_path)}
    c = result["conformance"]
    print(f"  delivered/trace = {c['delivered_vs_trace']:.4f}; lateness p50 "
          f"{c['lateness_us']['p50']} us, p99 {c['lateness_us']['p99']} us, "
          f"max {c['lateness_us']['max']} us (data path {c['data_path']})", flush=True)
    print(f"bench link: (b) fixed-rate ceiling through the emulator, {RATE_SECONDS:g} s per "
          f"rate; held: >= {SUSTAINED_FRACTION:.1%} delivered and p99 lateness <= "
          f"{MAX_LATENESS_P99_US / 1000:g} ms", flush=True)
    emulated = _climb("emulator", lambda rate, where: fixed_rate(
        paths, where, rate, RATE_SECONDS, data_path=data_path), emulator_holds, out)
    print(f"bench link: (c) the bare path's ceiling (no emulator; tc mirred in its place), "
          f"{RATE_SECONDS:g} s per rate; held: >= {SUSTAINED_FRACTION:.1%} received", flush=True)
    bare = _climb("bare", lambda rate, where: fixed_rate(
        paths, where, rate, RATE_SECONDS, bare=True), bare_holds, out)
    print(f"bench link: (d) packets per second, unlimited iperf3 UDP sender, "
          f"{PPS_SECONDS:g} s each", flush=True)
    pps: list[dict[str, Any]] = []
    for frame in PPS_FRAMES:
        for is_bare in (False, True):
            where = out / f"pps-{frame}-{'bare' if is_bare else 'emulator'}"
            pps.append(packet_rate(paths, where, frame, PPS_SECONDS, bare=is_bare,
                                   data_path=None if is_bare else data_path))
            pps[-1]["iperf3_limited"] = is_bare and iperf3_limited(pps[-1])
            _report_pps(pps[-1])
    ratio = ceiling_ratio(emulated.highest_held_mbps, bare.highest_held_mbps)
    bare_by_sender = sender_limited(bare.attempts, bare.first_failed_mbps)
    result.update(
        fixed_rate=emulated.attempts, max_sustained_mbps=emulated.highest_held_mbps,
        first_failing_mbps=emulated.first_failed_mbps, bare_fixed_rate=bare.attempts,
        bare_max_sustained_mbps=bare.highest_held_mbps,
        bare_first_failing_mbps=bare.first_failed_mbps, ceiling_vs_bare=ratio,
        bare_limited_by_sender=bare_by_sender,
        packet_rates=pps, held_rule={"delivered_fraction": SUSTAINED_FRACTION,
                                     "lateness_p99_us": MAX_LATENESS_P99_US},
        data_path=c["data_path"], cpu_steal_pct=steal.percent(),
        cpu_idle_pct=steal.idle_percent(), bench_seconds=round(time.monotonic() - started, 1))
    result["conformance_ok"] = (c["delivered_vs_trace"] or 0) >= 0.995
    print(f"bench link: ceiling at p99 lateness <= {MAX_LATENESS_P99_US / 1000:g} ms: "
          f"{emulated.highest_held_mbps:g} Mbit/s (data path {c['data_path']}); bare path: "
          f"{bare.highest_held_mbps:g} Mbit/s; ratio "
          f"{'n/a' if ratio is None else f'{ratio:.2f}'}", flush=True)
    if bare_by_sender:
        print(f"  the bare path lost nothing at {bare.first_failed_mbps:g} Mbit/s: iperf3 could "
              f"not offer it, so the bare ceiling is the sender's (a lower bound on the path's)",
              flush=True)
    print("  frame   path      offered      delivered    lateness p99", flush=True)
    for r in pps:
        late = f"{r['lateness_p99_us']} us" if r["path"] == "emulator" else "-"
        note = " (iperf3 is the limit)" if r["iperf3_limited"] else ""
        print(f"  {r['frame_bytes']:5d}   {r['path']:8}  {_kpps(r['offered_pps']):>11}  "
              f"{_kpps(r['delivered_pps']):>11}  {late}{note}", flush=True)
    # Last, with the machine otherwise as quiet as the bench left it: the floor under any
    # link's departure timing here (bench/timing_floor.py).
    result["timing_floor"] = timing_floor.measure(paths)
    floor_text = timing_floor.describe(result["timing_floor"])
    print(f"bench link: (e) the machine's timing floor: {floor_text}", flush=True)
    print(f"bench link: (f) departure precision at {shaper_precision.RATE_MBPS:g} Mbit/s, "
          f"netrepro-link against the kernel's HTB, one {shaper_precision.CC} flow, "
          f"{shaper_precision.SECONDS:g} s each", flush=True)
    result["shaper_precision"] = shaper_precision.measure(paths, out)
    print(f"  gaps within 10%: {shaper_precision.describe(result['shaper_precision'])}",
          flush=True)
    steal_pct = result["cpu_steal_pct"]
    print(f"  CPU steal during the bench: "
          f"{'unknown' if steal_pct is None else f'{steal_pct:.2f}%'}", flush=True)
    print(json.dumps(result, sort_keys=True))
    return 0
