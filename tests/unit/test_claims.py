"""The claims machinery on hand-made rows: each check passes, fails and says NOT RUN
where it should, and the experiments' declared claims are well formed."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analysis.claims.checks import (EVERY_RUN, HIGHEST, LOWEST, OTHER_MEANS, Below, EveryGroup,
                                    ExtremePerGroup, Monotone, NeverDominates, NumberCheck, Pair,
                                    Slack)
from analysis.claims.measures import (MEAN_OF_DIFFERENCES, MEAN_OF_RATIOS, RATIO_OF_MEANS,
                                      ColumnMean, PerGroupComparison)
from analysis.claims.model import (BOTH, FAIL, FULL, NOT_RUN, PASS, QUICK, Cause, Claim,
                                   ClaimDeclarationError, ClaimReport, ClaimResult, OneOf,
                                   Tolerance, evaluate, evaluate_all, late_run_count, row_runs,
                                   where)
from analysis.claims.report import claims_markdown, write_claims
from core.traces import TraceSet
from experiments.contest.claims import BOARD_CLAIMS as CONTEST_CLAIMS
from experiments.contest.claims import Saturation
from experiments.registry import all_experiments
from experiments.sprout.claims import FIG7_CLAIMS

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


def test_a_failure_points_to_where_it_is_explained():
    rows = [{"window": 10, "throughput_mbps": 2.1, "run": "a"}]
    measure = ColumnMean("throughput_mbps", where(window=10), " Mbit/s")
    explained = Claim(id="c", text="t", source="s", paper="p", mode=BOTH, reason="r",
                      check=NumberCheck(measure, 1.5, TOL),
                      causes=(Cause("docs/x.md, \"Why\""),))
    bad = evaluate(explained, rows, QUICK)
    assert bad.verdict == FAIL and bad.why.endswith('. The cause, measured: docs/x.md, "Why"')
    assert 'The cause, measured: docs/x.md' in claims_markdown(ClaimReport("e", QUICK, (bad,)))
    # Only a failure says it: the verdict itself is the check's.
    good = evaluate(Claim(id="c", text="t", source="s", paper="p", mode=BOTH, reason="r",
                          check=NumberCheck(measure, 2.0, TOL),
                          causes=(Cause("docs/x.md"),)),
                    rows, QUICK)
    assert good.verdict == PASS and good.why == ""


def test_a_write_up_about_some_groups_is_given_only_for_their_failures():
    """sprout-lowest-delay's AT&T LTE write-up concerns those links: a failure on another link
    points to that link's own write-up, or says that none is measured."""
    def delays(att: float, verizon: float, tmobile: float = 50.0) -> list[dict]:
        return [{"link": link, "scheme": s, "delay": d, "run": f"{link}-{s}"}
                for link, sprout in (("att", att), ("verizon", verizon), ("tmobile", tmobile))
                for s, d in (("sprout", sprout), ("vegas", 100.0))]
    check = ExtremePerGroup(subject="sprout", column="delay", group_by=("link",),
                            direction=LOWEST, against=OTHER_MEANS, slack=0.2)
    scoped = Claim(id="c", text="t", source="s", paper="p", mode=BOTH, reason="r",
                   check=check, causes=(Cause("docs/att.md", where(link="att")),
                                        Cause("docs/verizon.md", where(link="verizon"))))
    on_att = evaluate(scoped, delays(att=300.0, verizon=50.0), QUICK)
    assert on_att.verdict == FAIL and on_att.why.endswith("The cause, measured: docs/att.md")
    on_verizon = evaluate(scoped, delays(att=50.0, verizon=300.0), QUICK)
    assert on_verizon.why.endswith("The cause, measured: docs/verizon.md")
    on_tmobile = evaluate(scoped, delays(att=50.0, verizon=50.0, tmobile=300.0), QUICK)
    assert on_tmobile.verdict == FAIL and "docs/" not in on_tmobile.why.split("(")[0]
    assert on_tmobile.why.endswith("No cause measured for this failure (the ones on record "
                                   "cover link=att; link=verizon only)")
    on_two = evaluate(scoped, delays(att=300.0, verizon=50.0, tmobile=300.0), QUICK)
    assert on_two.why.endswith("The cause where link=att, measured: docs/att.md; no cause "
                               "measured for the other failures"), on_two.why
    # The same for a check of cells (EveryGroup), as the PRR claims use.
    rows = [{"cell": c, "x": x, "y": 10, "run": c} for c, x in (("a", 20), ("b", 5))]
    cells = Claim(id="c", text="t", source="s", paper="p", mode=BOTH, reason="r",
                  check=EveryGroup("x", "<", "y", ("cell",)),
                  causes=(Cause("docs/b.md", where(cell="b")),))
    assert evaluate(cells, rows, QUICK).why.startswith("fails in a: 20.0 vs 10.0. No cause")


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
    speedup, _, _ = PerGroupComparison("throughput_mbps", "sprout", "cubic",
                                       ("trace", "direction"), MEAN_OF_RATIOS).measure(rows)
    assert speedup == pytest.approx((0.5 + 1.0) / 2)
    reduction, used, _ = PerGroupComparison("self_inflicted_delay_ms", "cubic", "sprout",
                                            ("trace", "direction"), RATIO_OF_MEANS).measure(rows)
    assert reduction == pytest.approx(1000 / 200)  # the mean of ratios would be 6.67
    assert len(used) == 4


