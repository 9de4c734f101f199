"""Claims say what their paper says: its rivals, its averaging, its words. Hand-made rows,
each built so that the claim's earlier shape would give another verdict."""
from __future__ import annotations

import pytest

from analysis.claims.checks import Monotone, Slack
from analysis.claims.measures import MEAN_OF_RATIOS, PerGroupComparison
from analysis.claims.model import BOTH, FAIL, FULL, NOT_RUN, PASS, Claim, evaluate_all
from experiments.contest.claims import FILLING_WINDOWS, REFERENCE
from experiments.contest.claims import REGION_CLAIMS, TRAIN_TEST_CLAIMS, WARMUP_A_CLAIMS
from experiments.contest.warmup_a_reference import BDP_PACKETS, SMALL_WINDOWS
from experiments.prr.claims import CLAIMS as PRR_CLAIMS
from experiments.sprout import paper
from experiments.sprout.all_links import AllLinks
from experiments.sprout.claims import FIG7_CLAIMS, OURS

LINK = ("trace", "direction")


def _rows(points: dict[tuple[str, str], dict[str, tuple[float, float]]]) -> list[dict]:
    """One row per (link, scheme): points = {(trace, direction): {scheme: (kbit/s, ms)}}."""
    return [{"trace": trace, "direction": direction, "scheme": scheme,
             "throughput_mbps": kbps / 1000.0, "self_inflicted_delay_ms": delay,
             "run": f"{scheme}-{trace}-{direction}"}
            for (trace, direction), by_scheme in points.items()
            for scheme, (kbps, delay) in by_scheme.items()]


def _figure7() -> dict[tuple[str, str], dict[str, tuple[float, float]]]:
    return {link: {s: (p.throughput_kbps, p.delay_ms) for s, p in by_scheme.items()}
            for link, by_scheme in paper.FIGURE7.items()}


def _results(rows: list[dict], mode: str = FULL) -> dict:
    return {r.id: r for r in evaluate_all(FIG7_CLAIMS, rows, mode)}


def test_the_paper_s_own_points_give_the_paper_s_table():
    """The speed-up and delay-reduction claims average as the paper's table does: fed
    Figure 7's own points, they give the table's numbers (0.91x / 79x, 1.1x / 2.1x)."""
    results = _results(_rows(_figure7()))
    assert results["speedup-vs-cubic"].ours == "0.914x"
    assert results["delay-reduction-vs-cubic"].ours == "79.4x"
    assert results["speedup-vs-vegas"].ours == "1.11x"
    assert results["delay-reduction-vs-vegas"].ours == "2.10x"
    for cid in ("speedup-vs-cubic", "delay-reduction-vs-cubic", "speedup-vs-vegas",
                "delay-reduction-vs-vegas", "sprout-lowest-delay"):
        assert results[cid].verdict == PASS, cid
    # Cubic-CoDel has no Figure 7 points: its table claims and our own ordering say NOT RUN.
    for cid in ("speedup-vs-cubic-codel", "delay-reduction-vs-cubic-codel",
                "sprout-lowest-delay-with-codel"):
        assert results[cid].verdict == NOT_RUN, cid


def test_a_mean_over_fewer_links_than_the_paper_s_is_not_compared():
    """Before, the mean over the 7 links that finished was compared with the paper's
    8-link mean; now the claim says NOT RUN and names the links it had."""
    points = _figure7()
    del points[("ATT-LTE-driving", "uplink")]["vegas"]
    results = _results(_rows(points))
    for cid in ("speedup-vs-vegas", "delay-reduction-vs-vegas"):
        assert results[cid].verdict == NOT_RUN
        assert "7 of the paper's 8 links" in results[cid].why
    assert results["speedup-vs-cubic"].verdict == PASS  # Cubic still has all 8
    # The old measure would have compared a 7-link mean.
    value, _, _ = PerGroupComparison("throughput_mbps", "sprout", "vegas", LINK,
                                     MEAN_OF_RATIOS).measure(_rows(points))
    assert value is not None


def test_all_links_passes_the_per_link_measure_through_when_every_link_is_there():
    rows = _rows({(f"T{i}", "up"): {"sprout": (2000, 100), "cubic": (4000, 1000)}
                  for i in range(8)})
    per_link = PerGroupComparison("throughput_mbps", "sprout", "cubic", LINK, MEAN_OF_RATIOS)
    value, used, why = AllLinks(per_link).measure(rows)
    assert value == pytest.approx(0.5) and len(used) == 16 and why == ""


