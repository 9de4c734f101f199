"""Warm-up A at small windows on mahimahi, the contest's own emulator: the reference that
sets the shape of warm-up A's `delay-rises` claim (experiments/contest/claims.py).

Measured with mahimahi (ravinet/mahimahi ae477d4, built from source) and this project's
`grump-sender` (native/grump: the datagrump wire protocol, the `fixed-window` controller
with its 1000 ms timeout, as sourdough's warm-up sender), the contest's set-up: data
over Verizon-LTE-short.down then 20 ms, ACKs over 20 ms then .up, infinite queues, the
whole 140 s trace once. Per run, in a private network namespace, as a non-root user with
mahimahi's binaries setuid root, the receiver outside the shells:

    grump-receiver --port P &
    mm-delay 20 mm-link Verizon-LTE-short.down Verizon-LTE-short.up --once \\
        --uplink-log=uplink.log -- \\
        sh -c 'grump-sender --host $MAHIMAHI_BASE --port P \\
               --controller fixed-window --window W --duration-s 145'
    mm-throughput-graph 500 uplink.log

(mahimahi requires net.ipv4.ip_forward=1 where its shells run; the build used here
turns it on in its own namespaces instead of asking for it machine-wide, the only
change to its source.) Two trials per window, one after the other, on a shared 2-core
VM (load average 5-30 from other work). The numbers are mm-throughput-graph's
"Average throughput" and "95th percentile signal delay"; this project's own metrics
(analysis/metrics.py) give the same on the same logs. At W=10 and W=20 the same set-up
gives the earlier reference reruns' values (claims.REFERENCE; CROSS_CHECK).

What they show: below the path's bandwidth-delay product the p95 signal delay is not
monotone in the window. It falls from W=1 to W=3 in both trials (109 to 102 ms on
average), because the signal delay counts the sender's idle time between sends, which
shrinks as W grows, then rises as transient queues grow (115 ms at W=6, 155 at W=10).
Only once the window fills the path does a standing queue make it rise with every
window.
"""
from __future__ import annotations

# The trace's mean capacity over its 140 s (mm-throughput-graph's "Average capacity").
CAPACITY_MBPS = 5.04
MIN_RTT_MS = 40.0  # 20 ms each way
PACKET_BYTES = 1504  # mahimahi's delivery opportunity
# The path's bandwidth-delay product in packets: 16.8.
BDP_PACKETS = CAPACITY_MBPS * 1e6 * MIN_RTT_MS / 1000.0 / (8 * PACKET_BYTES)

# window -> one (throughput Mbit/s, p95 signal delay ms) per trial.
SMALL_WINDOWS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.23, 108.0), (0.22, 110.0)),
    2: ((0.44, 106.0), (0.44, 104.0)),
    3: ((0.66, 102.0), (0.65, 102.0)),
    4: ((0.86, 106.0), (0.87, 105.0)),
    5: ((1.03, 113.0), (1.07, 109.0)),
    6: ((1.26, 116.0), (1.26, 114.0)),
}

# window -> (throughput, p95 signal delay) from this set-up, one trial each, beside the
# earlier reference reruns (1.965 Mbit/s / 154.5 ms and 3.31 / 278).
CROSS_CHECK: dict[int, tuple[float, float]] = {10: (1.96, 155.0), 20: (3.20, 277.0)}
