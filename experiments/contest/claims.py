"""The contest paper's (CCR'14) claims, one tuple per contest experiment, as data on
each experiment's rows; and the two checks only this paper needs (`Saturation`,
`OnFrontier`). Tolerances and their reasons were written before any run of ours was
compared with them; none is to be changed to make a claim pass.

- `BOARD_CLAIMS` (contest, the leaderboard): one row per finished baseline run
  (`scheme`, `trace`, `score`), plus one row per board for the omniscient protocol
  (scheme `omniscient`). Score is the contest's: ln(throughput) - ln(95th percentile
  end-to-end delay), so a difference of scores is the log of a ratio of
  throughput-over-delay. Every run, quick or full, plays the whole trace once, so
  the claims hold for both modes (a scheme the quick pass does not run says NOT RUN).
- `WARMUP_A_CLAIMS`: the reference tools' numbers and the sweep's shape. The numbers
  are mahimahi + sourdough (the contest's own tools) rerun on a VM of this kind:
  Verizon-LTE-short, 20 ms each way, infinite queue, the whole trace once (`--once`).
  They hold for the full run only: the quick pass plays the first 30 s, whose
  capacity differs (5.5 Mbit/s against 5.0 over the whole trace).
- `WARMUP_B_CLAIMS`, `WARMUP_C_CLAIMS`: the warm-ups ask which settings work best and
  give no numbers, so the claims are about each mechanism, not the paper.
- `REGION_CLAIMS` (the achievability region, one row per protocol) and
  `TRAIN_TEST_CLAIMS` (training against testing, one row per protocol with both
  sides' numbers).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from analysis.claims.checks import (EVERY_RUN, HIGHEST, EveryGroup, ExtremePerGroup, Monotone,
                                    NumberCheck, Pair, RankChanges, Slack)
from analysis.claims.measures import MEAN_OF_DIFFERENCES, ColumnMean, PerGroupComparison
from analysis.claims.model import (BOTH, FAIL, FULL, NOT_RUN, ORDERING, PASS, SHAPE, Check,
                                   Claim, OneOf, Outcome, Row, Tolerance, to_number, value_of,
                                   where)
from experiments.contest.frontier import RegionPoint, position
from experiments.contest.families import FIXED_WINDOW
from experiments.contest.warmup_a_reference import BDP_PACKETS


# --------------------------------------------------------------------- checks

@dataclass(frozen=True)
class Saturation(Check):
    """Every run whose window is at least `bdp_multiple` delay-bandwidth products
    reaches `at_least` of the capacity. The BDP is each run's own mean capacity
    (`capacity_mbps`) times `rtt_ms`, in packets of `packet_bytes`."""

    window: str
    utilization: str
    at_least: float
    bdp_multiple: float
    rtt_ms: float
    packet_bytes: int
    capacity: str = "capacity_mbps"
    kind: str = field(default=SHAPE, init=False)

    def bdp_packets(self, row: Row) -> float | None:
        capacity = to_number(row.get(self.capacity))
        if capacity is None:
            return None
        return capacity * 1e6 * self.rtt_ms / 1000.0 / (8 * self.packet_bytes)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        large = []
        for row in rows:
            window, bdp = to_number(row.get(self.window)), self.bdp_packets(row)
            if window is not None and bdp is not None and to_number(row.get(self.utilization)) \
                    is not None and window >= self.bdp_multiple * bdp:
                large.append(row)
        if not large:
            return Outcome(NOT_RUN, "-", (), f"no finished run with a window of "
                           f"{self.bdp_multiple:g} BDPs or more")
        low = [r for r in large if value_of(r, self.utilization) < self.at_least]
        worst = min(value_of(r, self.utilization) for r in large)
        ours = f"lowest {worst * 100:.1f}% over {len(large)} runs"
        why = "; ".join(f"{self.window}={r.get(self.window)}: "
                        f"{value_of(r, self.utilization) * 100:.1f}%" for r in low)
        return Outcome(FAIL if low else PASS, ours, tuple(large), why)

    def tolerance_text(self) -> str:
        return f"≥ {self.at_least * 100:g}% of capacity from {self.bdp_multiple:g} BDPs on"


@dataclass(frozen=True)
class OnFrontier(Check):
    """The row whose `name_column` is `subject` is a vertex of the population's frontier
    (experiments/contest/frontier.py: the upper-left convex hull of throughput against log
    delay), or its throughput falls short of the frontier's at its delay by at most
    `max_shortfall`."""

    subject: str
    max_shortfall: float
    name_column: str = "name"
    delay: str = "p95_e2e_delay_ms"
    throughput: str = "throughput_mbps"
    kind: str = field(default=ORDERING, init=False)

    def evaluate(self, rows: Sequence[Row]) -> Outcome:
        used = [r for r in rows if (d := to_number(r.get(self.delay))) is not None and d > 0
                and to_number(r.get(self.throughput)) is not None]
        points = [RegionPoint(str(r[self.name_column]), value_of(r, self.delay),
                              value_of(r, self.throughput)) for r in used]
        if not any(p.name == self.subject for p in points):
            return Outcome(NOT_RUN, "-", (), f"no finished run of {self.subject}")
        pos = position(points, self.subject)
        where = ("a vertex of the frontier" if pos.vertex else
                 f"{pos.shortfall * 100:.1f}% below the frontier"
                 + ("" if pos.efficient else ", dominated"))
        ours = f"{where} (population {len(points)})"
        ok = pos.vertex or pos.shortfall <= self.max_shortfall
        return Outcome(PASS if ok else FAIL, ours, tuple(used), "" if ok else ours)

    def tolerance_text(self) -> str:
        return (f"a vertex of the convex frontier, or at most {self.max_shortfall * 100:g}% "
                f"below the frontier's {self.throughput} at its {self.delay}")


# --------------------------------------------------------------------- the leaderboard

PAPER = "Protocol Design Contests (CCR'14), §3-4"
OMNISCIENT = "omniscient"
TRAINING = "Verizon-LTE-short"
WINNERS = (("dasjoshma", "das-joshma"), ("johnnybameesh", "johnnyb-ameesh"))

WINNER_TOLERANCE = Tolerance(
    absolute=0.2,
    reason="the paper: the two winners did 'slightly better than or about as well as' "
           "Sprout. Read as a band on the score difference (winner - Sprout) of -0.1 to "
           "+0.3, written as its middle 0.1 ± 0.2: 'about as well' admits a throughput/"
           "delay ratio 10% below Sprout's (ln 0.9 ≈ -0.1); 'slightly better' stops at 35% "
           "above it (ln 1.35 ≈ 0.3); more is clearly better, less clearly worse. One run "
           "per scheme on a 140 s trace, as the contest scored its training runs")


def _winner(scheme: str, team: str) -> Claim:
    return Claim(
        id=f"{scheme}-near-sprout", source=PAPER, mode=BOTH,
        text=f"On the training trace ({TRAINING}) the 2013 winner {team} scores at or "
             "slightly above Sprout (score difference, winner - Sprout)",
        paper="slightly better than or about as well as Sprout (read as 0.1 ± 0.2)",
        check=NumberCheck(PerGroupComparison("score", numerator=scheme, denominator="sprout",
                                             group_by=("trace",),
                                             aggregation=MEAN_OF_DIFFERENCES,
                                             where=where(trace=TRAINING)),
                          0.1, WINNER_TOLERANCE),
        reason=WINNER_TOLERANCE.reason)


BOARD_CLAIMS: tuple[Claim, ...] = (
    Claim(id="omniscient-tops-every-board", source=PAPER, mode=BOTH,
          text="On every board (trace) the omniscient protocol's score is at or above every "
               "baseline run's",
          paper="the omniscient protocol bounds every protocol (every delivery opportunity "
                "used, 20 ms per packet)",
          check=ExtremePerGroup(OMNISCIENT, "score", ("trace",), direction=HIGHEST,
                                against=EVERY_RUN),
          reason="strict: no protocol on the same trace can deliver more than every "
                 "opportunity or deliver a packet in less than the fixed 20 ms, so a run "
                 "scoring above it means the link, the scoring or the omniscient "
                 "computation is wrong"),
    *(_winner(scheme, team) for scheme, team in WINNERS),
)


# --------------------------------------------------------------------- warm-up A

WARMUP_A_SOURCE = ("contest reference tools (mahimahi + sourdough, --once) rerun on this kind "
                   "of machine")
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
            id=f"w{window}-throughput", source=WARMUP_A_SOURCE, paper=tput_text, mode=FULL,
            text=f"W={window}: average throughput",
            check=NumberCheck(ColumnMean("throughput_mbps", where(window=window), " Mbit/s"),
                              mbps, THROUGHPUT_TOLERANCE),
            reason=THROUGHPUT_TOLERANCE.reason))
        claims.append(Claim(
            id=f"w{window}-delay", source=WARMUP_A_SOURCE, paper=delay_text, mode=FULL,
            text=f"W={window}: 95th percentile signal delay",
            check=NumberCheck(ColumnMean("p95_signal_delay_ms", where(window=window), " ms"),
                              delay, DELAY_TOLERANCE),
            reason=DELAY_TOLERANCE.reason))
    return claims


WARMUP_A_CLAIMS: tuple[Claim, ...] = (
    *_numbers(),
    Claim(id="throughput-rises", mode=BOTH, source=WARMUP_A_SOURCE,
          text="Throughput rises with the window (a larger window never delivers less)",
          paper="0.23 → 5.02 Mbit/s, rising",
          check=Monotone("window", "throughput_mbps", Slack(relative=0.05)),
          reason="a fixed window's throughput is min(window / RTT, capacity); the only dips "
                 "are run-to-run timing noise, 1% in the reference reruns: 5% admits it"),
    Claim(id="delay-rises", mode=BOTH, source=WARMUP_A_SOURCE,
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
    Claim(id="saturation", mode=BOTH, source=WARMUP_A_SOURCE,
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


# --------------------------------------------------------------------- warm-ups B and C

WARMUP_B_SOURCE = "AIMD's mechanism (warm-up B poses the sweep without numbers)"
# Delay and throughput may rise by up to 10% over the lower neighbour as the factor rises.
RISE = Slack(relative=0.10, of_lower_value=True)

WARMUP_B_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="decrease-lowers-delay", mode=BOTH, source=WARMUP_B_SOURCE,
        text="At each timeout, a harder decrease (larger factor) gives no more p95 signal "
             "delay",
        paper="(none: the warm-up asks the student to find out)",
        reason="a larger factor leaves a smaller window after each signal, so fewer packets "
               "queue; neighbouring factors differ little and the per-ms p95 moves by a few "
               "percent with timer jitter on a shared machine: 10% admits that",
        check=Monotone("decrease", "p95_signal_delay_ms", RISE, min_points=2, falling=True,
                       group_by=("timeout_ms",))),
    Claim(
        id="decrease-lowers-throughput", mode=BOTH, source=WARMUP_B_SOURCE,
        text="At each timeout, a harder decrease gives no more throughput",
        paper="(none: the warm-up asks the student to find out)",
        reason="a smaller window after each signal delivers less while it grows back at 1 "
               "per RTT; 10% admits run-to-run noise",
        check=Monotone("decrease", "throughput_mbps", RISE, min_points=2, falling=True,
                       group_by=("timeout_ms",))),
)

WARMUP_C_CLAIMS: tuple[Claim, ...] = (
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


# --------------------------------------------------------------------- the region

REGION_SOURCE = "Sivaraman et al., Protocol Design Contests, CCR 2014 (Figures 7 and the text)"
PAPER_POPULATION = "about 3,000 student protocols"

REGION_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="sprout-on-frontier", mode=BOTH, source=REGION_SOURCE,
        text="Sprout (at its default, 95% confidence) lies on or near the achievability "
             "region's frontier: a vertex of it, or at most 5% below it",
        paper=f"near the frontier of {PAPER_POPULATION} ('Sprout is near the efficient "
              "frontier': the figure's caption in the first author's account, Winstein's "
              "2014 thesis)",
        reason="our population is sampled on a coarse grid of each family's parameters, so "
               "the frontier between two vertices is a chord, and a run's throughput moves "
               "by a few percent from run to run on a shared machine: 5% admits both, and "
               "still fails a protocol clearly inside the region. Wording: the paper says "
               "'near', and the text said 'lies on' while the check already allowed 5% "
               "below; the text now says what is checked (the check is unchanged)",
        check=OnFrontier("Sprout", 0.05)),
    *(Claim(
        id=f"{winner}-vs-sprout", mode=BOTH, source=REGION_SOURCE,
        text=f"The 2013 winner {winner} scores at least about as well as Sprout (at most "
             "0.10 below it) on the training trace",
        paper="two student protocols did slightly better than or about as well as Sprout",
        reason="the paper gives words, not numbers; 0.10 in ln(throughput/delay) is a 10% "
               "worse throughput-to-delay ratio, the most we would still call 'about as well' "
               "given a few percent of run-to-run noise in each of throughput and delay. "
               "Wording: the text said 'or slightly better', an upper bound this check does "
               "not test (the contest experiment's *-near-sprout claims test the band); the "
               "text now says what is checked (the check is unchanged)",
        # score[winner] >= score[Sprout] - 0.10 over the protocols' rows (one each)
        check=EveryGroup("score", ">=", "score", group_by=(), pair=Pair("name", winner, "Sprout"),
                         slack=-0.10))
      for winner in ("dasjoshma", "johnnybameesh")),
)


# --------------------------------------------------------------------- training, testing

TRAIN_TEST_SOURCE = "Sivaraman et al., Protocol Design Contests, CCR 2014 (Figure 8 and the text)"
TRAIN_TEST_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="ranking-disperses", mode=BOTH, source=TRAIN_TEST_SOURCE,
        text="The same protocols (each family's settings) do not keep their order by score "
             "from the training trace to a testing trace from another network and day",
        paper="'student protocols diverged in performance between the training and testing "
              "traces, indicating that some students had overtrained' (abstract)",
        reason="rho 1 is the same order on both traces; 0.95 allows a few neighbours to swap "
               "by noise and still says the order held, so only a real reshuffle passes. "
               "Wording: the text said 'protocols tuned on the training trace'; ours are "
               "parameter sweeps, not tuned on it (only the winners were), so the text now "
               "names them (the check is unchanged)",
        check=RankChanges("score", 0.95)),
)
