"""The claims machinery on hand-made rows: each check passes, fails and says NOT RUN
where it should, and the experiments' declared claims are well formed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.claims import (BOTH, FAIL, FULL, NOT_RUN, PASS, QUICK, Below, Claim,
                             ClaimDeclarationError, ClaimReport, ColumnMean, LowestPerGroup,
                             MeanOfRatios, Monotone, NeverDominates, NumberCheck,
                             RatioOfMeans, Saturation, Slack, Tolerance, claims_markdown,
                             evaluate, evaluate_all, where, write_claims)
from core.traces import TraceSet
from experiments.registry import all_experiments
from experiments.sprout_claims import FIG7_CLAIMS

TOL = Tolerance(relative=0.1, reason="test")


def claim(check, mode=BOTH, cid="c") -> Claim:
    return Claim(id=cid, text="t", source="s", paper="p", check=check, mode=mode, reason="r")


def test_tolerance_takes_the_widest_bound():
    assert Tolerance(relative=0.1, absolute=5, reason="x").bounds(100) == (90, 110)
    assert Tolerance(relative=0.1, absolute=5, reason="x").bounds(10) == (5, 15)
    assert Tolerance(factor=2, reason="x").bounds(80) == (40, 160)


def test_a_tolerance_or_claim_without_a_reason_is_refused():
    with pytest.raises(ClaimDeclarationError):
        Tolerance(relative=0.1, reason=" ")
    with pytest.raises(ClaimDeclarationError):
        Tolerance(reason="no bound")
    with pytest.raises(ClaimDeclarationError):
        Claim(id="x", text="t", source="s", paper="p", mode="sometimes", reason="r",
              check=Below((), (), "a"))


def test_number_claim_passes_inside_and_fails_outside_its_tolerance():
    rows = [{"window": 10, "throughput_mbps": 2.1, "run": "a"},
            {"window": 20, "throughput_mbps": 9.0, "run": "b"}]
    measure = ColumnMean("throughput_mbps", where(window=10), " Mbit/s")
    ok = evaluate(claim(NumberCheck(measure, 2.0, TOL)), rows, QUICK)
    assert (ok.verdict, ok.runs) == (PASS, ("a",))
    bad = evaluate(claim(NumberCheck(measure, 1.5, TOL)), rows, QUICK)
    assert bad.verdict == FAIL and "outside" in bad.why
    none = evaluate(claim(NumberCheck(ColumnMean("throughput_mbps", where(window=5)), 1, TOL)),
                    rows, QUICK)
    assert none.verdict == NOT_RUN and "window=5" in none.why


def test_a_full_run_claim_is_not_run_on_a_quick_pass():
    rows = [{"window": 10, "throughput_mbps": 2.0}]
    result = evaluate(claim(NumberCheck(ColumnMean("throughput_mbps"), 2.0, TOL), mode=FULL),
                      rows, QUICK, "exp")
    assert result.verdict == NOT_RUN and "full-run claim" in result.why
    assert evaluate(claim(NumberCheck(ColumnMean("throughput_mbps"), 2.0, TOL), mode=FULL),
                    rows, FULL).verdict == PASS


def _links(values):
    """Rows for links: values = {link: {scheme: (throughput, delay)}}."""
    return [{"trace": link, "direction": "down", "scheme": scheme, "throughput_mbps": t,
             "self_inflicted_delay_ms": d, "run": f"{scheme}-{link}"}
            for link, by_scheme in values.items() for scheme, (t, d) in by_scheme.items()]


def test_speedup_is_a_mean_of_ratios_and_delay_reduction_a_ratio_of_means():
    rows = _links({"A": {"sprout": (2.0, 100), "cubic": (4.0, 1000)},
                   "B": {"sprout": (4.0, 300), "cubic": (4.0, 1000)}})
    speedup, _, _ = MeanOfRatios("throughput_mbps", "sprout", "cubic",
                                 ("trace", "direction")).measure(rows)
    assert speedup == pytest.approx((0.5 + 1.0) / 2)
    reduction, used, _ = RatioOfMeans("self_inflicted_delay_ms", "cubic", "sprout",
                                      ("trace", "direction")).measure(rows)
    assert reduction == pytest.approx(1000 / 200)  # the mean of ratios would be 6.67
    assert len(used) == 4


def test_ratio_over_links_both_schemes_ran_only():
    rows = _links({"A": {"sprout": (2.0, 100), "cubic": (4.0, 1000)},
                   "B": {"sprout": (4.0, 300)}})
    value, used, _ = MeanOfRatios("throughput_mbps", "sprout", "cubic",
                                  ("trace",)).measure(rows)
    assert value == pytest.approx(0.5) and len(used) == 2


def test_fig7_claims_about_schemes_not_run_say_not_run():
    rows = _links({"A": {"sprout": (2, 50), "sprout-ewma": (3, 80), "vegas": (1, 90),
                         "cubic": (3, 5000)}})
    results = {r.id: r for r in evaluate_all(FIG7_CLAIMS, rows, FULL)}
    assert results["speedup-vs-cubic-codel"].verdict == NOT_RUN
    assert "cubic-codel" in results["speedup-vs-cubic-codel"].why
    assert results["sprout-lowest-delay"].verdict == PASS
    assert results["speedup-vs-cubic"].ours == "0.667x"


def test_lowest_per_link_within_the_slack():
    check = LowestPerGroup("sprout", ("ewma", "vegas"), "d", ("trace",), slack=0.2,
                           optional=("codel",))
    base = [{"trace": "A", "scheme": "sprout", "d": 110},
            {"trace": "A", "scheme": "ewma", "d": 100},
            {"trace": "A", "scheme": "vegas", "d": 300}]
    assert check.evaluate(base).verdict == PASS  # 10% above the lowest
    worse = base + [{"trace": "A", "scheme": "codel", "d": 80}]
    result = check.evaluate(worse)  # the optional scheme counts where it ran
    assert result.verdict == FAIL and "codel" in result.why
    missing = [r for r in base if r["scheme"] != "vegas"]
    assert check.evaluate(missing).verdict == NOT_RUN


def test_lowest_per_link_leaves_out_incomplete_links_and_says_so():
    check = LowestPerGroup("sprout", ("ewma",), "d", ("trace",), slack=0.2)
    rows = [{"trace": "A", "scheme": "sprout", "d": 10}, {"trace": "A", "scheme": "ewma", "d": 20},
            {"trace": "B", "scheme": "ewma", "d": 20}]
    result = check.evaluate(rows)
    assert result.verdict == PASS and "B" in result.why and result.ours == "holds on 1 of 1 links"


def test_monotone_allows_the_slack_and_fails_beyond_it():
    rows = [{"w": w, "t": t} for w, t in ((1, 1.0), (2, 2.0), (4, 1.95), (8, 3.0))]
    assert Monotone("w", "t", Slack(relative=0.05)).evaluate(rows).verdict == PASS
    rows[2]["t"] = 1.5
    result = Monotone("w", "t", Slack(relative=0.05)).evaluate(rows)
    assert result.verdict == FAIL and "w=4" in result.why
    assert Monotone("w", "t", Slack()).evaluate(rows[:2]).verdict == NOT_RUN


def test_saturation_checks_windows_beyond_the_bdp_multiple_only():
    check = Saturation("window", "utilization", at_least=0.9, bdp_multiple=3, rtt_ms=40,
                       packet_bytes=1500)
    # 3 Mbit/s x 40 ms = 10 packets: windows from 30 on count.
    rows = [{"window": 10, "utilization": 0.5, "capacity_mbps": 3.0},
            {"window": 30, "utilization": 0.95, "capacity_mbps": 3.0}]
    assert check.evaluate(rows).verdict == PASS
    rows.append({"window": 50, "utilization": 0.8, "capacity_mbps": 3.0})
    assert check.evaluate(rows).verdict == FAIL
    assert check.evaluate(rows[:1]).verdict == NOT_RUN


def test_never_dominates_and_below():
    rows = [{"scheme": "ewma", "t": 5.0, "d": 100}, {"scheme": "s", "c": 0.05, "t": 3, "d": 50},
            {"scheme": "s", "c": 0.5, "t": 6, "d": 150}]
    check = NeverDominates(where(scheme="s"), where(scheme="ewma"), more="t", less="d")
    assert check.evaluate(rows).verdict == PASS
    rows.append({"scheme": "s", "c": 0.25, "t": 5.5, "d": 90, "run": "r"})
    assert check.evaluate(rows).verdict == FAIL
    s_low, ewma = where(scheme="s", c=0.05), where(scheme="ewma")
    assert Below(s_low, ewma, "d").evaluate(rows).verdict == PASS
    assert Below(ewma, s_low, "d").evaluate(rows).verdict == FAIL


def test_late_runs_are_counted(tmp_path):
    rows = [{"w": w, "t": w, "run": f"r{w}", "lateness_ok": w != 2} for w in (1, 2, 3)]
    result = evaluate(claim(Monotone("w", "t", Slack())), rows, QUICK)
    assert result.late_runs == 1 and len(result.runs) == 3


def test_claims_files_round_trip(tmp_path):
    rows = [{"w": w, "t": w, "run": f"r{w}"} for w in (1, 2, 3)]
    report = ClaimReport("exp", QUICK, tuple(evaluate_all([claim(Monotone("w", "t", Slack()))],
                                                          rows, QUICK)))
    write_claims(report, tmp_path)
    back = ClaimReport.from_dict(json.loads((tmp_path / "claims.json").read_text()))
    assert back.results == report.results
    text = (tmp_path / "claims.md").read_text()
    assert "| **c** t |" in text and "PASS" in text and claims_markdown(report) == text


def test_every_experiment_declares_well_formed_claims():
    for exp in all_experiments(TraceSet([], Path("/nonexistent"), manifest={})):
        claims = exp.claims()
        assert claims, f"{exp.name} declares no claims"
        ids = [c.id for c in claims]
        assert len(ids) == len(set(ids)), exp.name
        for c in claims:
            assert c.source and c.paper and c.reason and c.tolerance_text()
        # With no runs every claim says NOT RUN, with the reason.
        for result in evaluate_all(claims, [], QUICK, exp.name):
            assert result.verdict == NOT_RUN and result.why
