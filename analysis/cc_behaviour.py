"""What a TCP run's congestion control did, from data.log and tcp-probe.csv.

These are the measurements behind the behavioural claims of each variant
(docs/congestion-control.md): Vegas keeps alpha..beta packets queued, BIC
sets ssthresh to 819/1024 of the window at a loss and approaches the
previous maximum by binary search, Hybla grows rho^2 / cwnd per ACK in
congestion avoidance, DCTCP cuts its window by alpha / 2 on marks
(analysis/dctcp_alpha.py). Every value is None when its input is missing.

Definitions:

- Steady state: the second half of the span of the data.log (queue) or of
  the probe trace (cwnd).
- Queue occupancy: packets in the bottleneck queue, counted from the log:
  arrivals (`+`) minus drops at enqueue (`d`) minus departures (`-`), read at
  the end of every millisecond (so statistics are time-weighted).
- Loss episode: the congestion state leaves Open/Disorder for CWR, Recovery
  or Loss. The window at the loss is the last probe sample before that
  (tcp_probe samples before an ACK is processed); ssthresh is the first
  sample inside the episode (the probe reports the real ssthresh there).
- Congestion-avoidance growth per RTT: over pairs of consecutive probe samples
  in Open with cwnd >= ssthresh, after the first loss episode, the sum of cwnd
  changes divided by the sum of (time step / srtt), i.e. RTTs elapsed.
"""
from __future__ import annotations

import json
import math
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from analysis.dctcp_alpha import dctcp_metrics
from analysis.mahimahi_log import LinkLog, parse_log
from analysis.tcp_probe import ProbeTrace, read_probe
from core.tcp_probe_format import CA_CWR, CA_DISORDER, CA_LOSS, CA_OPEN, CA_RECOVERY

log = logging.getLogger(__name__)

DEFAULT_MSS = 1448  # 1500-byte MTU, 20 IP + 20 TCP + 12 timestamp option bytes
REDUCTION_STATES = (CA_CWR, CA_RECOVERY, CA_LOSS)

# Linux's BIC constants (tcp_bic.c), the same in native/bpf/bic.bpf.c.
BIC_BETA = 819 / 1024
BIC_B = 4
BIC_LOW_WINDOW = 14
BIC_MAX_INCREMENT = 16
BIC_SMOOTH_PART = 20
# Far from Wmax: gap / B >= 4, so BIC adds >= 4 packets per RTT (x packets per
# ACK), 20 times its smooth creep of B / smooth_part near Wmax.
BIC_FAR_GAP = 4 * BIC_B
# Hybla's reference RTT (tcp_hybla.c rtt0 = 25 ms).
HYBLA_RTT0_US = 25_000


@dataclass(frozen=True)
class LossEpisode:
    time_s: float
    state: int  # the state entered: CWR, Recovery or Loss
    cwnd_at_loss: int
    ssthresh_after: int

    @property
    def ratio(self) -> float:
        return self.ssthresh_after / self.cwnd_at_loss


# ---------------------------------------------------------------- the queue

