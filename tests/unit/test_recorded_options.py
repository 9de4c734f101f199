"""Results are judged against the options their runs were recorded with, never against what
the checking machine would choose: a PRR Figure 2 folder and bundle made under POX, checked
where POX is absent (so `--controller auto` would mean os-ken there), keep their full
coverage; a missing or unusable record is reported by name, with the fix."""
from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from analysis.claims.model import NOT_RUN
from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics
from analysis.rederive import MATCH
from app.publish.pack import pack, verify_bundle
from app.publish.report import write_report
from app.publish.verify import EXIT_UNCHECKED, emit, verify_experiment, verify_results
from controllers import launcher
from core.paths import ProjectPaths
from core.results import ExperimentStore, experiment_store, write_json
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments.prr.fig2 import PrrFig2
from app.recorded_options import (RECORD, RecordError, as_recorded, pinned, write_record)
from experiments.registry import all_experiments
from experiments.sprout.fig7 import ALWAYS, NEVER, SproutFig7
from tests.unit.fake_runs import trace_set, write_trace
from tests.unit.prr_fake_run import write_fake_run

PRR = "prr-fig2"
QUICK_RUNS = 20  # prr-fig2 --quick: light and heavy under both receivers, base once


def machine(monkeypatch: pytest.MonkeyPatch, pox: bool) -> None:
    """POX installed or not; os-ken always can run (as Debian's python3-os-ken here)."""
    found = SimpleNamespace(version="test", source="test") if pox else None
    monkeypatch.setattr(launcher.pox_install, "installed", lambda root=None: found)
    monkeypatch.setattr(launcher, "osken_available", lambda: None)


def _finished(store: ExperimentStore, spec: RunSpec) -> Path:
    run_dir = store.run_dir(spec)
    meta = write_fake_run(run_dir, spec)
    meta["controller"]["name"] = spec.option("controller")  # the one that served
    write_json(run_dir / "meta.json", meta)
    write_json(run_dir / "metrics.json", transfer_metrics(load_transfer_run(run_dir, meta), meta))
    (run_dir / "DONE").write_text("x\n")
    return run_dir


def prr_results(results: Path, record: bool = True) -> PrrFig2:
    """A quick PRR Figure 2 pass made by hand where auto meant POX, as `repro run` leaves it."""
    exp = pinned(PrrFig2(None))
    assert isinstance(exp, PrrFig2) and exp.controller == "pox"
    store = experiment_store(results, PRR)
    if record:
        write_record(store.root, exp)
    for spec in exp.matrix(quick=True):
        _finished(store, spec)
    return exp


def _text(report: Any) -> tuple[int, str]:
    out = io.StringIO()
    code = emit(report, False, out)
    return code, out.getvalue()


def _pack(tmp_path: Path, results: Path) -> Path:
    out = io.StringIO()
    bundle = pack(ProjectPaths(results_override=results), [PrrFig2(None)],
                  trace_set(tmp_path / "traces"), tmp_path / "b.tar.xz", stream=out)
    assert bundle is not None, out.getvalue()
    return bundle


def _verify_where_pox_is_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                bundle: Path) -> Any:
    machine(monkeypatch, pox=False)  # the grader's machine: no POX, auto would be os-ken
    return verify_bundle(bundle, None, ProjectPaths(results_override=tmp_path / "none"),
                         keep=tmp_path / "elsewhere")


def test_a_local_folder_keeps_its_plan_after_pox_is_removed(tmp_path, monkeypatch):
    machine(monkeypatch, pox=True)
    prr_results(tmp_path)
    machine(monkeypatch, pox=False)
    # What the defect did: the machine's own choice plans os-ken runs the folder never had.
    assert {s.option("controller") for s in PrrFig2(None).matrix(quick=True)} == {"os-ken"}
    naive = verify_experiment(PrrFig2(None), tmp_path)
    assert (naive.finished, naive.planned) == (0, QUICK_RUNS)
    report = verify_results([PrrFig2(None)], tmp_path)
    v = report.experiments[0]
    assert (v.mode, v.finished, v.planned) == ("quick", QUICK_RUNS, QUICK_RUNS)
    assert v.options["controller"] == "pox" and not v.options_problem
    assert v.count(MATCH) == QUICK_RUNS and not v.missing
    assert v.claims is not None and v.claim_count(NOT_RUN) < len(v.claims.results)
    _, text = _text(report)
    assert f"{QUICK_RUNS} of {QUICK_RUNS} planned runs finished" in text
    assert "controller=pox" in text


