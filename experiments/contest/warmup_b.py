"""Contest warm-up B: AIMD (+1 datagram per RTT, window / decrease on an RTT above
100 ms or an idle timeout) over its decrease factor (2-6) and its timeout (100,
300, 1000 ms; quick: 2, 4, 6 x 100, 1000 ms over the first 30 s).

The assignment asks which settings work best; it gives no numbers, so the claims
are about the mechanism, not the paper.
"""
from __future__ import annotations

from analysis.claims import BOTH, Claim, Monotone, Slack
from experiments.contest.families import AIMD
from experiments.contest.sweep import ContestSweep

SOURCE = "AIMD's mechanism (warm-up B poses the sweep without numbers)"
# Delay and throughput may rise by up to 10% over the lower neighbour as the factor rises.
RISE = Slack(relative=0.10, of_lower_value=True)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="decrease-lowers-delay", mode=BOTH, source=SOURCE,
        text="At each timeout, a harder decrease (larger factor) gives no more p95 signal "
             "delay",
        paper="(none: the warm-up asks the student to find out)",
        reason="a larger factor leaves a smaller window after each signal, so fewer packets "
               "queue; neighbouring factors differ little and the per-ms p95 moves by a few "
               "percent with timer jitter on a shared machine: 10% admits that",
        check=Monotone("decrease", "p95_signal_delay_ms", RISE, min_points=2, falling=True,
                       group_by=("timeout_ms",))),
    Claim(
        id="decrease-lowers-throughput", mode=BOTH, source=SOURCE,
        text="At each timeout, a harder decrease gives no more throughput",
        paper="(none: the warm-up asks the student to find out)",
        reason="a smaller window after each signal delivers less while it grows back at 1 "
               "per RTT; 10% admits run-to-run noise",
        check=Monotone("decrease", "throughput_mbps", RISE, min_points=2, falling=True,
                       group_by=("timeout_ms",))),
)


class ContestWarmupB(ContestSweep):
    name = "contest-warmup-b"
    title = "Contest warm-up B: AIMD over its decrease factor and timeout"
    quick_note = "decrease 2, 4, 6 x timeout 100, 1000 ms, first 30 s"
    family = AIMD
    x, x_label = "decrease", "multiplicative decrease (window divided by)"
    lines, lines_label = "timeout_ms", "timeout (ms)"
    claims_data = CLAIMS
