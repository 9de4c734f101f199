"""The BBR paper's numbers as functions: the path's BDP, the loss limit (1 - p) x C, Mathis's
loss-limited TCP rate, and the times the spec derives from Linux's BBR v1 constants.

Packets are the emulator's: 1504 bytes (IP length 1500 + 4), the basis its rate is set on.
"""
from __future__ import annotations

import math

PACKET_BYTES = 1504
MSS_BYTES = 1448  # a full segment's payload with TCP timestamps (1500 - 20 - 32)
CYCLE_LENGTH = 8  # ProbeBW's gain cycle: 5/4, 3/4 and six phases of 1, each one RTprop
MATHIS_C = 1.22  # sqrt(3/2)


def bdp_packets(rate_mbps: float, rtt_ms: float) -> float:
    """RTprop x BtlBw in the emulator's packets: 33.2 at 10 Mbit/s x 40 ms."""
    return rate_mbps * 1e6 * rtt_ms / 1000.0 / (PACKET_BYTES * 8)


def loss_limit_mbps(loss: float, rate_mbps: float) -> float:
    """The paper's model line: the link rate times the fraction delivered, (1 - p) x C."""
    return (1.0 - loss) * rate_mbps


def mathis_mbps(loss: float, rtt_ms: float, mss_bytes: int = MSS_BYTES) -> float:
    """Mathis et al.'s loss-limited rate of a Reno-like flow, 1.22 MSS / (RTT sqrt(p)):
    4.5 Mbit/s at 0.1% loss and 100 ms (the spec's cross-check of CUBIC's cliff)."""
    return MATHIS_C * mss_bytes * 8 / (rtt_ms / 1000.0) / math.sqrt(loss) / 1e6


def cycle_period_ms(rtprop_ms: float) -> float:
    """ProbeBW's gain cycle, 8 RTprop: 320 ms at 40 ms."""
    return CYCLE_LENGTH * rtprop_ms


def packet_time_ms(rate_mbps: float) -> float:
    """One emulator packet's serialization: 1.2 ms at 10 Mbit/s."""
    return PACKET_BYTES * 8 / (rate_mbps * 1e6) * 1000.0
