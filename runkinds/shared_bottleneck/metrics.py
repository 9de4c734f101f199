"""metrics.json of a shared-bottleneck run (runkinds/shared_bottleneck/): N flows into one
switch port, read from the port's own per-packet record and each flow's folder.

The scored window is the time every flow was running, less a warm-up: from the last flow's
start plus `warmup_s` to the first flow's start plus the run's duration (each flow's start
is in meta.json, CLOCK_MONOTONIC like the emulator's logs). Over it:

- the queue: its length every millisecond (exact, from the log's arrivals and departures,
  not polled: analysis/queue_log.py) for the median, percentiles and the CDF, and as each
  arriving packet found it for the peak (99th percentile) and the maximum; how long the
  queue went without reaching 95% of the buffer; drops and CE marks at the port;
- throughput at the port (IP bytes departed) and goodput (TCP payload departed: IP length
  less 52 bytes of IPv4 and TCP headers with timestamps, which every data segment carries
  when `tcp_timestamps` is on, as the run records); each flow's goodput from its iperf3
  server's report (its own duration), and Jain's fairness index over them;
- DCTCP's alpha, per flow: the mean of its samples in the window (every 50 ms from
  bpf_dctcp's map, or every 200 ms from `ss` for the kernel's dctcp), and their mean;
- how long each flow was limited by the receiver's window or by its send buffer, from its
  connection's own record (`ss -tin` near the end: `rwnd_limited`, `sndbuf_limited`, as a
  share of its busy time); a flow limited more than 1% of its time makes the run no
  measurement of the path (`window_limited`, analysis/summary.py);
- fidelity, from the emulator's own record: the gaps between real departures of full-size
  packets while the queue was backlogged, against the ideal link's 1504 x 8 / rate µs
  (120.32 µs at 100 Mbit/s: the emulator counts a packet as IP length + 4 bytes, and that
  is the link it emulates), and its lateness.

With tc RED marking (`--queue red`) the queue is RED's, polled every 10 ms into
red-queue.csv (runkinds/shared_bottleneck/red.py): the statistics come from those samples, and the
emulator's gaps say nothing of RED's queue (none are given).
"""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from analysis.fidelity import gaps_within_10pct, lateness_ok
from analysis.host_timing import host_timing_metrics
from analysis.queue_log import (QueueLog, backlog_at, backlog_series, departure_gaps,
                                ideal_gap_us, parse_queue_log)
from analysis.tcp_probe import read_probe
from analysis.tcp_window_check import tcp_window_metrics
from analysis.variant_state import congestion_extent_mean, variant_state_metrics
from analysis.window_limits import window_limit_metrics
from core.queue_spec import parse_queue
from core.runspec import RunSpec
from core.ss_output import detail_lines

DATA_QUEUE_LOG = "data-queue.log"
RED_QUEUE_FILE = "red-queue.csv"
SAMPLE_STEP_S = 0.001
HEADER_BYTES = 52  # IPv4 (20) + TCP with timestamps (32) on every data segment
BASIS_EXTRA = 4  # the emulator's size is IP length + 4
FULL_BUFFER_SHARE = 0.95
K_BAND = 5  # the spec's band around K: [K - 5, K + 5]
SS_END_GLOB = "ss-end-*.txt"  # schemes/tcp_flows.py: each sender's `ss -tin` near the end
_LIMITED = re.compile(r"\b(busy|rwnd_limited|sndbuf_limited):(\d+)ms")


class SharedBottleneckError(ValueError):
    """A run folder that cannot give its metrics; the message names what is missing."""


@dataclass(frozen=True)
class RunShape:
    """What the run asked for, from its spec."""

    flows: int
    rate_mbps: float
    rtt_ms: int
    buffer_packets: int | None
    k: int | None  # the marking threshold (None: drop-tail)
    marking: str  # "emulator", "red" or "none"
    duration_s: float
    warmup_s: float


def run_shape(spec: RunSpec) -> RunShape:
    queue = parse_queue(spec.queue)
    marking = str(spec.option("marking", "emulator"))
    if queue.mark_threshold is None:
        marking = "none"
    return RunShape(flows=int(spec.option("flows", 1)),
                    rate_mbps=float(spec.data_trace.removeprefix("rate:")),
                    rtt_ms=int(spec.option("rtt_ms", 0)), buffer_packets=queue.packets,
                    k=queue.mark_threshold, marking=marking,
                    duration_s=float(spec.duration_s or 0.0),
                    warmup_s=float(spec.option("warmup_s", 2.0)))


