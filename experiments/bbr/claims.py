"""The BBR paper's claims as data, on the `bbr` experiment's rows (rows.py, derive.py).

Every threshold and tolerance below is the reproduction spec's (its section A.1 "Checks",
with the reasons it gives), fixed before any run of this experiment was looked at; none is
to be changed to make a claim pass. A claim that fails is a finding: docs/bbr.md shows its
cause with a measurement. A run that did not measure the path (Bbr.invalid_reason) is in no
claim. A value that was never reached within the run (BBR never leaving Startup, a rate never
reached) is the time left in the run, a lower bound that fails its claim, not a missing value.

What the spec reports but does not judge (Fig 6's standing queue, Fig 8's goodput at 50% loss
against 1%) is in docs/bbr.md, not here.
"""
from __future__ import annotations

from analysis.claims.checks import EveryGroup, Pair
from analysis.claims.model import BOTH, FULL, Claim, OneOf, where
from experiments.bbr.paper import QUOTES, SOURCE, SOURCE_SPEC
from experiments.bbr.rows import FIG5
from experiments.bbr.studies import CONVERGENCE, LOSS, STARTUP, STEP

EACH_RUN = ("run",)
EACH_LOSS = ("loss",)
BBR_STARTUP = where(study=STARTUP, scheme="bbr")
CUBIC_STARTUP = where(study=STARTUP, scheme="cubic")
UP_TO_1PCT = OneOf((0.00001, 0.0001, 0.001, 0.01))
ONE_PCT_AND_UP = OneOf((0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5))
ONE_TO_15PCT = OneOf((0.01, 0.02, 0.05, 0.1, 0.15))


def bbr_loss(loss: object) -> tuple[tuple[str, object], ...]:
    return where(study=LOSS, scheme="bbr", loss=loss)


GAIN_CYCLE: tuple[Claim, ...] = (
    Claim(id="fig2-cycle-period", source=SOURCE, mode=BOTH,
          text="ProbeBW's gain cycle (5/4, 3/4, then six phases of 1) lasts 8 RTprop: 320 ms "
               "at 40 ms (median over the steady state)",
          paper=QUOTES["gain-cycle"],
          check=EveryGroup("cycle_period_ms", "~", 320.0, EACH_RUN, where=BBR_STARTUP,
                           slack=64.0),
          reason="±20%: Linux ends a phase early or late on inflight and loss "
                 "(bbr_is_next_cycle_phase); the phases are seen to one 10-ms sample"),
    Claim(id="fig2-probe-bump", source=SOURCE, mode=BOTH,
          text="Each 5/4 phase raises the RTT by about 0.25 RTprop (10 ms): 4-20 ms above the "
               "lowest RTT (median over the cycles)",
          paper=QUOTES["probe-bump"],
          check=EveryGroup("probe_bump_ms", "~", 12.0, EACH_RUN, where=BBR_STARTUP, slack=8.0),
          reason="4-20 ms around 10: one packet is 1.2 ms at 10 Mbit/s, and ACK timing adds "
                 "noise"),
    Claim(id="fig2-drain-phase", source=SOURCE, mode=BOTH,
          text="The 3/4 phase drains what the 5/4 phase queued: the queue is down to 2 "
               "packets by its end in at least 80% of the cycles",
          paper=QUOTES["drain-bump"],
          check=EveryGroup("drained_share", ">=", 0.8, EACH_RUN, where=BBR_STARTUP),
          reason="the spec's 80% and 2 packets: a phase can end a packet early"),
    Claim(id="fig2-delivery-steady", source=SOURCE, mode=BOTH,
          text="Through the cycle the link's delivery rate stays within ±5% of 10 Mbit/s "
               "(every 100-ms bin but ProbeRTT's)",
          paper=QUOTES["probe-bump"],
          check=EveryGroup("delivery_within_5pct_share", ">=", 1.0, EACH_RUN,
                           where=BBR_STARTUP),
          reason="±5% of the rate: a 100-ms bin holds 8.3 packets, so one packet more or less "
                 "is 12%; the spec's bound is for a link that never idles"),
)

