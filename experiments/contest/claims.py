"""The contest paper's (CCR'14) claims about its leaderboard, as data on the contest
experiment's rows: one per finished baseline run (`scheme`, `trace`, `score`), plus
one row per board for the omniscient protocol (scheme `omniscient`).

Score is the contest's: ln(throughput) - ln(95th percentile end-to-end delay), so a
difference of scores is the log of a ratio of throughput-over-delay. Every run,
quick or full, plays the whole trace once, so the claims hold for both modes (a
scheme the quick pass does not run says NOT RUN). Tolerances and their reasons were
written before any contest run was compared with them.
"""
from __future__ import annotations

from analysis.claims import (BOTH, Claim, HighestPerGroup, MeanOfDifferences, NumberCheck,
                             Tolerance, where)

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
        check=NumberCheck(MeanOfDifferences("score", numerator=scheme, denominator="sprout",
                                            group_by=("trace",), where=where(trace=TRAINING)),
                          0.1, WINNER_TOLERANCE),
        reason=WINNER_TOLERANCE.reason)


CLAIMS: tuple[Claim, ...] = (
    Claim(id="omniscient-tops-every-board", source=PAPER, mode=BOTH,
          text="On every board (trace) the omniscient protocol's score is at or above every "
               "baseline run's",
          paper="the omniscient protocol bounds every protocol (every delivery opportunity "
                "used, 20 ms per packet)",
          check=HighestPerGroup(OMNISCIENT, "score", ("trace",)),
          reason="strict: no protocol on the same trace can deliver more than every "
                 "opportunity or deliver a packet in less than the fixed 20 ms, so a run "
                 "scoring above it means the link, the scoring or the omniscient "
                 "computation is wrong"),
    *(_winner(scheme, team) for scheme, team in WINNERS),
)
