"""Contest warm-up B: AIMD (+1 datagram per RTT, window / decrease on an RTT above
100 ms or an idle timeout) over its decrease factor (2-6) and its timeout (100,
300, 1000 ms; quick: 2, 4, 6 x 100, 1000 ms over the first 30 s).

The assignment asks which settings work best; it gives no numbers, so the claims
are about the mechanism, not the paper.
"""
from __future__ import annotations

from experiments.contest.claims import WARMUP_B_CLAIMS
from experiments.contest.families import AIMD
from experiments.contest.sweep import ContestSweep


class ContestWarmupB(ContestSweep):
    name = "contest-warmup-b"
    title = "Contest warm-up B: AIMD over its decrease factor and timeout"
    quick_note = "decrease 2, 4, 6 x timeout 100, 1000 ms, first 30 s"
    family = AIMD
    x, x_label = "decrease", "multiplicative decrease (window divided by)"
    lines, lines_label = "timeout_ms", "timeout (ms)"
    claims = WARMUP_B_CLAIMS
