"""`repro verify` on results folders built by hand: a folder where a claim must pass, one
where it must fail, and each fault (half-written run, deleted run, hand-edited
metrics.json, an older analysis, an unknown experiment)."""
from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

from analysis.claims.model import FAIL, NOT_RUN, PASS
from analysis.claims.report import write_claims
from runkinds.metrics import VERSION_KEY
from analysis.rederive import DIFFERS, MATCH, RECOMPUTED
from app.cli import main
from analysis.host_limits import receive_ceiling
from app.publish.verify import (ExperimentVerdict, print_experiment, EXIT_FAILED, EXIT_OK,
                                EXIT_UNCHECKED, _other_impl, emit, verify_results)
from core.results import ExperimentStore
from core.traces import TraceSet
from experiments.contest.warmup_a import ContestWarmupA
from tests.unit.fake_runs import add_failed, add_logged_run

EXP = ContestWarmupA(TraceSet([], Path("/nonexistent"), manifest={}))  # reads no trace
# window -> (one packet every N ms, queueing delay ms): throughput and delay rise with W.
RISING = {1: (12, 20), 5: (6, 30), 10: (4, 40), 20: (3, 60), 50: (2, 90), 100: (1, 150)}


def build(results: Path, shape: dict[int, tuple[int, int]] = RISING, **kwargs) -> ExperimentStore:
    store = ExperimentStore(results / EXP.name)
    for spec in EXP.matrix(quick=True):
        every, delay = shape[spec.param("window")]
        add_logged_run(store, spec, every, delay, **kwargs)
    return store


def claim(report, cid):
    exp = report.experiments[0]
    return next(r for r in exp.claims.results if r.id == cid)


def test_a_folder_where_the_shape_claims_pass(tmp_path):
    build(tmp_path)
    report = verify_results([EXP], tmp_path)
    v = report.experiments[0]
    assert (v.mode, v.finished, v.planned) == ("quick", 6, 6)
    assert v.count(MATCH) == 6
    assert claim(report, "throughput-rises").verdict == PASS
    assert claim(report, "delay-rises").verdict == PASS
    assert claim(report, "w10-throughput").verdict == NOT_RUN  # a full-run claim
    assert report.exit_code() == EXIT_OK
    out = io.StringIO()
    assert emit(report, False, out) == EXIT_OK
    assert "throughput-rises" in out.getvalue() and "PASS" in out.getvalue()


def test_a_folder_where_a_claim_must_fail(tmp_path):
    dip = {**RISING, 20: (5, 60)}  # W=20 delivers less than W=10
    build(tmp_path, dip)
    report = verify_results([EXP], tmp_path)
    result = claim(report, "throughput-rises")
    assert result.verdict == FAIL and "window=20" in result.why
    assert report.exit_code() == EXIT_FAILED
    data = json.loads(_json(report))
    assert data["exit"] == EXIT_FAILED and data["holds"] is False


def _json(report) -> str:
    out = io.StringIO()
    emit(report, True, out)
    return out.getvalue()


def test_a_hand_edited_metrics_json_is_named(tmp_path):
    store = build(tmp_path)
    run = next(store.done_runs())
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["throughput_mbps"] *= 2
    (run / "metrics.json").write_text(json.dumps(metrics))
    report = verify_results([EXP], tmp_path)
    verdict = next(r for r in report.experiments[0].runs if r.run == run.name)
    assert verdict.check.status == DIFFERS
    assert verdict.check.differing == ("throughput_mbps",)
    assert report.exit_code() == EXIT_FAILED


def test_an_edit_without_a_version_stamp_is_caught_by_its_time(tmp_path):
    store = build(tmp_path, stamp_version=False)
    run = next(store.done_runs())
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["p95_signal_delay_ms"] = 1.0
    (run / "metrics.json").write_text(json.dumps(metrics))
    later = (run / "DONE").stat().st_mtime + 10
    os.utime(run / "metrics.json", (later, later))
    verdict = verify_results([EXP], tmp_path).experiments[0].runs[0]
    assert verdict.check.status == DIFFERS and verdict.check.edited_after_done


