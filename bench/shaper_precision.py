"""Departure precision at 100 Mbit/s: netrepro-link against the kernel's HTB shaper.

Mininet-HiFi published 99.8% of departure gaps within 10% of schedule at 100 Mbit/s with HTB
on its own machine. On another machine, a link below that may be the emulator's doing or the
machine's; this step tells them apart. It runs the same path twice with the same load (one
CUBIC flow, 100 Mbit/s, a 1000-packet drop-tail queue, offloads off): once through
netrepro-link, once with the middle node's kernel forwarding the frames (step (c)'s bare path)
through an HTB class of the same rate that paces every frame (topologies/trace_link.py
`htb_commands`). The emulator is placed as runs place it (a CPU of its own, the hosts' frames
steered off it); HTB dequeues in the kernel's softirqs, wherever the frames are.

Both are judged by one rule from one vantage point: a capture at the receiver's interface
times every data frame, and the share of gaps between consecutive frames within 10% of the
second frame's time at the rate is counted, each on its shaper's byte basis (HTB counts the
Ethernet frame, netrepro-link mahimahi's IP length + 4). While the step runs a socket asks the
kernel for receive timestamps, so a frame is stamped as the veth takes it from the shaper
(`netif_rx`), not when the receiver's softirq gets to it. The first SETTLE_S seconds (slow
start, the queue filling) and the last second are left out; with 1000 packets of queue one
CUBIC flow keeps it backlogged after that, so every gap counts (the emulator's own count of
backlogged gaps is kept beside to show it).
"""
from __future__ import annotations

import json
import socket
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Iterable, Sequence

import dpkt

from core.active_runs import ActiveRun
from core.errors import Unavailable
from core.paths import ProjectPaths
from schemes.base import ManagedProcess
from topologies.link_side import LinkSide

RATE_MBPS = 100.0
QUEUE_PACKETS = 1000
SECONDS = 10.0
SETTLE_S = 1.5
TAIL_S = 1.0
TOLERANCE = 0.10
CC = "cubic"
PORT = 5201  # iperf3's
SHAPERS = ("emulator", "htb")
# The capture writes in large blocks from a buffer that holds the whole run (~10 MB of
# headers), so tcpdump wakes rarely: woken for every frame, it took the CPU from HTB's
# softirq (85.8-86.6% of gaps within, 90.5-91.0% without it minutes later).
CAPTURE_BUFFER_KIB = 65536
# Bytes each shaper counts beyond the IP packet: the Ethernet header (HTB sees the frame a
# veth sends, no FCS), or mahimahi's 4 (netrepro-link).
EXTRA_BYTES = {"htb": 14, "emulator": 4}
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def departures(pcap: Path) -> tuple[list[float], list[int]]:
    """Each captured IPv4 frame's time (s) and IP length, in capture order."""
    times: list[float] = []
    lengths: list[int] = []
    with open(pcap, "rb") as f:
        for ts, buf in dpkt.pcap.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            if isinstance(eth.data, dpkt.ip.IP):
                times.append(float(ts))
                lengths.append(int(eth.data.len))
    return times, lengths


def gaps_within(times: Sequence[float], ip_lengths: Sequence[int], rate_mbps: float,
                extra_bytes: int, settle_s: float = SETTLE_S, tail_s: float = TAIL_S
                ) -> dict[str, Any]:
    """The share of consecutive departures' gaps within TOLERANCE of the second frame's
    time at `rate_mbps` ((IP length + extra_bytes) x 8 / rate), over the frames from settle_s
    after the first to tail_s before the last."""
    if len(times) < 2:
        return {"gaps": 0, "within_10pct": 0, "fraction": None}
    start, end = times[0] + settle_s, times[-1] - tail_s
    kept = [(t, n) for t, n in zip(times, ip_lengths) if start <= t <= end]
    gaps = within = 0
    errors_us: list[float] = []
    for (t0, _), (t1, n1) in zip(kept, kept[1:]):
        want_s = (n1 + extra_bytes) * 8 / (rate_mbps * 1e6)
        error = (t1 - t0) - want_s
        gaps += 1
        within += abs(error) <= TOLERANCE * want_s
        errors_us.append(abs(error) * 1e6)
    errors_us.sort()
    return {"gaps": gaps, "within_10pct": within,
            "fraction": within / gaps if gaps else None,
            "abs_error_p50_us": _percentile(errors_us, 0.50),
            "abs_error_p99_us": _percentile(errors_us, 0.99)}


def _percentile(ordered: Sequence[float], q: float) -> float | None:
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) if ordered else None