def test_ratio_over_links_both_schemes_ran_only():
    rows = _links({"A": {"sprout": (2.0, 100), "cubic": (4.0, 1000)},
                   "B": {"sprout": (4.0, 300)}})
    value, used, _ = PerGroupComparison("throughput_mbps", "sprout", "cubic",
                                        ("trace",), MEAN_OF_RATIOS).measure(rows)
    assert value == pytest.approx(0.5) and len(used) == 2


def test_fig7_claims_about_schemes_not_run_say_not_run():
    rows = _links({"A": {"sprout": (2, 50), "sprout-ewma": (3, 80), "vegas": (1, 90),
                         "cubic": (3, 5000)}})
    results = {r.id: r for r in evaluate_all(FIG7_CLAIMS, rows, FULL)}
    assert results["speedup-vs-cubic-codel"].verdict == NOT_RUN
    assert "cubic-codel" in results["speedup-vs-cubic-codel"].why
    assert results["sprout-lowest-delay"].verdict == PASS
    # One link of the paper's 8: the table's averages are not compared.
    assert results["speedup-vs-cubic"].verdict == NOT_RUN
    assert "1 of the paper's 8 links" in results["speedup-vs-cubic"].why


def test_lowest_per_link_within_the_slack():
    check = ExtremePerGroup("sprout", "d", ("trace",), LOWEST, OTHER_MEANS, slack=0.2,
                            among=("ewma", "vegas"), optional=("codel",), group_name="link")
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
    check = ExtremePerGroup("sprout", "d", ("trace",), LOWEST, OTHER_MEANS, slack=0.2,
                            among=("ewma",), group_name="link")
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


def test_a_falling_monotone_reads_the_curve_from_the_highest_x_down():
    # Sprout's confidence: throughput falls as confidence rises.
    rows = [{"c": c, "t": t} for c, t in ((0.05, 0.89), (0.25, 0.88), (0.5, 0.86),
                                          (0.75, 0.76), (0.95, 0.37))]
    assert Monotone("c", "t", Slack(relative=0.05), falling=True).evaluate(rows).verdict == PASS
    assert Monotone("c", "t", Slack(relative=0.05)).evaluate(rows).verdict == FAIL
    rows[1]["t"] = 0.95  # a rise beyond 5% between 5% and 25% confidence
    result = Monotone("c", "t", Slack(relative=0.05), falling=True).evaluate(rows)
    assert result.verdict == FAIL and "c=0.05" in result.why


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


