"""Contest warm-up C: the delay trigger (grow by 1 per RTT while the RTT is below
one threshold, shrink by 0.5 per ACK above another) over (grow below, shrink
above) pairs from 40 to 200 ms (full: 40, 60, 80, 100, 120, 150, 200 with low <=
high, 28 pairs; quick: 40, 100, 200, 6 pairs over the first 30 s).

The assignment gives no numbers; the claim is about the mechanism.
"""
from __future__ import annotations

from experiments.contest.claims import WARMUP_C_CLAIMS
from experiments.contest.families import DELAY_TRIGGER
from experiments.contest.sweep import ContestSweep


class ContestWarmupC(ContestSweep):
    name = "contest-warmup-c"
    title = "Contest warm-up C: the delay trigger over its RTT thresholds"
    quick_note = "thresholds 40, 100, 200 ms (low <= high), first 30 s"
    family = DELAY_TRIGGER
    x, x_label = "high_rtt_ms", "shrink above (ms)"
    lines, lines_label = "low_rtt_ms", "grow below (ms)"
    claims = WARMUP_C_CLAIMS
