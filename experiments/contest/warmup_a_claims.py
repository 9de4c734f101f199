"""Contest warm-up A's claims: the reference tools' numbers and the sweep's shape.

The numbers are mahimahi + sourdough (the contest's own tools) rerun on a VM of
this kind: Verizon-LTE-short, 20 ms each way, infinite queue, the whole trace
once (`--once`). They hold for the full run only: the quick pass plays the
first 30 s, whose capacity differs (5.5 Mbit/s against 5.0 over the whole trace).
Tolerances and their reasons were written before any run of ours was compared.
"""
from __future__ import annotations

from analysis.claims import (BOTH, FULL, Claim, ColumnMean, Monotone, NumberCheck, OneOf,
                             Saturation, Slack, Tolerance, where)
from experiments.contest.families import FIXED_WINDOW
from experiments.contest.warmup_a_reference import BDP_PACKETS

SOURCE = ("contest reference tools (mahimahi + sourdough, --once) rerun on this kind of "
          "machine")
THROUGHPUT_TOLERANCE = Tolerance(
    relative=0.10,
    reason="the reference reruns agreed within 1% (W=10: 1.96-1.97 Mbit/s); our link has "
           "the same mm-link semantics, the sender and its timers are ours (sourdough's "
           "datagrump has 1-ms timers): 10% admits timing differences, not a different link")
DELAY_TOLERANCE = Tolerance(
    relative=0.15, absolute=10.0,
    reason="the p95 signal delay is an order statistic over per-ms values, sensitive to when "
           "each window refills (reference reruns: 604-609 ms at W=50); 15% or 10 ms, the "
           "wider, admits sender timing differences of a few ms per round trip")

# window -> (throughput Mbit/s, p95 signal delay ms) the reference tools gave; a range
# becomes its middle.
REFERENCE = {1: (0.23, 110.0), 5: (1.06, 110.0), 10: (1.965, 154.5), 20: (3.31, 278.0),
             50: (4.79, 606.5), 100: (5.02, 1052.0)}
PAPER_TEXT = {1: ("0.23 Mbit/s", "110 ms"), 5: ("1.06 Mbit/s", "110 ms"),
              10: ("1.96-1.97 Mbit/s", "154-155 ms"), 20: ("3.31 Mbit/s", "278 ms"),
              50: ("4.79 Mbit/s", "604-609 ms"), 100: ("5.02 Mbit/s", "1052 ms")}


# The windows that fill the path (at least its bandwidth-delay product, 16.8 packets at the
# trace's mean capacity; 18.3 over the quick pass's first 30 s): 20 and up in either mode.
FILLING_WINDOWS = tuple(sorted({p["window"] for p in (*FIXED_WINDOW.full, *FIXED_WINDOW.quick)
                                if p["window"] >= BDP_PACKETS}))


def _numbers() -> list[Claim]:
    claims = []
    for window, (mbps, delay) in REFERENCE.items():
        tput_text, delay_text = PAPER_TEXT[window]
        claims.append(Claim(
            id=f"w{window}-throughput", source=SOURCE, paper=tput_text, mode=FULL,
            text=f"W={window}: average throughput",
            check=NumberCheck(ColumnMean("throughput_mbps", where(window=window), " Mbit/s"),
                              mbps, THROUGHPUT_TOLERANCE),
            reason=THROUGHPUT_TOLERANCE.reason))
        claims.append(Claim(
            id=f"w{window}-delay", source=SOURCE, paper=delay_text, mode=FULL,
            text=f"W={window}: 95th percentile signal delay",
            check=NumberCheck(ColumnMean("p95_signal_delay_ms", where(window=window), " ms"),
                              delay, DELAY_TOLERANCE),
            reason=DELAY_TOLERANCE.reason))
    return claims


CLAIMS: tuple[Claim, ...] = (
    *_numbers(),
    Claim(id="throughput-rises", mode=BOTH, source=SOURCE,
          text="Throughput rises with the window (a larger window never delivers less)",
          paper="0.23 → 5.02 Mbit/s, rising",
          check=Monotone("window", "throughput_mbps", Slack(relative=0.05)),
          reason="a fixed window's throughput is min(window / RTT, capacity); the only dips "
                 "are run-to-run timing noise, 1% in the reference reruns: 5% admits it"),
    Claim(id="delay-rises", mode=BOTH, source=SOURCE,
          text="From the window that fills the path (its delay-bandwidth product, 17 "
               "packets) on, the 95th percentile signal delay rises with the window",
          paper="278 → 1052 ms from W=20 to W=100, rising; below the delay-bandwidth "
                "product not monotone (mahimahi, W=1..6: 109, 105, 102, 105.5, 111, 115 ms)",
          check=Monotone("window", "p95_signal_delay_ms",
                         Slack(relative=0.05, absolute=5.0, unit=" ms"),
                         where=where(window=OneOf(FILLING_WINDOWS))),
          reason="from the delay-bandwidth product on, a larger window keeps a larger "
                 "standing queue: 5% or 5 ms admits timing noise. The claim used to run from "
                 "W=1, taking the delay below the product as a flat floor; the reference "
                 "(mahimahi rerun at W=1..6, experiments/contest/warmup_a_reference.py) "
                 "shows it is not: it falls from W=1 to W=3 in both trials (109 to 102 ms: "
                 "the signal delay counts the sender's idle time, which shrinks as W grows), "
                 "then rises. So the claim starts where the reference rises for a reason "
                 "that holds at every window; the slack is unchanged, and W=1 and W=5 keep "
                 "their number claims"),
    Claim(id="saturation", mode=BOTH, source=SOURCE,
          text="Throughput reaches capacity once the window well exceeds the path's "
               "delay-bandwidth product: ≥ 90% of capacity for every window of 3 BDPs or more "
               "(BDP = the run's mean capacity × 40 ms)",
          paper="W=50 (≈3 BDPs): 4.79 of 5.04 Mbit/s (95%); W=100: 5.02 (99.6%)",
          check=Saturation("window", "utilization", at_least=0.90, bdp_multiple=3.0,
                           rtt_ms=40.0, packet_bytes=1504),
          reason="the cellular rate varies: over 100-ms bins its 95th percentile is 2.4 times "
                 "the mean on this trace, so filling the link needs a window of a few mean "
                 "BDPs (the reference tools: 95% at 3 BDPs); 90% leaves room for outages the "
                 "window cannot bridge"),
)