def test_runs_whose_end_hosts_were_late_are_counted_among_the_claims_runs():
    # Named by the experiment; a late run the claim did not use does not count, and a row
    # that aggregates runs counts each of its runs.
    rows = [{"w": w, "t": w, "runs": f"r{w}a r{w}b", "late_trials": 1 if w == 3 else 0}
            for w in (1, 2, 3)]
    result = evaluate_all([claim(Monotone("w", "t", Slack()))], rows, QUICK,
                          host_late=frozenset({"r1b", "r3a", "elsewhere"}))[0]
    assert (result.late_runs, result.host_late_runs) == (1, 2)
    assert result.runs_text() == "6 (1 late, 2 hosts late)"
    assert ClaimResult.from_dict(result.to_dict()).host_late_runs == 2
    report = claims_markdown(ClaimReport("exp", QUICK, (result,)))
    assert "| 6 (1 late, 2 hosts late) |" in report
    on_time = evaluate(claim(Monotone("w", "t", Slack())), rows[:2] + [{"w": 3, "t": 3}], QUICK)
    assert on_time.host_late_runs == 0 and on_time.runs_text() == "4"


def test_rows_that_aggregate_runs_count_every_run_they_stand_on():
    # A protocol's row (its trials' mean) lists its runs; a training/testing row lists both.
    assert row_runs({"run": "r1"}) == {"r1"}
    assert row_runs({"runs": "a b"}) == {"a", "b"}
    assert row_runs({"train_runs": "a b", "test_runs": "c", "name": "x y"}) == {"a", "b", "c"}
    assert row_runs({"runs": ""}) == set()
    rows = [{"w": w, "t": w, "runs": f"r{w}a r{w}b"} for w in (1, 2, 3)]
    assert evaluate(claim(Monotone("w", "t", Slack())), rows, QUICK).runs == \
        ("r1a", "r1b", "r2a", "r2b", "r3a", "r3b")


def test_rows_that_aggregate_runs_count_their_late_trials():
    # A region row carries how many of its trials were late (csv text or a number).
    rows = [{"w": w, "t": w, "runs": f"r{w}a r{w}b", "late_trials": late}
            for w, late in ((1, "0"), (2, 2), (3, "1"))]
    assert evaluate(claim(Monotone("w", "t", Slack())), rows, QUICK).late_runs == 3
    assert late_run_count([{"run": "a", "lateness_ok": False}, {"run": "a", "lateness_ok": False},
                           {"run": "b", "lateness_ok": True}]) == 1


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
        claims = exp.claims
        assert claims, f"{exp.name} declares no claims"
        ids = [c.id for c in claims]
        assert len(ids) == len(set(ids)), exp.name
        for c in claims:
            assert c.source and c.paper and c.reason and c.tolerance_text()
        # With no runs every claim says NOT RUN, with the reason.
        for result in evaluate_all(claims, [], QUICK, exp.name):
            assert result.verdict == NOT_RUN and result.why


def test_every_measured_cause_names_a_docs_section_that_exists():
    """A cause is 'docs/<file>.md, "<heading>"' or 'docs/<file>.md#<anchor>', maybe followed
    by ': <summary>'; the heading must be in the file."""
    docs = Path(__file__).resolve().parents[2]
    for exp in all_experiments(TraceSet([], Path("/nonexistent"), manifest={})):
        for claim in exp.claims:
            for cause in claim.causes:
                found = re.match(r'(docs/[\w./-]+\.md)(?:, "([^"]+)"|#([\w-]+))', cause.section)
                assert found, (claim.id, cause.section)
                text = (docs / found.group(1)).read_text()
                headings = [line.lstrip("#").strip() for line in text.splitlines()
                            if line.startswith("#")]
                if found.group(2):
                    assert found.group(2) in headings, (claim.id, found.group(2))
                else:
                    anchors = {re.sub(r"[^\w -]", "", h.lower()).replace(" ", "-")
                               for h in headings}
                    assert found.group(3) in anchors, (claim.id, found.group(3))


