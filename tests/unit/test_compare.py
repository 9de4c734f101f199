"""`repro compare A B` on hand-built results: a pass against itself and its bundle agrees; a
claim that flips, a metric that moves beyond its trials' spread, a pass made by other code
(other run ids, the same specs), another machine; and every way two passes cannot be
compared exits 2 in one line."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.publish.compare import (EXIT_DIFFERENT, EXIT_SAME, EXIT_UNCOMPARABLE, CompareError,
                                 compare_paths, emit)
from app.publish.compare_page import write_page
from app.publish.noise import (MIN_PAIRED_CELLS, NOT_JUDGED, PREDICTION, WELCH, WILCOXON,
                               judge_cell, judge_metric)
from app.publish.pack import pack
from core.paths import ProjectPaths
from core.results import ExperimentStore
from tests.unit.fake_runs import add_logged_run, trace_set, write_trace
from tests.unit.test_pack import rewrite
from tests.unit.test_verify import EXP, RISING

PATHS = ProjectPaths(results_override=Path("/nonexistent-results"))
# Delay falls with the window from W=20 on: warm-up A's delay-rises fails.
FALLING = {**RISING, 20: (3, 150), 50: (2, 90), 100: (1, 60)}


def build(results: Path, shape=RISING, trials: int = 1, wobble: float = 0.0,
          delay_scale: float = 1.0) -> Path:
    """Warm-up A's quick matrix; trial t's delay is scaled by 1 + wobble * (t - 2)."""
    store = ExperimentStore(results / EXP.name)
    for spec in EXP.matrix(quick=True, trials=trials):
        every, delay = shape[spec.param("window")]
        delay = round(delay * delay_scale * (1 + wobble * (spec.trial - 2)))
        add_logged_run(store, spec, every, delay)
    return results


def run_compare(a: Path, b: Path):
    comparison = compare_paths(a, b, [EXP], PATHS)
    out = io.StringIO()
    code = emit(comparison, False, out)
    return code, out.getvalue(), comparison


def packed(results: Path, out: Path) -> Path:
    traces = out.parent / "traces"
    write_trace(traces, "Verizon-LTE-short.down", [1, 2, 3])
    write_trace(traces, "Verizon-LTE-short.up", [1, 2, 3])
    path = pack(ProjectPaths(results_override=results), [EXP], trace_set(traces), out,
                stream=io.StringIO())
    assert path is not None
    return path


def test_a_pass_agrees_with_itself_and_with_its_bundle(tmp_path):
    a = build(tmp_path / "a")
    code, text, c = run_compare(a, a)
    assert code == EXIT_SAME, text
    assert "the passes agree: 0 of 15 claims changed verdict" in text
    assert all(not f.differs for f in c.environment)
    code, text, c = run_compare(a, packed(a, tmp_path / "a.tar.xz"))
    assert code == EXIT_SAME, text
    assert "(bundle, 6 finished runs; packed " in text
    # One line per claim, each with both sides' values.
    claim_lines = [line for line in text.splitlines() if line.startswith("  same    ")]
    assert len(claim_lines) == 15
    assert any("throughput-rises" in line and "A: 6 points" in line and "| B: 6 points" in line
               for line in claim_lines)


def test_a_claim_that_flips_is_named_first_and_exits_1(tmp_path):
    code, text, c = run_compare(build(tmp_path / "a"), build(tmp_path / "b", FALLING))
    assert code == EXIT_DIFFERENT
    changed = [p.id for p in c.changed_claims()]
    assert changed == ["delay-rises"]
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("  CHANGED"))
    assert "delay-rises" in lines[first] and "PASS -> FAIL" in lines[first]
    assert first < next(i for i, line in enumerate(lines) if line.startswith("  same    "))


def test_trials_judge_a_move_by_welchs_test(tmp_path):
    """Three trials a side: a 40% higher delay with a 2% spread moved; the same delays with
    their spread did not."""
    a = build(tmp_path / "a", trials=3, wobble=0.02)
    code, text, c = run_compare(a, build(tmp_path / "same", trials=3, wobble=0.02))
    assert code == EXIT_SAME, text
    judged = [m for e in c.experiments for m in e.metrics if m.metric == "p95_signal_delay_ms"]
    assert judged and all(m.judgement.test == WELCH for m in judged)
    code, text, c = run_compare(a, build(tmp_path / "slower", trials=3, wobble=0.02,
                                         delay_scale=1.4))
    assert code == EXIT_DIFFERENT
    moved = [m for m in c.moved() if m.metric == "p95_signal_delay_ms"]
    assert len(moved) == 6 and all(m.judgement.p is not None and m.judgement.p < 0.01
                                   for m in moved)
    assert "MOVED p95_signal_delay_ms" in text and "Welch's t-test p = " in text


def test_one_trial_a_side_is_shown_not_judged(tmp_path):
    code, text, c = run_compare(build(tmp_path / "a"), build(tmp_path / "b", delay_scale=1.1))
    metrics = [m for e in c.experiments for m in e.metrics]
    assert metrics and all(m.judgement.test == NOT_JUDGED for m in metrics)
    assert "largest change not judged: p95_signal_delay_ms" in text
    assert "one trial a side: no spread to judge by" in text


def test_runs_made_by_other_code_are_matched_by_spec(tmp_path):
    """Another code version gives every run another id (folder name); the specs match."""
    a = build(tmp_path / "a")
    b = build(tmp_path / "b")
    runs = b / EXP.name / "runs"
    for run in list(runs.iterdir()):
        run.rename(runs / (run.name[:-10] + "0123456789"))
    code, text, c = run_compare(a, b)
    assert code == EXIT_SAME, text
    e = c.experiments[0]
    assert (e.cells_both, e.only_a, e.only_b) == (6, [], [])


def test_another_machine_is_named_fact_by_fact(tmp_path):
    a, b = build(tmp_path / "a"), build(tmp_path / "b")
    for meta_path in (b / EXP.name / "runs").glob("*/meta.json"):
        meta = json.loads(meta_path.read_text())
        meta["environment"].update(kernel="6.12-other", packages={"mininet": "2.3.1"})
        meta_path.write_text(json.dumps(meta))
    code, text, c = run_compare(a, b)
    facts = {f.name: f for f in c.environment}
    assert facts["kernel"].differs and facts["kernel"].b == "6.12-other"
    assert facts["package mininet"].a == "-" and facts["package mininet"].b == "2.3.1"
    assert not facts["distribution"].differs
    assert "differs: kernel: A 6.1-test | B 6.12-other" in text
    assert code == EXIT_SAME  # the machines differ, the numbers and claims do not


def test_the_page_holds_every_claim_and_the_verdict(tmp_path):
    _, _, c = run_compare(build(tmp_path / "a"), build(tmp_path / "b", FALLING))
    page = write_page(c, tmp_path / "out" / "compare.html").read_text()
    assert "delay-rises" in page and "the passes differ" in page
    assert 'class="changed"' in page and "Welch" in page


@pytest.mark.parametrize("make, message", [
    (lambda t: t / "gone.tar.xz", "no such results folder or bundle"),
    (lambda t: _write(t / "junk.tar.xz", b"junk"), "not a readable bundle"),
    (lambda t: (t / "empty").mkdir() or t / "empty", "no finished runs"),
])
def test_what_cannot_be_compared_exits_2_in_one_line(tmp_path, capsys, make, message):
    a = build(tmp_path / "a")
    b = make(tmp_path)
    with pytest.raises(CompareError, match=message):
        compare_paths(a, b, [EXP], PATHS)
    assert main(["compare", str(a), str(b), "--no-html"]) == EXIT_UNCOMPARABLE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cannot compare: ") and message in err
    assert "Traceback" not in err


def test_a_corrupt_bundle_exits_2(tmp_path, capsys):
    a = build(tmp_path / "a")
    bundle = packed(a, tmp_path / "a.tar.xz")

    def flip(name: str, data: bytes) -> bytes:
        return data.replace(b"0", b"1", 1) if name.endswith("data.log") else data

    bad = rewrite(bundle, tmp_path / "bad.tar.xz", flip)
    with pytest.raises(CompareError, match="a corrupt bundle: 6 files do not match"):
        compare_paths(a, bad, [EXP], PATHS)
    truncated = _write(tmp_path / "cut.tar.xz", bundle.read_bytes()[:4000])
    assert main(["compare", str(a), str(truncated), "--no-html"]) == EXIT_UNCOMPARABLE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged" in err


def test_no_experiment_on_both_sides_cannot_be_compared(tmp_path):
    a = build(tmp_path / "a")
    b = tmp_path / "b"
    (b / "other-experiment" / "runs").mkdir(parents=True)
    with pytest.raises(CompareError):
        compare_paths(a, b, [EXP], PATHS)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ----------------------------------------------------------------------------- the tests


def test_welch_moves_only_beyond_the_trials_spread():
    assert judge_cell([1.0, 1.1, 0.9], [1.5, 1.6, 1.55]).moved is True
    assert judge_cell([1.0, 1.1, 0.9], [1.05, 0.95, 1.0]).moved is False
    alike = judge_cell([7, 7, 7], [4, 4, 4])
    assert alike.test == WELCH and alike.moved is True and "every trial alike" in alike.why
    assert judge_cell([7, 7], [7, 7]).moved is False


def test_one_trial_against_several_uses_their_prediction_interval():
    inside = judge_cell([1.0, 1.1, 0.9], [1.05])
    assert inside.test == PREDICTION and inside.moved is False
    assert "B's one trial 1.05 inside" in inside.why
    outside = judge_cell([5.0], [1.0, 1.01, 0.99, 1.0])
    assert outside.moved is True and "A's one trial 5 outside" in outside.why
    assert judge_cell([1.0], [1.3]).test == NOT_JUDGED


def test_a_metric_over_cells_moves_when_its_cells_move_together():
    values = [float(v) for v in range(10, 10 + 3 * MIN_PAIRED_CELLS, 3)]
    noisy = [v * (1.01 if i % 2 else 0.99) for i, v in enumerate(values)]
    assert judge_metric(values, noisy).moved is False
    slower = [v * 1.1 for v in noisy]
    moved = judge_metric(values, slower)
    assert moved.test == WILCOXON and moved.moved is True and "+10" in moved.why
    few = judge_metric(values[:MIN_PAIRED_CELLS - 1], slower[:MIN_PAIRED_CELLS - 1])
    assert few.test == NOT_JUDGED and "needs" in few.why


def test_an_experiment_on_one_side_only_is_named_not_compared(tmp_path):
    from experiments.contest.warmup_b import ContestWarmupB
    other = ContestWarmupB(EXP.traces)
    a = build(tmp_path / "a")
    store = ExperimentStore(a / other.name)
    for spec in other.matrix(quick=True):
        add_logged_run(store, spec, 4, 40)
    comparison = compare_paths(a, build(tmp_path / "b"), [EXP, other], PATHS)
    assert [e.name for e in comparison.experiments] == [EXP.name]
    assert f"not compared, only in A: {other.name}" in comparison.notes
    assert comparison.exit_code() == EXIT_SAME
    assert "on the 1 experiments both hold" in comparison.summary()


def test_a_metric_mostly_unchanged_is_not_judged_on_its_few_changed_cells():
    same = [float(v) for v in range(1, 13)]
    two_moved = same[:10] + [v * 1.5 for v in same[10:]]
    verdict = judge_metric(same, two_moved)
    assert verdict.test == NOT_JUDGED and "10 of 12 cells unchanged" in verdict.why


def test_the_command_prints_json_and_writes_the_page(tmp_path, capsys):
    a = build(tmp_path / "a")
    page = tmp_path / "out" / "compare.html"
    assert main(["compare", str(a), str(a), "--json", "--html", str(page)]) == EXIT_SAME
    printed = json.loads(capsys.readouterr().out)
    assert printed["exit"] == EXIT_SAME and printed["tests"].startswith("a cell moved")
    claims = printed["experiments"][0]["claims"]
    assert len(claims) == 15 and not any(c["changed"] for c in claims)
    assert page.is_file() and "the passes agree" in page.read_text()


def test_a_summary_row_over_several_runs_is_matched_by_what_it_summarizes():
    """A study's minimum over the runs that finished: the same cell on both sides even when
    one side has a run fewer behind it."""
    from app.publish.compare import _cells
    from app.publish.verify import ExperimentVerdict
    from analysis.summary import RunRecord
    specs = EXP.matrix(quick=True)
    records = [RunRecord(s, {}, {}, Path(f"/x/{s.dirname()}")) for s in specs]
    names = [r.path.name for r in records]

    def side(runs):
        v = ExperimentVerdict(EXP.name, EXP.title, True, records=records)
        v.rows = [{"study": "min-buffer", "target": 0.98, "runs": " ".join(runs), "m": 1.0}]
        return _cells(v)
    assert set(side(names[:4])) == set(side(names[:3]))


def test_how_many_runs_said_a_fact_does_not_make_it_differ():
    from app.publish.compare_env import Fact
    assert not Fact("cubic served by", "builtin (cubic) (7)", "builtin (cubic) (5)").differs
    assert Fact("kernel", "6.1 (3), 6.12 (1)", "6.1").differs