STEP_CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig3-up-step", source=SOURCE_SPEC, mode=BOTH,
          text="When the rate doubles to 20 Mbit/s, the link's delivery reaches and holds 18 "
               "Mbit/s (90%) within 2 s",
          paper=QUOTES["step-up"],
          check=EveryGroup("up_step_s", "<=", 2.0, EACH_RUN, where=where(study=STEP)),
          reason="x1.25 per 8-RTT cycle gives ceil(log 2 / log 1.25) = 4 cycles, 1.3 s; 2 s "
                 "leaves a cycle and a half"),
    Claim(id="fig3-down-step", source=SOURCE_SPEC, mode=BOTH,
          text="When the rate halves back to 10 Mbit/s, the RTT comes back to 1.25 RTprop "
               "(50 ms) within 4 s",
          paper=QUOTES["step-down"],
          check=EveryGroup("down_step_s", "<=", 4.0, EACH_RUN, where=where(study=STEP)),
          reason="the bw filter covers 10 rounds (bbr_bw_rtts = CYCLE_LEN + 2), and rounds "
                 "stretch to about 160 ms while the queue is full"),
    Claim(id="fig3-no-loss", source=SOURCE_SPEC, mode=BOTH,
          text="No packet is dropped at either step (200-packet buffer)",
          paper="the max filter absorbs the down-step; the up-step only adds capacity",
          check=EveryGroup("step_drops", "<=", 0.0, EACH_RUN, where=where(study=STEP)),
          reason="after the drop, cwnd = 2 BDP at 20 Mbit/s (133 packets) fits the buffer"),
    Claim(id="fig3-uses-new-rate", source=SOURCE_SPEC, mode=BOTH,
          text="From 5 s after the up-step to the down-step, the link delivers at least 19 "
               "Mbit/s on average",
          paper=QUOTES["step-up"],
          check=EveryGroup("mean_after_up_mbps", ">=", 19.0, EACH_RUN, where=where(study=STEP)),
          reason="95%: ProbeRTT (200 ms and a round trip every 10 s) costs about 2%"),
    Claim(id="fig3-uses-old-rate", source=SOURCE_SPEC, mode=BOTH,
          text="From 5 s after the down-step on, the link delivers at least 9.5 Mbit/s on "
               "average",
          paper=QUOTES["step-down"],
          check=EveryGroup("mean_after_down_mbps", ">=", 9.5, EACH_RUN,
                           where=where(study=STEP)),
          reason="as fig3-uses-new-rate"),
)

