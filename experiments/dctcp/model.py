"""DCTCP's analysis (SIGCOMM'10, sections 3.3 and 3.4) as functions, in packets.

With N synchronized long flows over a link of C packets/s, base round trip RTT and marking
threshold K:

- the window at which the queue reaches K: W* = (C RTT + K) / N;
- alpha in steady state: alpha^2 (1 - alpha/4) = 2 / W*;
- the queue's amplitude: A = 1/2 sqrt(2 N (C RTT + K)), its peak Q_max = K + N, its trough
  Q_max - A, its period T_C = 1/2 sqrt(2 (C RTT + K) / N) round trips;
- no underflow (full throughput) for any N when K > C RTT / 7: the trough K + N - A is
  lowest at N = (C RTT + K) / 8, where it is K - (C RTT + K) / 8.

C counts packets as the emulator serves them: 1504 bytes (IP length 1500 + 4) each. The
base RTT is the emulated propagation delay plus one full packet's serialization; the hosts'
own processing adds to it in a run (the first flow's smoothed RTT is in its metrics).
"""
from __future__ import annotations

import math

PACKET_BYTES = 1504


def packets_per_s(rate_mbps: float) -> float:
    return rate_mbps * 1e6 / (8 * PACKET_BYTES)


def base_rtt_s(rtt_ms: float, rate_mbps: float) -> float:
    """The emulated round trip plus one full packet's serialization at the bottleneck."""
    return rtt_ms / 1000.0 + 1 / packets_per_s(rate_mbps)


def bdp_packets(rate_mbps: float, rtt_ms: float) -> float:
    """C x RTT in packets."""
    return packets_per_s(rate_mbps) * base_rtt_s(rtt_ms, rate_mbps)


def w_star(bdp: float, k: float, flows: int) -> float:
    return (bdp + k) / flows


def alpha_steady(bdp: float, k: float, flows: int) -> float:
    """The alpha solving alpha^2 (1 - alpha/4) = 2 / W* (bisection on [0, 1]; 1 when even
    alpha = 1 leaves the left side short, i.e. W* <= 8/3)."""
    target = 2 / w_star(bdp, k, flows)
    if target >= 0.75:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid * mid * (1 - mid / 4) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def amplitude(bdp: float, k: float, flows: int) -> float:
    return 0.5 * math.sqrt(2 * flows * (bdp + k))


def q_max(k: float, flows: int) -> float:
    return k + flows


def q_min(bdp: float, k: float, flows: int) -> float:
    """The sawtooth's trough; below 0 the queue empties and the link idles."""
    return q_max(k, flows) - amplitude(bdp, k, flows)


def period_rtts(bdp: float, k: float, flows: int) -> float:
    return 0.5 * math.sqrt(2 * (bdp + k) / flows)


def k_bound(bdp: float) -> float:
    """K above this keeps the queue from emptying for any number of flows."""
    return bdp / 7