def test_one_of_filters_rows_by_any_of_its_values():
    rows = [{"r": "a", "x": 1}, {"r": "b", "x": 3}, {"r": "c", "x": 100}]
    assert ColumnMean("x", where(r=OneOf(("a", "b")))).measure(rows)[0] == 2


def test_every_group_takes_medians_per_cell_and_must_hold_in_each():
    check = EveryGroup("a", "<=", "b", ("cell",), slack=-1)
    rows = [{"cell": 1, "a": a, "b": 10} for a in (3, 9, 20)]  # median 9 <= 10 - 1
    assert check.evaluate(rows).verdict == PASS
    rows.append({"cell": 2, "a": 10, "b": 10})
    result = check.evaluate(rows)
    assert result.verdict == FAIL and result.why.startswith("fails in 2:")
    assert result.ours == "holds in 1 of 2 cells"
    assert check.evaluate([{"cell": 1, "a": None, "b": 3}]).verdict == NOT_RUN


def test_every_group_against_a_constant_and_within_a_gap():
    assert EveryGroup("a", "<=", 2.0, ("c",)).evaluate([{"c": 1, "a": 2}]).verdict == PASS
    assert EveryGroup("a", "<=", 2.0, ("c",)).evaluate([{"c": 1, "a": 3}]).verdict == FAIL
    near = EveryGroup("a", "~", "b", ("c",), scale_by=("k", (("x", 0.5),)), slack=1)
    assert near.evaluate([{"c": 1, "k": "x", "a": 5, "b": 11}]).verdict == PASS  # 5 vs 5.5
    assert near.evaluate([{"c": 1, "k": "x", "a": 3, "b": 11}]).verdict == FAIL
    assert near.evaluate([{"c": 1, "k": "y", "a": 3, "b": 11}]).verdict == NOT_RUN
    with pytest.raises(ClaimDeclarationError):
        EveryGroup("a", "=<", "b", ("c",))


def test_every_group_pairs_two_settings_of_one_cell():
    check = EveryGroup("t", "<", "t", ("cell",), pair=Pair("alg", "new", "old"), scale=0.9,
                       positive=("t",))
    rows = [{"cell": 1, "alg": "new", "t": 5, "run": "n1"},
            {"cell": 1, "alg": "old", "t": 10, "run": "o1"},
            {"cell": 2, "alg": "new", "t": 5, "run": "n2"}]  # no "old" in cell 2
    result = evaluate(claim(check), rows, QUICK)
    assert result.verdict == PASS and result.runs == ("n1", "o1")
    rows.append({"cell": 2, "alg": "old", "t": 5.2, "run": "o2"})
    assert check.evaluate(rows).verdict == FAIL  # 5 is not below 0.9 x 5.2
    zero = [dict(r, t=0) if r["alg"] == "old" else r for r in rows]
    assert check.evaluate(zero).verdict == NOT_RUN  # nothing positive to compare with
    once = EveryGroup("b", ">=", "b", ("cell",), pair=Pair("alg", "new", "old"),
                      strictly_once=True)
    equal = [{"cell": 1, "alg": "new", "b": 2}, {"cell": 1, "alg": "old", "b": 2}]
    assert once.evaluate(equal).verdict == FAIL
    assert once.evaluate(equal + [{"cell": 2, "alg": "new", "b": 3},
                                  {"cell": 2, "alg": "old", "b": 2}]).verdict == PASS