STARTUP_CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig4-startup-exit", source=SOURCE_SPEC, mode=BOTH,
          text="BBR leaves Startup and Drain (first in ProbeBW) within 0.5 s of its SYN",
          paper=QUOTES["startup"],
          check=EveryGroup("startup_exit_s", "<=", 0.5, EACH_RUN, where=BBR_STARTUP),
          reason="IW10 to 33 packets is 2 doublings, 3 rounds without 25% growth "
                 "(bbr_full_bw_cnt), 1 round of Drain: about 7 RTT, 0.3 s"),
    Claim(id="fig4-startup-queue", source=SOURCE, mode=BOTH,
          text="Startup's queue peaks at no more than 2.5 BDP (83 packets)",
          paper=QUOTES["startup"],
          check=EveryGroup("startup_peak_queue_bdp", "<=", 2.5, EACH_RUN, where=BBR_STARTUP),
          reason="the paper's 2 BDP; Linux's startup cwnd_gain of 2.885 allows about 1.9 BDP "
                 "of excess; 0.5 BDP of tolerance"),
    Claim(id="fig4-bbr-drained", source=SOURCE, mode=BOTH,
          text="At 1 s BBR's queue is at most 0.25 BDP (8 packets)",
          paper=QUOTES["drain"],
          check=EveryGroup("queue_at_1s_bdp", "<=", 0.25, EACH_RUN, where=BBR_STARTUP),
          reason="a 5/4 probe may be under way: its queue is 0.25 BDP"),
    Claim(id="fig4-cubic-fills", source=SOURCE, mode=BOTH,
          text="At 1 s CUBIC's queue is at least 1 BDP (buffer 4.5 BDP)",
          paper=QUOTES["cubic-fills"],
          check=EveryGroup("queue_at_1s_bdp", ">=", 1.0, EACH_RUN, where=CUBIC_STARTUP),
          reason="the spec's 1 BDP when the buffer is at least 2 BDP; HyStart may end slow "
                 "start early on Linux 6.x"),
    Claim(id="fig4-cubic-rising", source=SOURCE, mode=BOTH,
          text="At 1 s CUBIC's queue is still rising (its slope over 0.8-1.0 s above 0)",
          paper=QUOTES["cubic-fills"],
          check=EveryGroup("queue_slope_at_1s", ">", 0.0, EACH_RUN, where=CUBIC_STARTUP),
          reason="the sign only: CUBIC's window grows until the buffer drops a packet"),
    Claim(id="fig5-cubic-cycles", source=SOURCE, mode=BOTH,
          text="From 2 to 8 s CUBIC keeps the buffer 60-100% full at least 80% of the time",
          paper=QUOTES["fig5-cubic"],
          check=EveryGroup("queue_in_band_share", ">=", 0.8, EACH_RUN, where=CUBIC_STARTUP),
          reason="CUBIC's beta = 0.7: after a loss the queue falls to about 0.7 B - 0.3 BDP, "
                 "60% of B here"),
    Claim(id="fig5-cubic-drops", source=SOURCE, mode=BOTH,
          text="From 2 to 8 s CUBIC fills the buffer until it drops (at least one drop)",
          paper=QUOTES["fig5-cubic"],
          check=EveryGroup("window_drops", ">=", 1.0, EACH_RUN, where=CUBIC_STARTUP),
          reason="one drop is the least a filled buffer shows"),
    Claim(id="fig5-bbr-no-queue", source=SOURCE, mode=BOTH,
          text="From 1 to 8 s BBR's median queueing delay is at most 0.1 RTprop (4 ms)",
          paper=QUOTES["fig5-bbr"],
          check=EveryGroup("queue_delay_median_ms", "<=", 4.0, EACH_RUN, where=BBR_STARTUP),
          reason="'essentially no queue': a tenth of the round trip, 3 packets"),
    Claim(id="fig5-bbr-probe-bumps", source=SOURCE, mode=BOTH,
          text="From 1 to 8 s BBR's 95th-percentile queueing delay is at most 0.5 RTprop "
               "(20 ms)",
          paper=QUOTES["fig5-bbr"],
          check=EveryGroup("queue_delay_p95_ms", "<=", 20.0, EACH_RUN, where=BBR_STARTUP),
          reason="the 95th percentile allows the 5/4 probes' bumps"),
    Claim(id="fig5-rtt-ratio", source=SOURCE, mode=BOTH,
          text="From 2 to 8 s CUBIC's median RTT is at least 3 times BBR's",
          paper=f"{QUOTES['fig5-cubic']}; {QUOTES['fig5-bbr']}",
          check=EveryGroup("rtt_ratio", ">=", 3.0, ("trial",), where=where(study=FIG5)),
          reason="with a buffer of 4.5 BDP, CUBIC's RTT is several RTprop; 3 is the spec's "
                 "floor for B >= 4 BDP"),
)

CONVERGENCE_CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig6-aggregate", source=SOURCE_SPEC, mode=FULL,
          text="Once all five flows run, together they fill at least 90% of the link "
               "(ProbeRTT's 1-s bins left out)",
          paper=QUOTES["fig6-fair"],
          check=EveryGroup("aggregate_share", ">=", 0.9, EACH_RUN,
                           where=where(study=CONVERGENCE)),
          reason="10% for the sharing flows' probing and the emulator's packet granularity"),
    Claim(id="fig6-fair-share", source=SOURCE, mode=FULL,
          text="From 10 s after the last flow starts, Jain's index over 1-s bins has a median "
               "of at least 0.90",
          paper=QUOTES["fig6-fair"],
          check=EveryGroup("jain_after_10s_median", ">=", 0.9, EACH_RUN,
                           where=where(study=CONVERGENCE)),
          reason="looser than the paper: Jaeger et al. report BBR flows alone 'have "
                 "difficulty to reach a fairness equilibrium'"),
    Claim(id="fig6-fair-late", source=SOURCE, mode=FULL,
          text="Over the last 20 s Jain's index averages at least 0.95",
          paper=QUOTES["fig6-fair"],
          check=EveryGroup("jain_last_20s_mean", ">=", 0.95, EACH_RUN,
                           where=where(study=CONVERGENCE)),
          reason="as fig6-fair-share"),
    Claim(id="fig6-probertt-sync", source=SOURCE, mode=FULL,
          text="After their first joint ProbeRTT, the flows enter ProbeRTT together (all five "
               "within 200 ms) every time",
          paper=QUOTES["fig6-probertt"],
          check=EveryGroup("probe_rtt_unjoint_after_first", "<=", 0.0, EACH_RUN,
                           where=where(study=CONVERGENCE)),
          reason="200 ms is ProbeRTT's own length; entries are seen to one 20-ms sample"),
    Claim(id="fig6-probertt-period", source=SOURCE_SPEC, mode=FULL,
          text="The joint ProbeRTTs come every 10 s ± 1 s",
          paper=QUOTES["fig6-probertt"],
          check=EveryGroup("probe_rtt_interval_dev_s", "<=", 1.0, EACH_RUN,
                           where=where(study=CONVERGENCE)),
          reason="bbr_min_rtt_win_sec = 10, plus 200 ms and a round trip in ProbeRTT"),
)