def flow_starts(meta: Mapping[str, Any]) -> list[float]:
    """Each flow's start (CLOCK_MONOTONIC s), from meta.json."""
    starts = meta.get("flows_started_s") or [
        f.get("started_s") for f in (meta.get("verification") or {}).get("flows") or []]
    if not starts or any(s is None for s in starts):
        raise SharedBottleneckError("meta.json does not say when each flow started "
                                    "(flows_started_s)")
    return [float(s) for s in starts]


def scored_window(starts: Sequence[float], base_ms: int, shape: RunShape) -> tuple[float, float]:
    """(start, end) in seconds after the log's base timestamp."""
    base = base_ms / 1000.0
    start = max(starts) - base + shape.warmup_s
    end = min(starts) - base + shape.duration_s
    if end <= start:
        raise SharedBottleneckError(f"no scored window: every flow ran from "
                                    f"{max(starts) - base:.2f} s to {end:.2f} s, less a "
                                    f"{shape.warmup_s:g}-s warm-up")
    return start, end


# ------------------------------------------------------------------ the queue

def queue_samples(q: QueueLog, start_s: float, end_s: float,
                  step_s: float = SAMPLE_STEP_S) -> tuple[np.ndarray, np.ndarray]:
    """(seconds after the base, packets in the queue) every `step_s` in the window."""
    times_s = np.arange(start_s, end_s, step_s)
    return times_s, backlog_at(q, np.round(times_s * 1e6).astype(np.int64))


def longest_gap_to(times_s: np.ndarray, values: np.ndarray, level: float, start_s: float,
                   end_s: float) -> float:
    """The longest stretch of the window (s) without a value at or above `level` (the whole
    window when none reaches it)."""
    hits = times_s[values >= level]
    edges = np.concatenate([[start_s], hits, [end_s]])
    return float(np.max(np.diff(edges)))


def _percentiles(values: np.ndarray) -> dict[str, float]:
    p1, p5, median, p95, p99 = np.percentile(values, [1, 5, 50, 95, 99])
    return {"queue_p1": float(p1), "queue_p5": float(p5), "queue_median": float(median),
            "queue_p95": float(p95), "queue_p99": float(p99)}


def queue_metrics(times_s: np.ndarray, samples: np.ndarray, arrivals: np.ndarray | None,
                  shape: RunShape, start_s: float, end_s: float) -> dict[str, Any]:
    """The queue's statistics from its time samples (and each arrival's backlog, when the
    log has them)."""
    if samples.size == 0:
        raise SharedBottleneckError("no queue samples in the scored window")
    out: dict[str, Any] = _percentiles(samples.astype(np.float64))
    exact = arrivals if arrivals is not None and arrivals.size else samples
    out.update(queue_samples=int(samples.size), queue_mean=float(samples.mean()),
               queue_std=float(samples.std()),
               queue_max=int(exact.max()), queue_peak=float(np.percentile(exact, 99)),
               queue_amplitude=out["queue_p99"] - out["queue_p1"])
    if shape.k is not None:
        band = (samples >= shape.k - K_BAND) & (samples <= shape.k + K_BAND)
        out["queue_in_k_band"] = float(band.mean())
    if shape.buffer_packets:
        out["queue_gap_to_95pct_buffer_s"] = longest_gap_to(
            times_s, samples, FULL_BUFFER_SHARE * shape.buffer_packets, start_s, end_s)
    return out


