"""The Sprout paper's (NSDI'13) published numbers, as data: Figure 7's points, the summary
table's averages and the confidence sweep.

Figure 7's points are the labels of the paper's own plot files (self-inflicted delay in ms,
throughput in kbit/s); the summary table is the paper's introduction, recomputed exactly from
those points (speed-up = mean over the 8 links of Sprout's throughput / X's; delay reduction =
the mean of X's self-inflicted delays / the mean of Sprout's). Cubic-CoDel has averages only.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperPoint:
    delay_ms: float
    throughput_kbps: float

    @property
    def throughput_mbps(self) -> float:
        return self.throughput_kbps / 1000.0


# (network trace base name, direction) -> scheme -> point. Verizon LTE is Verizon-LTE-driving.
FIGURE7: dict[tuple[str, str], dict[str, PaperPoint]] = {
    ("Verizon-LTE-driving", "downlink"): {
        "sprout": PaperPoint(73, 4741), "sprout-ewma": PaperPoint(208, 7413),
        "vegas": PaperPoint(215, 2773), "cubic": PaperPoint(7568, 5719)},
    ("Verizon-LTE-driving", "uplink"): {
        "sprout": PaperPoint(332, 3703), "sprout-ewma": PaperPoint(780, 4981),
        "vegas": PaperPoint(725, 2638), "cubic": PaperPoint(13059, 4362)},
    ("Verizon-EVDO-driving", "downlink"): {
        "sprout": PaperPoint(1287, 209), "sprout-ewma": PaperPoint(1608, 402),
        "vegas": PaperPoint(1771, 300), "cubic": PaperPoint(97631, 521)},
    ("Verizon-EVDO-driving", "uplink"): {
        "sprout": PaperPoint(199, 239), "sprout-ewma": PaperPoint(355, 628),
        "vegas": PaperPoint(994, 311), "cubic": PaperPoint(12379, 166)},
    ("ATT-LTE-driving", "downlink"): {
        "sprout": PaperPoint(52, 2304), "sprout-ewma": PaperPoint(161, 3822),
        "vegas": PaperPoint(197, 1025), "cubic": PaperPoint(5426, 1208)},
    ("ATT-LTE-driving", "uplink"): {
        "sprout": PaperPoint(127, 412), "sprout-ewma": PaperPoint(350, 862),
        "vegas": PaperPoint(374, 693), "cubic": PaperPoint(24262, 841)},
    ("TMobile-UMTS-driving", "downlink"): {
        "sprout": PaperPoint(331, 680), "sprout-ewma": PaperPoint(487, 1600),
        "vegas": PaperPoint(499, 762), "cubic": PaperPoint(8350, 668)},
    ("TMobile-UMTS-driving", "uplink"): {
        "sprout": PaperPoint(136, 370), "sprout-ewma": PaperPoint(252, 833),
        "vegas": PaperPoint(551, 693), "cubic": PaperPoint(32640, 971)},
}


@dataclass(frozen=True)
class PaperAverage:
    speedup: float          # mean over the 8 links of Sprout's throughput / X's
    delay_reduction: float  # mean of X's self-inflicted delays / mean of Sprout's
    mean_delay_s: float     # X's mean self-inflicted delay


SUMMARY: dict[str, PaperAverage] = {
    "sprout": PaperAverage(1.0, 1.0, 0.32),
    "vegas": PaperAverage(1.1, 2.1, 0.67),
    "cubic": PaperAverage(0.91, 79.0, 25.0),
    "cubic-codel": PaperAverage(0.70, 1.6, 0.50),
}

# The confidence sweep on the T-Mobile 3G uplink: the paper's confidence -> point.
# (The plot file labels the 25% point "75%", a typo: it is the fourth of five.)
RISK_TRACE = ("TMobile-UMTS-driving", "uplink")
RISK: dict[float, PaperPoint] = {
    0.95: PaperPoint(136, 370), 0.75: PaperPoint(300, 755), 0.50: PaperPoint(458, 857),
    0.25: PaperPoint(587, 883), 0.05: PaperPoint(999, 888),
}
