"""Contest warm-up C: the delay trigger (grow by 1 per RTT while the RTT is below
one threshold, shrink by 0.5 per ACK above another) over (grow below, shrink
above) pairs from 40 to 200 ms (full: 40, 60, 80, 100, 120, 150, 200 with low <=
high, 28 pairs; quick: 40, 100, 200, 6 pairs over the first 30 s).

The assignment gives no numbers; the claim is about the mechanism.
"""
from __future__ import annotations

from analysis.claims import BOTH, Claim, Monotone, Slack
from experiments.contest.families import DELAY_TRIGGER
from experiments.contest.sweep import ContestSweep

CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="shrink-threshold-sets-delay", mode=BOTH,
        source="the delay trigger's mechanism (warm-up C poses the sweep without numbers)",
        text="At each grow-below threshold, a higher shrink-above threshold gives no less "
             "p95 end-to-end delay",
        paper="(none: the warm-up asks the student to find out)",
        reason="the window shrinks only once the RTT passes the upper threshold, so the "
               "queue it keeps grows with that threshold; outages dominate the p95 when "
               "thresholds are close, and timer jitter moves it a few percent: 10%",
        check=Monotone("high_rtt_ms", "p95_e2e_delay_ms", Slack(relative=0.10), min_points=2,
                       group_by=("low_rtt_ms",))),
)


class ContestWarmupC(ContestSweep):
    name = "contest-warmup-c"
    title = "Contest warm-up C: the delay trigger over its RTT thresholds"
    quick_note = "thresholds 40, 100, 200 ms (low <= high), first 30 s"
    family = DELAY_TRIGGER
    x, x_label = "high_rtt_ms", "shrink above (ms)"
    lines, lines_label = "low_rtt_ms", "grow below (ms)"
    claims_data = CLAIMS