def test_highest_per_group_and_mean_of_differences():
    rows = [{"trace": "A", "scheme": "omni", "s": 1.0}, {"trace": "A", "scheme": "x", "s": 0.5},
            {"trace": "A", "scheme": "x", "s": 0.9}, {"trace": "B", "scheme": "x", "s": 0.2}]
    check = ExtremePerGroup("omni", "s", ("trace",), HIGHEST, EVERY_RUN)
    result = check.evaluate(rows)
    assert result.verdict == PASS and "B" in result.why and result.ours == "holds on 1 of 1"
    rows.append({"trace": "A", "scheme": "y", "s": 1.2})
    assert check.evaluate(rows).verdict == FAIL
    assert check.evaluate(rows[1:]).verdict == NOT_RUN
    diff = PerGroupComparison("s", numerator="y", denominator="x", group_by=("trace",),
                              aggregation=MEAN_OF_DIFFERENCES, where=where(trace="A"))
    assert diff.measure(rows)[0] == pytest.approx(1.2 - 0.7)


def test_contest_claims_on_hand_made_rows():
    rows = [{"trace": "Verizon-LTE-short", "scheme": s, "score": v, "run": s}
            for s, v in (("omniscient", -2.0), ("sprout", -3.0), ("dasjoshma", -2.9),
                         ("johnnybameesh", -3.5), ("aimd", -4.0))]
    results = {r.id: r for r in evaluate_all(CONTEST_CLAIMS, rows, QUICK, "contest")}
    assert results["omniscient-tops-every-board"].verdict == PASS
    assert results["dasjoshma-near-sprout"].verdict == PASS  # +0.1
    assert results["johnnybameesh-near-sprout"].verdict == FAIL  # -0.5: clearly worse
    rows.append({"trace": "Verizon-LTE-short", "scheme": "sheen", "score": -1.5, "run": "s"})
    assert evaluate_all(CONTEST_CLAIMS, rows, QUICK)[0].verdict == FAIL
    others = [dict(r, trace="TMobile-LTE-short") for r in rows if r["scheme"] != "dasjoshma"]
    assert evaluate_all(CONTEST_CLAIMS, others, QUICK)[1].verdict == NOT_RUN


def test_contest_claims_from_a_hand_made_results_folder(tmp_path):
    """The contest experiment's rows: its finished baseline runs, each with its board's
    trace, plus the omniscient protocol computed from the trace itself."""
    from core.results import ExperimentStore
    from experiments.contest.board import TRACE_ROLES, Contest
    from tests.unit.fake_runs import add_done, trace_set, write_trace
    training = TRACE_ROLES["training"]
    write_trace(tmp_path / "traces", f"{training}.down", range(1, 1001))  # 12 Mbit/s, 1 s
    exp = Contest(trace_set(tmp_path / "traces"))
    store = ExperimentStore(tmp_path / "contest")
    scores = {"sprout": -3.0, "johnnybameesh": -2.95, "aimd": -4.0}
    for spec in exp.matrix(quick=True):
        add_done(store, spec, score=scores[spec.scheme], throughput_mbps=1.0)
    cov = exp.coverage(store)
    rows = exp.claim_rows(cov)
    omni = [r for r in rows if r["scheme"] == "omniscient"]
    assert len(omni) == 1 and omni[0]["trace"] == training and omni[0]["score"] > -3
    assert {r["trace"] for r in rows} == {training}
    report = {r.id: r for r in exp.claims_on(cov, rows).results}
    assert report["omniscient-tops-every-board"].verdict == PASS
    assert len(report["omniscient-tops-every-board"].runs) == 3  # the baselines' folders
    assert report["johnnybameesh-near-sprout"].verdict == PASS  # +0.05
    assert report["dasjoshma-near-sprout"].verdict == NOT_RUN  # not in the quick pass
    # Without the trace there is no omniscient row, and the ordering cannot be checked.
    bare = Contest(TraceSet([], Path("/nonexistent"), manifest={}))
    assert {r.id: r.verdict for r in bare.claims_on(cov, bare.claim_rows(cov)).results}[
        "omniscient-tops-every-board"] == NOT_RUN
