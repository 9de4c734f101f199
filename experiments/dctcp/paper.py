"""DCTCP's (SIGCOMM 2010) and Mininet-HiFi's (CoNEXT 2012) numbers, as data.

The DCTCP paper prints no queue values for Figures 1 and 13 (they exist only in its plots);
the queue statistics below were computed from the Mininet-HiFi authors' published data
files (mininet/mininet-tests at d8cb876d, `dctcp/`): Mininet-HiFi's emulation sampled with
`tc -s qdisc` every ~11.8 ms, and the hardware switch (Broadcom Triumph, 1 Gbit/s ports)
every 125 ms. They are in packets, as `tc` counts them (the packet being sent is not in
the backlog; netrepro-link's count includes it: docs/dctcp.md).
"""
from __future__ import annotations

from dataclasses import dataclass

SOURCE_DCTCP = "DCTCP, SIGCOMM'10 (Alizadeh et al.)"
SOURCE_HIFI = "Mininet-HiFi, CoNEXT'12 (Handigol et al.)"

# DCTCP's parameters (sections 3.1, 3.4, 4.1): K at 1 Gbit/s, the EWMA gain.
PAPER_K = 20
PAPER_G = 1 / 16
# Mininet-HiFi's set-up: 100 Mbit/s links, a 425-packet buffer at the bottleneck, two
# senders, one `iperf -Z reno` flow each; RED marking at about K = 20 packets.
HIFI_RATE_MBPS = 100
HIFI_BUFFER_PACKETS = 425
HIFI_SENDERS = 2
# Its fidelity check: at 100 Mbit/s, 99.8% of inter-dequeue gaps within 10% of the ideal.
HIFI_GAPS_WITHIN_10PCT = 0.998


@dataclass(frozen=True)
class QueueStats:
    """A published queue's median, 5th and 95th percentiles and maximum, in packets."""

    label: str
    scheme: str  # "dctcp" or "tcp"
    median: float
    p5: float
    p95: float
    max: float
    note: str = ""


QUEUES: tuple[QueueStats, ...] = (
    QueueStats("Mininet-HiFi", "dctcp", 21, 18, 22, 25),
    QueueStats("hardware", "dctcp", 19.0, 17.1, 20.7, 36, "maximum at start-up"),
    QueueStats("Mininet-HiFi", "tcp", 355, 235, 418, 425),
    QueueStats("hardware", "tcp", 338, 226, 418, 427),
)
# Mininet-HiFi's DCTCP: 99.3% of samples in [16, 26]; its TCP: 99.8% at or above 200.
HIFI_DCTCP_IN_16_26 = 0.993
HIFI_TCP_AT_LEAST_200 = 0.998


def reference(label: str, scheme: str) -> QueueStats:
    for q in QUEUES:
        if q.label == label and q.scheme == scheme:
            return q
    raise KeyError(f"no published queue for {label} {scheme}")
