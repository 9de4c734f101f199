"""Contest warm-up A's claims: the reference tools' numbers and the sweep's shape.

The numbers are mahimahi + sourdough (the contest's own tools) rerun on a VM of
this kind: Verizon-LTE-short, 20 ms each way, infinite queue, the whole trace
once (`--once`). They hold for the full run only: the quick pass plays the
first 30 s, whose capacity differs (5.5 Mbit/s against 5.0 over the whole trace).
Tolerances and their reasons were written before any run of ours was compared.
"""
from __future__ import annotations

from analysis.claims import (BOTH, FULL, Claim, ColumnMean, Monotone, NumberCheck, Saturation,
                             Slack, Tolerance, where)

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
          text="The 95th percentile signal delay rises with the window",
          paper="110 → 1052 ms, rising",
          check=Monotone("window", "p95_signal_delay_ms",
                         Slack(relative=0.05, absolute=5.0, unit=" ms")),
          reason="a larger window keeps more packets queued; below the delay-bandwidth "
                 "product the delay sits at the trace's own floor (110 ms for W=1 and W=5), "
                 "so equal neighbours are expected: 5% or 5 ms admits timing noise"),
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