def queue_occupancy_per_ms(link_log: LinkLog) -> np.ndarray:
    """Packets in the queue at the end of every ms from 0 to the last event."""
    times = [link_log.arrival_time, link_log.drop_time, link_log.departure_time]
    if not any(t.size for t in times):
        return np.zeros(0, dtype=np.int64)
    end = int(max(int(t.max()) for t in times if t.size)) + 1

    def per_ms(t: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(t.astype(np.int64), weights=weights, minlength=end)[:end]

    change = per_ms(link_log.arrival_time) - per_ms(link_log.drop_time,
                                                    link_log.drop_count.astype(float)) \
        - per_ms(link_log.departure_time)
    return np.cumsum(change).round().astype(np.int64)


def steady_queue(link_log: LinkLog) -> np.ndarray:
    """Occupancy per ms over the second half of the log's span."""
    occupancy = queue_occupancy_per_ms(link_log)
    if occupancy.size == 0:
        return occupancy
    start = int(link_log.first_event_ms or 0)
    return occupancy[(start + occupancy.size) // 2:]


# ------------------------------------------------------------ probe helpers

def loss_episodes(probe: ProbeTrace) -> list[LossEpisode]:
    """Every entry into a window reduction, with the window before it and ssthresh in it."""
    state = probe.ca_state
    entering = np.flatnonzero(np.isin(state[1:], REDUCTION_STATES)
                              & np.isin(state[:-1], (CA_OPEN, CA_DISORDER))) + 1
    return [LossEpisode(float(probe.time_s[i]), int(state[i]), int(probe.snd_cwnd[i - 1]),
                        int(probe.ssthresh[i])) for i in entering]


def _avoidance_pairs(probe: ProbeTrace) -> np.ndarray:
    """Indices i where samples i and i+1 are both in Open congestion avoidance,
    after the first loss episode and with no episode between them."""
    if len(probe) < 2:
        return np.zeros(0, dtype=np.int64)
    ca = (probe.ca_state == CA_OPEN) & (probe.snd_cwnd >= probe.ssthresh)
    episodes = loss_episodes(probe)
    if not episodes:
        return np.zeros(0, dtype=np.int64)
    after_first = probe.time_s >= episodes[0].time_s
    ok = ca & after_first
    return np.flatnonzero(ok[:-1] & ok[1:])


def growth_per_rtt(probe: ProbeTrace, select: np.ndarray | None = None) -> float | None:
    """cwnd growth per RTT over avoidance pairs (optionally only those with select[i])."""
    pairs = _avoidance_pairs(probe)
    if select is not None:
        pairs = pairs[select[pairs]]
    if pairs.size == 0:
        return None
    d_cwnd = (probe.snd_cwnd[pairs + 1] - probe.snd_cwnd[pairs]).sum()
    srtt_s = np.maximum(probe.srtt_us[pairs], 1) / 1e6
    rtts = ((probe.time_s[pairs + 1] - probe.time_s[pairs]) / srtt_s).sum()
    if rtts <= 0:
        return None
    return float(d_cwnd / rtts)


def acked_packets_per_ack(probe: ProbeTrace, mss: int = DEFAULT_MSS) -> float | None:
    """Mean packets newly acknowledged by an ACK that advanced snd_una, in avoidance."""
    pairs = _avoidance_pairs(probe)
    advance = (probe.snd_una[pairs + 1] - probe.snd_una[pairs]) % (1 << 32)
    advance = advance[(advance > 0) & (advance < (1 << 31))]
    if advance.size == 0:
        return None
    return float(advance.mean() / mss)


def steady_cwnd_median(probe: ProbeTrace) -> float | None:
    if len(probe) == 0:
        return None
    mid = (probe.time_s[0] + probe.time_s[-1]) / 2
    return float(np.median(probe.snd_cwnd[probe.time_s >= mid]))


# ------------------------------------------------------ per-variant models

def bic_wmax_after(episodes: list[LossEpisode]) -> list[int]:
    """BIC's last_max_cwnd after each episode (bictcp_recalc_ssthresh, fast convergence on;
    a timeout (Loss) resets it to 0 after ssthresh, as bictcp_state does)."""
    wmax = 0
    out = []
    for ep in episodes:
        w = ep.cwnd_at_loss
        wmax = int(w * (1 + BIC_BETA) / 2) if w < wmax else w
        if ep.state == CA_LOSS:
            wmax = 0
        out.append(wmax)
    return out


def bic_reductions(probe: ProbeTrace) -> list[LossEpisode]:
    """Every call of BIC's ssthresh hook since the first loss episode: the episodes, and each
    lowering of ssthresh inside one (more losses while the sender recovers). Linux sets
    ssthresh only through that hook, which also moves BIC's Wmax; for a lowering inside an
    episode the window it saw is the smallest with cwnd x beta = that ssthresh."""
    episodes = loss_episodes(probe)
    if not episodes:
        return []
    starts = np.searchsorted(probe.time_s, [ep.time_s for ep in episodes])
    seen = set(int(i) for i in starts)
    found = list(episodes)
    lowered = np.flatnonzero(probe.ssthresh[1:] < probe.ssthresh[:-1]) + 1
    for i in lowered[lowered > starts[0]]:
        if int(i) not in seen:
            ssthresh = int(probe.ssthresh[i])
            found.append(LossEpisode(float(probe.time_s[i]), int(probe.ca_state[i]),
                                     math.ceil(ssthresh * 1024 / 819), ssthresh))
    return sorted(found, key=lambda ep: ep.time_s)


def bic_growth_by_region(probe: ProbeTrace) -> tuple[float | None, float | None]:
    """(far, near): avoidance growth per RTT where BIC's binary search is far from its
    target Wmax (gap = Wmax - cwnd >= BIC_FAR_GAP) and where it creeps near it
    (Wmax - 2B < cwnd < Wmax + B, where BIC adds B / smooth_part per RTT).

    Wmax is replayed by BIC's own rules over every call of its ssthresh hook
    (bic_reductions): the losses that lower ssthresh again while the sender recovers from
    slow start's overshoot move Wmax too, and fast convergence at the next loss depends on
    it. Replayed over the episodes alone, a run whose overshoot took two such lowerings
    gave a Wmax 12 packets high in a later episode, and counted BIC's creep near its true
    Wmax as far growth (2.2 packets per RTT against 9.2 in the run beside it). A sample
    counts only while ssthresh is the one set at the last reduction; a timeout resets Wmax
    to 0 (bictcp_state), and below BIC's low window (14) it grows like Reno. No episode is
    skipped for its position."""
    reductions = bic_reductions(probe)
    if not reductions:
        return None, None
    wmax = np.zeros(len(probe), dtype=np.int64)
    set_ssthresh = np.full(len(probe), -1, dtype=np.int64)
    starts = np.searchsorted(probe.time_s, [ep.time_s for ep in reductions])
    for k, value in enumerate(bic_wmax_after(reductions)):
        end = starts[k + 1] if k + 1 < len(starts) else len(probe)
        wmax[starts[k]:end] = value
        set_ssthresh[starts[k]:end] = reductions[k].ssthresh_after
    gap = wmax - probe.snd_cwnd
    known = (wmax > 0) & (probe.ssthresh == set_ssthresh) & (probe.snd_cwnd > BIC_LOW_WINDOW)
    far = known & (gap >= BIC_FAR_GAP)
    near = known & (gap < 2 * BIC_B) & (gap > -BIC_B)
    return growth_per_rtt(probe, far), growth_per_rtt(probe, near)


def hybla_rho(probe: ProbeTrace) -> float | None:
    """rho as tcp_hybla computes it from the smallest smoothed RTT, in 1/8 steps."""
    if len(probe) == 0:
        return None
    srtt = probe.srtt_us[probe.srtt_us > 0]
    if srtt.size == 0:
        return None
    return max(int(srtt.min()) * 8 // HYBLA_RTT0_US, 8) / 8


# --------------------------------------------------------------- the entry

def run_mss(run_dir: Path) -> int:
    """The sender's MSS from iperf3's JSON, else the default for a 1500-byte MTU."""
    try:
        report = json.loads((run_dir / "iperf3-client.stdout").read_text())
        return int(report["start"]["tcp_mss_default"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_MSS


def cc_behaviour_metrics(run_dir: Path, cc: str | None) -> dict[str, Any]:
    """Flat metrics for metrics.json; absent inputs give None values, never an error."""
    out: dict[str, Any] = {}
    data_log = run_dir / "data.log"
    if data_log.exists():
        queue = steady_queue(parse_log(data_log))
        if queue.size:
            out.update(queue_occupancy_median_pkts=float(np.median(queue)),
                       queue_occupancy_mean_pkts=float(queue.mean()),
                       queue_occupancy_p95_pkts=float(np.percentile(queue, 95)),
                       queue_occupancy_max_pkts=int(queue.max()))
    probe = read_probe(run_dir)
    if probe is None or len(probe) == 0:
        return out
    episodes = loss_episodes(probe)
    above_low = [ep.ratio for ep in episodes if ep.cwnd_at_loss > BIC_LOW_WINDOW]
    out.update(cwnd_median_pkts=steady_cwnd_median(probe),
               loss_episodes=len(episodes),
               ssthresh_ratio_at_loss=float(np.median(above_low)) if above_low else None,
               ca_growth_pkts_per_rtt=growth_per_rtt(probe),
               acked_pkts_per_ack=acked_packets_per_ack(probe, run_mss(run_dir)))
    trace: ProbeTrace = probe
    extra: dict[str, Callable[[], dict[str, Any]]] = {
        "bic": lambda: dict(zip(("bic_growth_far_pkts_per_rtt", "bic_growth_near_pkts_per_rtt"),
                                bic_growth_by_region(trace))),
        "hybla": lambda: {"hybla_rho": hybla_rho(trace)},
        "dctcp": lambda: dctcp_metrics(run_dir, trace),
    }
    if cc in extra:
        out.update(extra[cc]())
    return out


def episodes_as_dicts(episodes: list[LossEpisode]) -> list[dict[str, Any]]:
    return [asdict(ep) | {"ratio": ep.ratio} for ep in episodes]