def read_red_queue(run_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """red-queue.csv as (time_s, qlen, drops, marked) arrays."""
    path = run_dir / RED_QUEUE_FILE
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SharedBottleneckError(f"{path.name} has no samples")
    column = {k: np.array([float(r[k]) for r in rows]) for k in ("time_s", "qlen", "drops",
                                                                 "marked")}
    return column["time_s"], column["qlen"], column["drops"], column["marked"]


# ------------------------------------------------------------------ throughput

def _departed(q: QueueLog, start_s: float, end_s: float) -> np.ndarray:
    """Bool per sent packet: it left the queue in the window."""
    return (q.departure_us >= round(start_s * 1e6)) & (q.departure_us < round(end_s * 1e6))


def port_throughput(q: QueueLog, start_s: float, end_s: float) -> tuple[float, float]:
    """(IP-level, TCP-payload) Mbit/s departing the port in the window."""
    ip = q.size[_departed(q, start_s, end_s)] - BASIS_EXTRA
    seconds = end_s - start_s
    payload = np.clip(ip - HEADER_BYTES, 0, None)
    return float(ip.sum() * 8 / seconds / 1e6), float(payload.sum() * 8 / seconds / 1e6)


def link_utilization(q: QueueLog, start_s: float, end_s: float, rate_mbps: float) -> float:
    """The share of the window the link spent serializing packets: bytes as the emulator
    counts them (IP length + 4) over what the rate serializes in the window. (IP bytes alone
    read a link that never idles as 1500/1504 = 99.73% busy.)"""
    departed = _departed(q, start_s, end_s)
    return float(q.size[departed].sum() * 8 / ((end_s - start_s) * rate_mbps * 1e6))


def iperf_goodput_mbps(flow_dir: Path) -> float | None:
    """The flow's goodput as its iperf3 server measured it (its whole run), else the
    client's report of it."""
    for name in ("server", "client"):
        try:
            report = json.loads((flow_dir / f"iperf3-{name}.stdout").read_text())
            return float(report["end"]["sum_received"]["bits_per_second"]) / 1e6
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def jain_index(values: Sequence[float]) -> float | None:
    if not values or not any(values):
        return None
    return float(sum(values) ** 2 / (len(values) * sum(v * v for v in values)))


# ------------------------------------------------------------------ window limits

def window_limits(run_dir: Path, client_ports: Sequence[int | None]
                  ) -> list[dict[str, float] | None]:
    """Per flow (by its data connection's local port): the share of its busy time (%) it was
    limited by the receiver's window and by its send buffer, from the senders' `ss -tin`
    near the end; None for a flow no record holds."""
    found: dict[int, dict[str, int]] = {}
    for path in sorted(run_dir.glob(SS_END_GLOB)):
        for local, _peer, line in detail_lines(path.read_text(errors="replace")):
            if local is None:
                continue
            values = {k: int(v) for k, v in _LIMITED.findall(line)}
            if values:
                found.setdefault(local, {}).update(values)
    out: list[dict[str, float] | None] = []
    for port in client_ports:
        record = found.get(port) if port is not None else None
        busy = (record or {}).get("busy")
        if not record or not busy:
            out.append(None)
            continue
        out.append({"rwnd_pct": 100.0 * record.get("rwnd_limited", 0) / busy,
                    "sndbuf_pct": 100.0 * record.get("sndbuf_limited", 0) / busy,
                    "busy_ms": float(busy)})
    return out


def sender_counters(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The senders' namespaces' TCP counters over the whole run, summed: retransmission
    timeouts, retransmitted and sent segments (None where the run did not record them)."""
    hosts = meta.get("tcp_counters") or {}
    if not hosts:
        return {"tcp_timeouts": None, "tcp_retransmitted": None, "tcp_segments_out": None}

    def total(key: str) -> int:
        return sum(int((c or {}).get(key, 0)) for c in hosts.values())
    return {"tcp_timeouts": total("TcpExt.TCPTimeouts"),
            "tcp_retransmitted": total("Tcp.RetransSegs"),
            "tcp_segments_out": total("Tcp.OutSegs")}


# ------------------------------------------------------------------ the run

@dataclass(frozen=True, eq=False)
class RunWindow:
    """A run's queue log and the scored window in it (seconds after its base timestamp)."""

    shape: RunShape
    log: QueueLog
    start_s: float
    end_s: float

    @property
    def base_s(self) -> float:
        return self.log.base_ms / 1000.0


def load_window(run_dir: Path, spec: RunSpec, meta: Mapping[str, Any]) -> RunWindow:
    shape = run_shape(spec)
    q = parse_queue_log(run_dir / DATA_QUEUE_LOG)
    start_s, end_s = scored_window(flow_starts(meta), q.base_ms, shape)
    return RunWindow(shape, q, start_s, end_s)


def shared_bottleneck_metrics(run_dir: Path, spec: RunSpec,
                              meta: dict[str, Any]) -> dict[str, Any]:
    window = load_window(run_dir, spec, meta)
    shape, q, start_s, end_s = window.shape, window.log, window.start_s, window.end_s
    base = window.base_s
    m: dict[str, Any] = {"flows": shape.flows, "k": shape.k, "buffer_packets":
                         shape.buffer_packets, "rtt_ms": shape.rtt_ms,
                         "rate_mbps": shape.rate_mbps, "marking": shape.marking,
                         "scored_from_s": start_s, "scored_to_s": end_s,
                         "scored_s": end_s - start_s}
    if shape.marking == "red":
        t, qlen, drops, marked = read_red_queue(run_dir)
        inside = (t - base >= start_s) & (t - base < end_s)
        m.update(queue_metrics(t[inside] - base, qlen[inside], None, shape, start_s, end_s))
        m.update(queue_source=f"tc RED, polled ({RED_QUEUE_FILE})",
                 drops=int(drops[inside][-1] - drops[inside][0]) if inside.any() else None,
                 marks=int(marked[inside][-1] - marked[inside][0]) if inside.any() else None)
    else:
        times_s, samples = queue_samples(q, start_s, end_s)
        arrivals = backlog_series(q, start_s, end_s)[1]
        m.update(queue_metrics(times_s, samples, arrivals, shape, start_s, end_s))
        in_window = (q.arrival_us >= round(start_s * 1e6)) & (q.arrival_us < round(end_s * 1e6))
        ect = np.isin(q.ecn_in, (1, 2)) & in_window
        drops_in = (q.drop_arrival_us >= round(start_s * 1e6)) & \
            (q.drop_arrival_us < round(end_s * 1e6))
        marks = int(np.count_nonzero(q.marked & in_window))
        m.update(queue_source=f"the emulator's per-packet log ({DATA_QUEUE_LOG})",
                 drops=int(np.count_nonzero(drops_in)), marks=marks,
                 marked_fraction=marks / int(ect.sum()) if ect.any() else None)
        gaps = departure_gaps(q, start_s, end_s)
        ideal = ideal_gap_us(shape.rate_mbps)
        m.update(ideal_gap_us=ideal, gaps_backlogged=int(gaps.actual_us.size),
                 gaps_within_10pct=(gaps.fraction_within(ideal) if gaps.actual_us.size
                                    else None),
                 gap_p1_us=_pct(gaps.actual_us, 1), gap_p50_us=_pct(gaps.actual_us, 50),
                 gap_p99_us=_pct(gaps.actual_us, 99))
    m["drops_total"] = int(q.drop_arrival_us.size)
    throughput, goodput = port_throughput(q, start_s, end_s)
    m.update(throughput_mbps=throughput, goodput_mbps=goodput,
             utilization=link_utilization(q, start_s, end_s, shape.rate_mbps))
    verification = meta.get("verification") or {}
    flows = verification.get("flows") or []
    folders = [run_dir / str(f.get("folder")) for f in flows]
    per_flow = [iperf_goodput_mbps(d) for d in folders]
    known = [g for g in per_flow if g is not None]
    m.update(flow_goodput_mbps=per_flow, flow_goodput_sum_mbps=sum(known) if known else None,
             flow_goodput_min_mbps=min(known) if known else None,
             flow_goodput_max_mbps=max(known) if known else None,
             jain_fairness=jain_index(known) if len(known) == len(per_flow) else None)
    m.update(window_limit_metrics(window_limits(run_dir, [f.get("client_port")
                                                          for f in flows])))
    m.update(sender_counters(meta))
    alphas = [congestion_extent_mean(d, base + start_s, base + end_s) for d in folders]
    have = [a for a in alphas if a is not None]
    m.update(alpha_flows=alphas, alpha_mean=float(np.mean(have)) if have else None,
             alpha_flows_sampled=len(have))
    link = meta.get("link") or {}
    lateness = (link.get("a2b") or {}).get("lateness_us") or {}
    m.update(lateness_p50_us=lateness.get("p50"), lateness_p99_us=lateness.get("p99"),
             lateness_max_us=lateness.get("max"),
             ack_lateness_p99_us=((link.get("b2a") or {}).get("lateness_us") or {}).get("p99"),
             lateness_ok=lateness_ok(link), emulator_gaps_within_10pct=gaps_within_10pct(link),
             cpu_steal_pct=meta.get("cpu_steal_pct"),
             cpu_idle_pct=meta.get("cpu_idle_pct"),
             socket_drops=(link.get("a2b") or {}).get("socket_drops"),
             emulator_scheduling=link.get("scheduling"), sender_end=meta.get("sender_end"))
    m.update(host_timing_metrics(meta))
    for key in ("cc_requested", "cc_used", "cc_provider", "cc_source_sha256"):
        m[key] = verification.get(key)
    m["cc_used_flows"] = sorted({str(f.get("cc_used")) for f in flows})
    if folders:
        m.update(_probed_flow(folders[0], spec, meta, flows[0]))
    return m


def _probed_flow(folder: Path, spec: RunSpec, meta: dict[str, Any],
                 facts: dict[str, Any]) -> dict[str, Any]:
    """The first flow's window check and its variant's own state, from its tcp_probe trace."""
    flow_meta = {"verification": dict(facts, cc_requested=(meta.get("verification") or {})
                                      .get("cc_requested")),
                 "topology": {}}
    out = tcp_window_metrics(folder, spec, flow_meta)
    probe = read_probe(folder)
    out.update({f"flow1_{k}": v for k, v in variant_state_metrics(folder, probe).items()})
    if probe is not None and len(probe):
        half = probe.time_s >= probe.time_s[0] + (probe.time_s[-1] - probe.time_s[0]) / 2
        out["flow1_cwnd_median"] = float(np.median(probe.snd_cwnd[half]))
        out["flow1_cwnd_min"] = int(probe.snd_cwnd[half].min())
        out["flow1_srtt_median_us"] = float(np.median(probe.srtt_us[half]))
    return out


def _pct(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if values.size else None


def finite(value: Any) -> float | None:
    """A finite float or None (for cells that may hold None, NaN or text)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