def test_a_bundle_made_under_pox_verifies_in_full_where_pox_is_absent(tmp_path, monkeypatch):
    machine(monkeypatch, pox=True)
    results = tmp_path / "results"
    prr_results(results)
    bundle = _pack(tmp_path, results)
    packed = verify_results([PrrFig2(None)], results).experiments[0]
    report = _verify_where_pox_is_absent(tmp_path, monkeypatch, bundle)
    code, text = _text(report)
    v = next(e for e in report.experiments if e.name == PRR)
    assert (v.finished, v.planned) == (QUICK_RUNS, QUICK_RUNS), text
    assert v.options["controller"] == "pox"
    assert f": 0 of {QUICK_RUNS} planned" not in text
    assert f"{PRR}: every claim's verdict is the same as when packed" in text
    assert v.claims is not None and packed.claims is not None
    assert [r.verdict for r in v.claims.results] == [r.verdict for r in packed.claims.results]
    assert code == report.exit_code() != EXIT_UNCHECKED
    # The same unpacked folder judged by this machine's own choice: the defect, for contrast.
    naive = verify_experiment(PrrFig2(None), tmp_path / "elsewhere" / "results")
    assert naive.finished == 0


def test_a_bundle_without_the_record_says_so_and_still_checks_its_runs(tmp_path, monkeypatch):
    machine(monkeypatch, pox=True)
    results = tmp_path / "results"
    prr_results(results, record=False)  # made by code that did not record the options
    report = _verify_where_pox_is_absent(tmp_path, monkeypatch, _pack(tmp_path, results))
    code, text = _text(report)
    v = report.experiments[0]
    assert code == EXIT_UNCHECKED
    assert "options.json is missing" in v.options_problem
    assert f"./repro run {PRR}" in v.options_problem
    assert v.claims is None and v.planned == 0
    assert v.count(MATCH) == QUICK_RUNS  # every run is still re-derived
    assert "NOT CHECKED: the plan its runs were made for is unknown" in text
    assert f"{QUICK_RUNS} finished runs, matched to no plan" in text
    assert "no finished runs to check" not in text
    assert f"the options {PRR} ran with are not on record or unreadable" in text
    assert f"{PRR}: claims not evaluated here" in text
    assert "every claim's verdict is the same" not in text


def test_a_corrupt_record_in_a_bundle_is_named(tmp_path, monkeypatch):
    machine(monkeypatch, pox=True)
    results = tmp_path / "results"
    prr_results(results)
    (results / PRR / RECORD).write_text('{"experiment": "prr-fig2", "options": ')
    report = _verify_where_pox_is_absent(tmp_path, monkeypatch, _pack(tmp_path, results))
    code, text = _text(report)
    assert code == EXIT_UNCHECKED and not report.bundle_failed  # packed as it was
    problem = report.experiments[0].options_problem
    assert problem.startswith(f"results/{PRR}/{RECORD} is unreadable"), problem


@pytest.mark.parametrize("record, message", [
    ("not json", "is unreadable"),
    ('["a list"]', "holds no `options` object"),
    ({"experiment": "sprout-fig7", "options": {}}, "records experiment 'sprout-fig7'"),
    ({"experiment": PRR, "options": {"controller": "ryu"}},
     "--controller: 'ryu' is not one of auto, pox, os-ken"),
    ({"experiment": PRR, "options": {"colour": "red"}}, "prr-fig2 does not take --colour"),
    # Left to the machine when it ran (nothing could serve then): not decidable here.
    ({"experiment": PRR, "options": {"controller": "auto"}},
     "controller='auto' (this machine: 'os-ken')"),
])
def test_an_unusable_record_raises_with_the_file_and_the_fix(tmp_path, monkeypatch, record,
                                                             message):
    machine(monkeypatch, pox=False)
    root = tmp_path / PRR
    root.mkdir()
    (root / RECORD).write_text(record if isinstance(record, str) else json.dumps(record))
    with pytest.raises(RecordError, match="options.json") as caught:
        as_recorded(PrrFig2(None), root)
    assert message in str(caught.value)
    assert f"run the same `./repro run {PRR} ...` command again" in str(caught.value)


def test_an_experiment_without_options_needs_no_record(tmp_path):
    no_traces = TraceSet([], Path("/nonexistent"), manifest={})
    exp = next(e for e in all_experiments(no_traces) if not e.options)
    assert as_recorded(exp, tmp_path / exp.name) is exp
    with pytest.raises(RecordError, match="is missing"):
        as_recorded(PrrFig2(None), tmp_path / PRR)


def _trace_dir(directory: Path, bases: tuple[str, ...]) -> TraceSet:
    for base in bases:
        for end in ("down", "up"):
            write_trace(directory, f"{base}.{end}", range(1, 3001))
    return trace_set(directory)