def test_lowest_delay_ranks_figure7_s_schemes_only_and_cubic_codel_is_our_own_check():
    """A link where Cubic-CoDel is far below Sprout and Sprout is the lowest of the paper's
    panel schemes: the paper's claim holds (before, Cubic-CoDel counted and it failed); our
    own check with Cubic-CoDel fails, and says it is ours."""
    rows = _rows({("Verizon-EVDO-driving", "downlink"): {
        "sprout": (200, 1465), "sprout-ewma": (400, 1585), "vegas": (300, 1869),
        "cubic": (500, 90000), "cubic-codel": (450, 1090)}})
    results = _results(rows, BOTH)
    assert results["sprout-lowest-delay"].verdict == PASS
    ours = results["sprout-lowest-delay-with-codel"]
    assert ours.verdict == FAIL and "cubic-codel" in ours.why
    assert ours.source == OURS and ours.paper.startswith("(our check")
    assert "cubic-codel" not in {r.get("scheme") for r in rows
                                 if r["run"] in results["sprout-lowest-delay"].runs}


def test_every_own_check_is_labelled_as_ours():
    """A claim the paper does not make says so in its paper text and its source."""
    claims = (*FIG7_CLAIMS, *PRR_CLAIMS)
    for claim in claims:
        ours = claim.paper.startswith("(our check")
        assert ours == (claim.source == "netrepro's own check"), claim.id
    relabelled = {c.id: c for c in PRR_CLAIMS}["ssthresh-is-beta-of-window"]
    assert relabelled.paper.startswith("(our check")


def test_contest_wording_says_what_is_checked():
    frontier = {c.id: c for c in REGION_CLAIMS}["sprout-on-frontier"]
    assert "near" in frontier.text and "near" in frontier.paper
    for winner in ("dasjoshma", "johnnybameesh"):
        text = {c.id: c for c in REGION_CLAIMS}[f"{winner}-vs-sprout"].text
        assert "slightly better" not in text and "0.10 below" in text
    ranking = TRAIN_TEST_CLAIMS[0]
    assert "tuned" not in ranking.text and "overtrained" in ranking.paper


# ---- contest warm-up A: delay-rises follows the reference's shape (mahimahi, W=1..6).

def _delay_rises() -> Claim:
    return {c.id: c for c in WARMUP_A_CLAIMS}["delay-rises"]


def _old_delay_rises() -> Claim:
    """The claim's earlier shape: rising at every window, 5% or 5 ms."""
    return Claim(id="old", text="t", source="s", paper="p", mode=BOTH, reason="r",
                 check=Monotone("window", "p95_signal_delay_ms",
                                Slack(relative=0.05, absolute=5.0)))


def _windows(delays: dict[int, float]) -> list[dict]:
    return [{"window": w, "p95_signal_delay_ms": d, "run": f"w{w}"} for w, d in delays.items()]


# Above the bandwidth-delay product: the earlier reference reruns (contest claims).
ABOVE = {w: REFERENCE[w][1] for w in (20, 50, 100)}


def test_the_reference_s_own_runs_break_the_old_shape_and_hold_the_new():
    """mahimahi's second trial falls 6 ms from W=1 to W=2 (110 to 104), more than the old
    5%/5 ms; the claim now starts where the path fills, so its own reference holds it."""
    trial2 = {w: trials[1][1] for w, trials in SMALL_WINDOWS.items()}
    rows = _windows({**trial2, **ABOVE})
    assert evaluate_all([_old_delay_rises()], rows, FULL)[0].verdict == FAIL
    new = evaluate_all([_delay_rises()], rows, FULL)[0]
    assert new.verdict == PASS and set(new.runs) == {"w20", "w50", "w100"}


def test_delay_rises_ignores_a_dip_below_the_path_s_bdp_only():
    rows = _windows({1: 109.0, 2: 102.0, 5: 110.0, 10: 154.0, **ABOVE})
    assert evaluate_all([_old_delay_rises()], rows, FULL)[0].verdict == FAIL
    assert evaluate_all([_delay_rises()], rows, BOTH)[0].verdict == PASS
    dip = _windows({1: 109.0, 20: 278.0, 50: 250.0, 100: 1052.0})  # W=50 below W=20
    result = evaluate_all([_delay_rises()], dip, BOTH)[0]
    assert result.verdict == FAIL and "window=50" in result.why


def test_the_path_s_bdp_is_the_trace_s_mean_capacity_times_the_min_rtt():
    assert BDP_PACKETS == pytest.approx(16.76, abs=0.01)
    assert FILLING_WINDOWS[0] == 20 and all(w >= BDP_PACKETS for w in FILLING_WINDOWS)
    # The reference: not monotone below the BDP (lowest at W=3), rising at every window above.
    means = {w: sum(d for _, d in trials) / len(trials) for w, trials in SMALL_WINDOWS.items()}
    assert min(means, key=lambda w: means[w]) == 3