def test_numbers_of_an_older_analysis_are_recomputed_not_tampering(tmp_path):
    store = build(tmp_path, stamp_version=False)
    for run in store.done_runs():  # as an older analysis would have written them
        metrics = json.loads((run / "metrics.json").read_text())
        metrics["power"] = 0.0
        metrics["a_metric_no_longer_computed"] = 1
        del metrics["score"]
        done = (run / "DONE").stat().st_mtime
        (run / "metrics.json").write_text(json.dumps(metrics))
        os.utime(run / "metrics.json", (done - 5, done - 5))
    report = verify_results([EXP], tmp_path)
    check = report.experiments[0].runs[0].check
    assert check.status == RECOMPUTED
    assert check.differing == ("power",)
    assert check.not_given_back == ("a_metric_no_longer_computed",)
    assert check.new == ("score",)
    assert report.exit_code() == EXIT_OK
    # Stamped by another analysis version: the same.
    run = next(store.done_runs())
    metrics = json.loads((run / "metrics.json").read_text())
    metrics[VERSION_KEY] = "0123456789ab"
    (run / "metrics.json").write_text(json.dumps(metrics))
    os.utime(run / "metrics.json", (0, 0))
    first = verify_results([EXP], tmp_path).experiments[0].runs
    assert next(r for r in first if r.run == run.name).check.status == RECOMPUTED


def test_a_half_written_run_is_shown_and_not_counted(tmp_path):
    store = build(tmp_path)
    victim = next(store.done_runs())
    (victim / "DONE").unlink()
    (store.runs_dir / ".tmp-some-run-123").mkdir()
    report = verify_results([EXP], tmp_path)
    v = report.experiments[0]
    assert victim.name in v.half_written and ".tmp-some-run-123" in v.half_written
    assert v.finished == 5 and len(v.missing) == 1
    assert claim(report, "throughput-rises").verdict == PASS  # on the 5 that finished


def test_a_run_folder_deleted_by_hand_is_named(tmp_path):
    store = build(tmp_path)
    write_claims(EXP.evaluate_claims(store), store.root)
    victim = next(store.done_runs())
    shutil.rmtree(victim)
    report = verify_results([EXP], tmp_path)
    v = report.experiments[0]
    assert v.deleted == [victim.name]
    assert v.finished == 5
    assert report.exit_code() == EXIT_UNCHECKED


def test_unreadable_artifacts_cannot_be_checked(tmp_path):
    store = build(tmp_path)
    run = next(store.done_runs())
    (run / "data.log").write_text("# base timestamp: 0\n1 + x\n")
    report = verify_results([EXP], tmp_path)
    assert report.experiments[0].count("unreadable") == 1
    assert "data.log" in report.experiments[0].runs[0].check.detail
    assert report.exit_code() == EXIT_UNCHECKED


def test_failed_and_late_runs_are_counted(tmp_path):
    store = ExperimentStore(tmp_path / EXP.name)
    specs = EXP.matrix(quick=True)
    for spec in specs[:-1]:
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay, lateness_p99_us=5000 if spec == specs[0] else 100)
    add_failed(store, specs[-1], "SchemeUnavailable: nothing serves it")
    report = verify_results([EXP], tmp_path)
    v = report.experiments[0]
    assert v.late == 1 and len(v.failed) == 1 and len(v.missing) == 1
    assert "nothing serves it" in v.missing[0][1]
    out = io.StringIO()
    emit(report, False, out)
    assert "1 late" in out.getvalue() and "nothing serves it" in out.getvalue()


def test_late_runs_the_plan_does_not_use_are_not_counted_as_its_own(tmp_path):
    """A full check of an experiment whose quick runs, late, are still on record: the late
    count, the worst lateness and the steal are the full plan's; the others are named apart."""
    store = ExperimentStore(tmp_path / EXP.name)
    full = EXP.matrix(quick=False)
    quick_only = [s for s in EXP.matrix(quick=True) if s not in full]
    assert quick_only  # the quick pass plans runs the full one does not
    for spec in quick_only:
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay, lateness_p99_us=358_000,
                       sender_reaction_p99_us=4500)
    for spec in full:
        every, delay = RISING.get(spec.param("window"), (1, 150))
        add_logged_run(store, spec, every, delay, lateness_p99_us=150)
    v = verify_results([EXP], tmp_path).experiments[0]
    assert v.mode == "full" and v.finished == v.planned == len(full)
    assert (v.late, v.hosts_late) == (0, 0)
    assert max(v.lateness_p99_us) == 150
    assert len(v.outside_plan) == len(quick_only) and all(r.late for r in v.outside_plan)
    assert v.to_dict()["outside_plan"] == {"runs": len(quick_only), "late": len(quick_only),
                                           "hosts_late": len(quick_only)}
    out = io.StringIO()
    print_experiment(v, out)
    assert "; 0 late (emulator" in out.getvalue() and "worst 150 us" in out.getvalue()
    assert (f"not counted: {len(quick_only)} finished runs on record that this plan does not "
            f"use") in out.getvalue()