def check_cc(available: str) -> None:
    """Refuses a kernel without the flow's congestion control (never another in its place)."""
    if CC not in available.split():
        raise Unavailable(f"bench link step (f) needs TCP {CC}, which this kernel does not "
                          f"offer (available: {available.strip() or 'none'}): build it in or "
                          f"load tcp_{CC}")


def one_path(paths: ProjectPaths, out: Path, shaper: str, seconds: float) -> dict[str, Any]:
    """One CUBIC flow across the path through `shaper`; the receiver's capture judged."""
    from kernel.packet_capture import PacketCapture
    from runkinds.trace_path.network import RECEIVER_IP, TracePath
    from topologies.guarded_network import new_prefix
    out.mkdir(parents=True, exist_ok=True)
    active = ActiveRun(paths.state_dir / "active", new_prefix())
    side = LinkSide(rate_mbps=RATE_MBPS)
    with ExitStack() as stack:
        stack.callback(active.close)
        stamps = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        stamps.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # kernel-wide, while open
        path = stack.enter_context(TracePath(
            data=side, ack=side, emulator=paths.native_binary("link", "netrepro-link"),
            log_dir=out, delay_ms=0, queue=f"droptail:packets={QUEUE_PACKETS}", once=False,
            active=active))
        assert path.link is not None
        capture = PacketCapture(path.receiver, str(path.receiver.defaultIntf()),
                                out / "receiver.pcap", f"tcp dst port {PORT}", active.add,
                                immediate=False, buffer_kib=CAPTURE_BUFFER_KIB)
        server = ManagedProcess(path.receiver, ["iperf3", "-s", "-1", "-J"], out,
                                "iperf3-server", active.add)
        stack.callback(server.stop)
        if shaper == "emulator":
            path.link.start()
        else:
            path.link.forward_in_kernel(htb_rate_mbps=RATE_MBPS,
                                        htb_limit_packets=QUEUE_PACKETS)
        capture.start()
        stack.callback(capture.stop)
        time.sleep(0.3)
        client = ManagedProcess(path.sender, ["iperf3", "-c", RECEIVER_IP, "-C", CC,
                                              "-t", f"{seconds:g}", "-J"],
                                out, "iperf3-client", active.add)
        client.wait(seconds + 30)
        server.wait(10)
        facts = capture.stop()
        stats = None
        if shaper == "emulator":
            path.link.stop_emulator()
            stats = json.loads(path.link.stats_file.read_text())
    times, lengths = departures(out / "receiver.pcap")
    result: dict[str, Any] = {"shaper": shaper, "frames": len(times),
                              "capture_dropped": facts.get("dropped_by_kernel"),
                              **gaps_within(times, lengths, RATE_MBPS, EXTRA_BYTES[shaper])}
    sent = json.loads(client.stdout_path.read_text()).get("end", {}).get("sum_received", {})
    result["goodput_mbps"] = round(sent.get("bits_per_second", 0) / 1e6, 2)
    if stats is not None:
        result["emulator_own_gaps"] = stats["a2b"].get("departure_gaps")
        result["placed_on_cpu"] = stats.get("cpu")
    return result


def measure(paths: ProjectPaths, out: Path, seconds: float = SECONDS) -> dict[str, Any]:
    """Both shapers, emulator first; the HTB's fraction minus the emulator's."""
    check_cc(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text())
    runs = {s: one_path(paths, out / f"precision-{s}", s, seconds) for s in SHAPERS}
    return {"rate_mbps": RATE_MBPS, "queue_packets": QUEUE_PACKETS, "cc": CC,
            "seconds": seconds, "tolerance": TOLERANCE, "paths": runs,
            "emulator_minus_htb": difference(runs.values())}


def difference(runs: Iterable[dict[str, Any]]) -> float | None:
    by = {r["shaper"]: r.get("fraction") for r in runs}
    emulator, htb = by.get("emulator"), by.get("htb")
    if emulator is None or htb is None:
        return None
    return round(emulator - htb, 4)


def describe(result: dict[str, Any]) -> str:
    parts = []
    for r in result["paths"].values():
        f = r.get("fraction")
        parts.append(f"{r['shaper']} {'n/a' if f is None else f'{f:.1%}'} of {r['gaps']} gaps "
                     f"(|error| p99 {r.get('abs_error_p99_us')} us, {r['goodput_mbps']:g} "
                     f"Mbit/s)")
    d = result.get("emulator_minus_htb")
    return "; ".join(parts) + (f"; emulator - HTB = {d * 100:+.1f} points" if d is not None
                               else "")
