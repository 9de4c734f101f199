"""What the BBR paper published, as data: its sources, its figures' numbers in both
printings, their set-ups and the words the claims quote.

N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh, V. Jacobson, "BBR: Congestion-Based
Congestion Control", ACM Queue 14(5), Sep-Oct 2016; the same text in CACM 60(2), Feb 2017,
which numbers the figures differently (it turns the two pseudocode listings into figures).
This project uses the Queue numbers. Everything below is the paper's as the reproduction spec
quotes it (its section 0 says where each line was read); nothing here is measured.
"""
from __future__ import annotations

SOURCE = "Cardwell et al., BBR: Congestion-Based Congestion Control, ACM Queue 14(5), 2016"
SOURCE_SPEC = "the reproduction spec's derivation from the algorithm (tcp_bbr.c constants)"
SOURCE_BD20 = "Neal Cardwell on bbr-dev, on BBR v1's 20% loss limit"

# (what the figure shows, Queue number, CACM number); Figs 7 and 9 are production data.
FIGURES = (
    ("delivery rate and RTT against data in flight (conceptual)", 1, 1),
    ("700 ms of ProbeBW's gain cycling, 10 Mbit/s / 40 ms", 2, 4),
    ("bandwidth step 10 -> 20 -> 10 Mbit/s", 3, 5),
    ("startup, first second, BBR against CUBIC", 4, 6),
    ("RTT over the first 8 s, BBR against CUBIC", 5, 7),
    ("5 BBR flows converging, 100 Mbit/s / 10 ms", 6, 8),
    ("B4 WAN CDF (production, not reproducible here)", 7, 9),
    ("goodput against random loss, 100 Mbit/s / 100 ms", 8, 10),
    ("YouTube median RTT (production, not reproducible here)", 9, 11),
    ("median RTT against buffer size, 128 kbit/s / 40 ms, 8 flows", 10, 12),
)

# The set-ups as the paper gives them (what it leaves out is said so).
SETUP = {
    2: "one BBR flow, 10 Mbit/s, 40 ms; a 700 ms slice of steady state; buffer not given",
    3: "'a 10Mbps, 40ms flow of BtlBw abruptly doubling to 20Mbps after 20 seconds of steady "
       "operation ... then dropping to 10Mbps after another 20 seconds'; buffer not given",
    4: "'the first second of a 10Mbps, 40ms BBR flow'; CUBIC 'under identical conditions'; "
       "buffer not given",
    5: "the same path, the first 8 s",
    6: "5 BBR flows sharing a 100 Mbit/s / 10 ms bottleneck, starting at staggered times; "
       "buffer and offsets not given",
    8: "'BBR vs. CUBIC goodput for 60-second flows on a 100Mbps/100ms link with 0.001 to "
       "50% random loss'; buffer not given",
    10: "8 BBR or 8 CUBIC flows, 128 kbit/s / 40 ms, an emulated SGSN; buffers not given",
}

QUOTES = {
    "gain-cycle": "'ProbeBW cycles pacing_gain through 5/4, 3/4, 1, 1, 1, 1, 1, 1'; 'Each "
                  "phase normally lasts for the estimated RTprop'",
    "probe-bump": "the 5/4 phase raises RTT while the delivery rate stays constant",
    "drain-bump": "the 3/4 phase drains the queue that 5/4 created",
    "step-up": "'BBR converges to the new bottleneck rate exponentially fast'",
    "step-down": "'BtlBw will correct itself as soon as the last old measurement times out of "
                 "the filter'",
    "startup": "Startup 'discovers BtlBw in log2 BDP RTTs but creates up to 2BDP excess queue'",
    "drain": "Drain 'uses the inverse of Startup's gain to get rid of the excess queue, then "
             "to ProbeBW once the inflight drops to a BDP'; 'BBR completely drains its startup "
             "queue while CUBIC can't'",
    "cubic-fills": "CUBIC's inflight keeps growing 'until either the bottleneck buffer fills "
                   "and drops a packet or the receiver's inflight limit ... is reached'",
    "fig5-cubic": "'CUBIC (red) fills the available buffer, then cycles from 70% to 100% full "
                  "every few seconds'",
    "fig5-bbr": "'After startup, BBR (green) runs with essentially no queue'",
    "fig6-fair": "throughputs 'converge to a fair share'",
    "fig6-probertt": "'The downward facing triangular structures are connection ProbeRTT "
                     "states whose self-synchronization accelerates final convergence'",
    "fig8-cubic": "'CUBIC's throughput decreases by 10 times at 0.1% loss and totally stalls "
                  "above 1%'",
    "fig8-bbr": "'The maximum possible throughput is the link rate times fraction delivered "
                "(= 1 - lossRate). BBR meets this limit up to a 5% loss and is close up to 15%'",
    "fig10-bbr": "BBR keeps the queue near its minimum 'regardless of the bottleneck buffer "
                 "size and the number of active flows'",
    "fig10-cubic": "CUBIC always fills the buffer, so its delay grows linearly with buffer size",
}