def test_every_experiment_plans_the_same_runs_from_its_record_on_another_machine(
        tmp_path, monkeypatch):
    """Machine A: POX, no Verizon-LTE-driving. Machine B: no POX, Verizon-LTE-driving.
    Each experiment recorded on A and rebuilt on B from the record plans A's runs; built
    on B from its defaults, prr-fig2, prr-heavy-loss (its controller) and sprout-fig7 would
    plan others (which is why the record is needed)."""
    common = ("Verizon-LTE-short", "Verizon-EVDO-driving", "ATT-LTE-driving",
              "TMobile-UMTS-driving")
    on_a = _trace_dir(tmp_path / "a", common)
    on_b = _trace_dir(tmp_path / "b", common + ("Verizon-LTE-driving",))
    machine(monkeypatch, pox=True)
    planned = {}
    for exp in all_experiments(on_a):
        ran = pinned(exp)
        write_record(tmp_path / "results" / exp.name, ran)
        planned[exp.name] = (ran.matrix(False), ran.matrix(True))
    assert json.loads((tmp_path / "results" / PRR / RECORD).read_text())["options"][
        "controller"] == "pox"
    machine(monkeypatch, pox=False)
    differ = set()
    for exp in all_experiments(on_b):
        rebuilt = as_recorded(exp, tmp_path / "results" / exp.name)
        assert (rebuilt.matrix(False), rebuilt.matrix(True)) == planned[exp.name], exp.name
        if (exp.matrix(False), exp.matrix(True)) != planned[exp.name]:
            differ.add(exp.name)
    assert differ == {PRR, "prr-heavy-loss", "sprout-fig7"}


def test_substitute_option_decides_the_verizon_lte_traces(tmp_path):
    both = _trace_dir(tmp_path / "both", ("Verizon-LTE-short", "Verizon-LTE-driving"))
    short = _trace_dir(tmp_path / "short", ("Verizon-LTE-short",))
    assert SproutFig7(both).panels()[0].base == "Verizon-LTE-driving"
    assert SproutFig7(both, {"substitute": ALWAYS}).panels()[0].base == "Verizon-LTE-short"
    assert SproutFig7(short, {"substitute": NEVER}).panels()[0].base == "Verizon-LTE-driving"
    assert SproutFig7(short).resolved_options()["substitute"] == ALWAYS
    assert SproutFig7(both).resolved_options()["substitute"] == NEVER


def test_the_report_uses_the_record_and_says_when_it_is_missing(tmp_path, monkeypatch):
    machine(monkeypatch, pox=True)
    prr_results(tmp_path)
    machine(monkeypatch, pox=False)
    paths = ProjectPaths(results_override=tmp_path)
    page = write_report(paths, [PrrFig2(None)]).read_text()
    assert f"quick mode: {QUICK_RUNS} of {QUICK_RUNS} planned runs finished" in page
    assert "<code>controller=pox</code>" in page
    claims = json.loads((tmp_path / PRR / "claims.json").read_text())
    (tmp_path / PRR / RECORD).unlink()
    page = write_report(paths, [PrrFig2(None)]).read_text()
    assert "Not judged: the plan its runs were made for is unknown" in page
    assert "Claims not evaluated" in page
    # The claims.json written when the plan was known is left as it was.
    assert json.loads((tmp_path / PRR / "claims.json").read_text()) == claims


def test_repro_run_plans_from_and_records_one_decision(tmp_path, monkeypatch):
    """`repro run prr-fig2 --pattern heavy` where auto means POX: the runs it plans and the
    options.json it writes (before any run starts) both say pox and heavy."""
    from app import cli
    from tests.unit.test_experiment_inputs import _Stop, _stop_before_running
    machine(monkeypatch, pox=True)
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    plans = _stop_before_running(monkeypatch)
    with pytest.raises(_Stop):
        cli.main(["run", PRR, "--quick", "--pattern", "heavy"])
    ((exp, specs),) = plans[0]
    assert {(s.option("controller"), s.option("pattern")) for s in specs} == {("pox", "heavy")}
    record = json.loads((tmp_path / "results" / PRR / RECORD).read_text())
    assert record["experiment"] == PRR and record["options"] == exp.chosen
    assert (record["options"]["controller"], record["options"]["pattern"]) == ("pox", "heavy")
    machine(monkeypatch, pox=False)
    rebuilt = as_recorded(PrrFig2(None), tmp_path / "results" / PRR)
    assert rebuilt.matrix(quick=True) == specs  # 4 runs, not the default 12 under os-ken