def test_failed_attempts_of_another_mode_are_not_counted_as_the_plans(tmp_path):
    """In full mode, a quick run's failure still on record is listed apart, not counted."""
    store = ExperimentStore(tmp_path / EXP.name)
    full = EXP.matrix(quick=False)
    quick_only = [s for s in EXP.matrix(quick=True) if s not in full]
    for spec in full:
        every, delay = RISING.get(spec.param("window"), (1, 150))
        add_logged_run(store, spec, every, delay)
    add_failed(store, quick_only[0], "RunError: the quick stretch failed")
    add_failed(store, full[0], "RunError: a full run failed, then finished", when=0.5)
    v = verify_results([EXP], tmp_path).experiments[0]
    assert v.mode == "full"
    assert len(v.failed) == 2 and len(v.failed_in_plan) == 1
    out = io.StringIO()
    print_experiment(v, out)
    text = out.getvalue()
    assert "; 1 failed attempts on record (1 since finished) (not counted: 1 failed attempts " \
           "at runs this plan does not use)" in text
    assert "the quick stretch failed (not this plan's run: not counted)" in text
    assert [f["in_plan"] for f in v.to_dict()["failed"]].count(False) == 1


def test_runs_replaced_by_force_are_not_failed_attempts(tmp_path):
    """`repro run --force` over a finished pass: the replaced runs are kept and named as
    superseded, and the failed-attempt count stays 0."""
    store = ExperimentStore(tmp_path / EXP.name)
    for spec in EXP.matrix(quick=True):
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay)
    for run in list(store.done_runs()):  # what store.commit does with the old run
        store._move_aside(run, "superseded")
    for spec in EXP.matrix(quick=True):
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay)
    v = verify_results([EXP], tmp_path).experiments[0]
    runs = len(EXP.matrix(quick=True))
    assert v.failed == [] and len(v.superseded) == runs and v.finished == runs
    out = io.StringIO()
    print_experiment(v, out)
    assert (f"0 failed attempts on record (0 since finished); {runs} earlier runs replaced by "
            "a rerun of the same spec (--force), kept in superseded/, not failures") \
        in out.getvalue()
    assert len(v.to_dict()["superseded_by_a_rerun"]) == runs


def test_runs_whose_end_hosts_were_late_are_counted(tmp_path):
    store = ExperimentStore(tmp_path / EXP.name)
    for spec in EXP.matrix(quick=True):
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay,
                       sender_reaction_p99_us=4500 if spec.param("window") == 1 else 300)
    report = verify_results([EXP], tmp_path)
    v = report.experiments[0]
    assert (v.late, v.hosts_late) == (0, 1)
    assert max(v.host_p99_us) == 4500
    assert v.to_dict()["hosts_late"] == 1
    claimed = [c for c in v.claims.results if c.runs] if v.claims else []
    late_run = next(s.dirname() for s in EXP.matrix(quick=True) if s.param("window") == 1)
    assert claimed and any(late_run in c.runs for c in claimed)
    # A claim counts the late run only if it stands on it (delay-rises starts at W=20).
    assert all(c.host_late_runs == (late_run in c.runs) for c in claimed)
    out = io.StringIO()
    emit(report, False, out)
    assert "0 late (emulator" in out.getvalue()
    assert "1 with late end hosts (p99 above 2 ms)" in out.getvalue()
    assert "worst 4500 us" in out.getvalue() and "1 hosts late)" in out.getvalue()


def test_served_by_another_implementation():
    assert _other_impl({}, {"cc_requested": "vegas", "cc_used": "reno",
                            "cc_provider": "builtin"}) == \
        "vegas requested (builtin provider), reno ran"
    assert "eBPF was requested" in _other_impl(
        {"cc_impl": "ebpf"}, {"cc_requested": "vegas", "cc_used": "vegas", "cc_provider": "module"})
    # Our eBPF Vegas is bpf_vegas to the kernel: served as requested.
    assert _other_impl({}, {"cc_requested": "vegas", "cc_used": "bpf_vegas",
                            "cc_provider": "ebpf"}) == ""
    assert "bpf_vegas ran" in _other_impl({}, {"cc_requested": "vegas", "cc_used": "bpf_vegas",
                                               "cc_provider": "module"})
    assert _other_impl({}, {}) == ""


