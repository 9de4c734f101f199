"""Sizing Router Buffers' models as functions, in packets and seconds.

C counts packets as the emulator serves them: 1504 bytes each (IP length 1500 + 4), so a
buffer of B packets holds B full-size segments and the delay-bandwidth product is C x RTT
in the same packets.

- The rule of thumb: B = RTT x C. The paper's rule for n desynchronized long flows:
  B = RTT x C / sqrt(n), RTT the flows' mean round trip.
- One Reno flow through a router with B packets of buffer (Appendix B's fluid model): its
  window rises from (RTT C + B) / 2 to RTT C + B, one packet per round trip; the sawtooth's
  period is T = B^2 / (2C) + RTT B; the queue is W(t) - RTT C.
- One Reno flow's utilization with B = k RTT C, k <= 1 (the fluid model and the standard
  idle phase; not printed in the paper, derived in the reproduction's spec):
  U(k) = [(1 - k)(3 + k) / 4 + 2k + k^2] / (1 + k + k^2).
- Many desynchronized flows (section 3): the queue's spread is at most
  (2 Tp C + B) / (3 sqrt 3 sqrt n); the utilization's lower bound is Eq. 6,
  erf(3 sqrt 3 / (2 sqrt 2) x B / ((2 Tp C + B) / sqrt n)).
"""
from __future__ import annotations

import math

PACKET_BYTES = 1504


def packets_per_s(rate_mbps: float) -> float:
    return rate_mbps * 1e6 / (8 * PACKET_BYTES)


def bdp_packets(rate_mbps: float, rtt_ms: float) -> float:
    """RTT x C in packets."""
    return packets_per_s(rate_mbps) * rtt_ms / 1000.0


def rule_packets(rate_mbps: float, rtt_ms: float, flows: int) -> float:
    """RTT x C / sqrt(n)."""
    return bdp_packets(rate_mbps, rtt_ms) / math.sqrt(flows)


def sawtooth_period_s(buffer_packets: float, rate_mbps: float, rtt_ms: float) -> float:
    """One Reno flow's period: B^2 / (2C) + RTT B (Appendix B)."""
    c = packets_per_s(rate_mbps)
    return buffer_packets ** 2 / (2 * c) + rtt_ms / 1000.0 * buffer_packets


def single_flow_utilization(k: float) -> float:
    """One Reno flow's utilization with B = k x RTT C (k <= 1; 1 above)."""
    if k >= 1:
        return 1.0
    if k < 0:
        raise ValueError(f"k = {k}: a buffer is not negative")
    return ((1 - k) * (3 + k) / 4 + 2 * k + k * k) / (1 + k + k * k)


def queue_spread_bound(bdp: float, buffer_packets: float, flows: int) -> float:
    """The bound on the queue's standard deviation: (2 Tp C + B) / (3 sqrt 3 sqrt n)."""
    return (bdp + buffer_packets) / (3 * math.sqrt(3) * math.sqrt(flows))


def utilization_lower_bound(bdp: float, buffer_packets: float, flows: int) -> float:
    """Eq. 6: erf(3 sqrt 3 / (2 sqrt 2) x B / ((2 Tp C + B) / sqrt n))."""
    return math.erf(3 * math.sqrt(3) / (2 * math.sqrt(2)) * buffer_packets
                    / ((bdp + buffer_packets) / math.sqrt(flows)))