LOSS_CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig8-cubic-cliff", source=SOURCE, mode=BOTH,
          text="CUBIC's goodput at 0.1% loss is at most 0.15 of its goodput at 0.001%",
          paper=QUOTES["fig8-cubic"],
          check=EveryGroup("goodput_mbps", "<=", "goodput_mbps", (),
                           where=where(study=LOSS, scheme="cubic"),
                           pair=Pair("loss", 0.001, 0.00001), scale=0.15),
          reason="the paper's ÷10, [R1] measured ÷16.7; Mathis gives 4.5 Mbit/s at 0.1%"),
    Claim(id="fig8-cubic-stalls", source=SOURCE, mode=BOTH,
          text="CUBIC's goodput is at most 2 Mbit/s at every loss of 1% and more",
          paper=QUOTES["fig8-cubic"],
          check=EveryGroup("goodput_mbps", "<=", 2.0, EACH_LOSS,
                           where=where(study=LOSS, scheme="cubic", loss=ONE_PCT_AND_UP)),
          reason="'totally stalls': 2% of the link"),
    Claim(id="fig8-bbr-at-limit", source=SOURCE, mode=BOTH,
          text="BBR's goodput is at least 0.90 x (1 - p) x C at every loss up to 1%",
          paper=QUOTES["fig8-bbr"],
          check=EveryGroup("goodput_mbps", ">=", "model_mbps", EACH_LOSS,
                           where=bbr_loss(UP_TO_1PCT), scale=0.9),
          reason="the slack covers ProbeRTT (about 2%), the 1% pacing margin and the TCP/IP "
                 "headers (3.7% of a full packet)"),
    Claim(id="fig8-bbr-near-limit", source=SOURCE, mode=BOTH,
          text="BBR's goodput is at least 0.85 x (1 - p) x C at 2% and 5% loss",
          paper=QUOTES["fig8-bbr"],
          check=EveryGroup("goodput_mbps", ">=", "model_mbps", EACH_LOSS,
                           where=bbr_loss(OneOf((0.02, 0.05))), scale=0.85),
          reason="as fig8-bbr-at-limit, with recovery's cost growing with the loss"),
    Claim(id="fig8-bbr-close-at-15pct", source=SOURCE, mode=FULL,
          text="BBR's goodput is at least 0.70 x (1 - p) x C at 15% loss",
          paper=QUOTES["fig8-bbr"],
          check=EveryGroup("goodput_mbps", ">=", "model_mbps", EACH_LOSS,
                           where=bbr_loss(0.15), scale=0.7),
          reason="'close up to 15%'; BBR v1's tolerance is 1.25 (1 - p) >= 1, p <= 20%"),
    Claim(id="fig8-bbr-over-cubic", source=SOURCE, mode=BOTH,
          text="BBR's goodput is at least 10 times CUBIC's at every loss from 1% to 15%",
          paper=f"{QUOTES['fig8-bbr']}; {QUOTES['fig8-cubic']}",
          check=EveryGroup("goodput_mbps", ">=", "goodput_mbps", EACH_LOSS,
                           where=where(study=LOSS, loss=ONE_TO_15PCT),
                           pair=Pair("scheme", "bbr", "cubic"), scale=10.0),
          reason="an order of magnitude: CUBIC stalls where BBR is near the limit"),
)

CLAIMS: tuple[Claim, ...] = GAIN_CYCLE + STEP_CLAIMS + STARTUP_CLAIMS + CONVERGENCE_CLAIMS + \
    LOSS_CLAIMS