def test_nothing_to_verify_is_not_a_pass(tmp_path):
    report = verify_results([EXP], tmp_path)
    assert not report.experiments[0].present
    assert report.exit_code() == EXIT_UNCHECKED


def test_cli_unknown_experiment_and_exit_codes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path))
    assert main(["verify", "no-such-experiment"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert main(["verify", "--results", str(tmp_path / "absent")]) == 2
    build(tmp_path)
    assert main(["verify", EXP.name, "--results", str(tmp_path)]) == EXIT_OK
    assert "the reproduction holds" in capsys.readouterr().out
    assert main(["verify", EXP.name, "--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["exit"] == EXIT_OK and data["experiments"][0]["metrics"]["match"] == 6


def test_the_tcp_receive_ceiling_is_read_from_each_run_and_printed():
    # Over an infinite queue it caps a loss-based flow's window: a machine setting that
    # moves TCP's delay, so a grader sees which one the runs had.
    meta = {"tcp_buffers": {"sender": {"tcp_rmem": "4096 131072 6291456"},
                            "receiver": {"tcp_rmem": "10240 87380 16777216"}}}
    assert receive_ceiling(meta) == "16777216 bytes"
    assert receive_ceiling({**meta, "tcp_buffer_profile": "linux-3.2"}) == \
        "16777216 bytes, linux-3.2 profile"
    assert receive_ceiling({}) == "not recorded"
    assert receive_ceiling({"tcp_buffers": {"receiver": {"tcp_rmem": "unreadable"}}}) == \
        "not recorded"
    verdict = ExperimentVerdict("x", "X", True, mode="full",
                                tcp_rmem_max={"16777216 bytes": 28, "not recorded": 2})
    out = io.StringIO()
    print_experiment(verdict, out)
    assert ("TCP receive buffer maximum (tcp_rmem; caps the window over an infinite queue): "
            "16777216 bytes (28); not recorded (2)") in out.getvalue()


def test_a_plans_runs_that_finished_invalid_are_its_own_not_another_plans(tmp_path):
    """Every quick run finished but invalid (here: late, for an experiment that leaves late
    runs out): they are the quick plan's runs, counted as its late ones, not runs "this
    plan does not use"."""
    class LeavesLateOut(ContestWarmupA):
        def invalid_reason(self, record):
            return "late" if record.metrics.get("lateness_ok") is False else ""
    exp = LeavesLateOut(TraceSet([], Path("/nonexistent"), manifest={}))
    store = ExperimentStore(tmp_path / exp.name)
    quick = exp.matrix(quick=True)
    for spec in quick:
        every, delay = RISING.get(spec.param("window"), (1, 150))
        add_logged_run(store, spec, every, delay, lateness_p99_us=358_000)
    v = verify_results([exp], tmp_path).experiments[0]
    assert v.mode == "quick" and v.finished == 0 and v.planned == len(quick)
    assert v.late == len(quick) and v.outside_plan == []
    assert len(v.invalid) == len(quick)
    out = io.StringIO()
    print_experiment(v, out)
    assert f"; {len(quick)} late (emulator" in out.getvalue()
    assert "not counted" not in out.getvalue()


class _Judged:
    """An experiment's verdict as VerifyReport reads it: present, finished, nothing failed,
    with these claim counts."""

    present, finished = True, 5

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def problems(self) -> tuple[bool, bool]:
        return False, False

    def claim_count(self, verdict: str) -> int:
        return self.counts.get(verdict, 0)


def test_holds_says_how_many_claims_were_judged_when_some_did_not_run():
    from app.publish.verify import VerifyReport
    partial = VerifyReport([_Judged({PASS: 3, NOT_RUN: 27})], "v")  # type: ignore[list-item]
    assert partial.exit_code() == EXIT_OK
    assert partial.holds().startswith("the reproduction holds for the 3 claim(s) judged "
                                      "(27 NOT RUN")
    whole = VerifyReport([_Judged({PASS: 30})], "v")  # type: ignore[list-item]
    assert whole.holds().startswith("the reproduction holds: every claim that ran passed")
