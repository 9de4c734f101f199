"""Planned runs paired with their results or with why they have none."""
from __future__ import annotations

from analysis.coverage import NOT_RUN, coverage, missing_notes, short_reason
from core.results import ExperimentStore
from core.runspec import RunSpec
from tests.unit.fake_runs import add_done, add_failed


def spec(scheme: str, quick: bool = True, trial: int = 1) -> RunSpec:
    return RunSpec(experiment="x", scheme=scheme, data_trace="t.down", ack_trace="t.up",
                   duration_s=60.0 if quick else None, trial=trial)


def matrix(quick: bool, trials: int) -> list[RunSpec]:
    return [spec(s, quick, t) for t in range(1, trials + 1) for s in ("sprout", "bic", "vegas")]


def test_done_failed_and_not_run(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    add_done(store, spec("sprout"), throughput_mbps=1.0)
    add_failed(store, spec("bic"), "CcUnavailable: old reason", when=1.0)
    add_failed(store, spec("bic"), "CcUnavailable: no provider for bic", when=2.0)
    cov = coverage(store, matrix)
    assert cov.quick and cov.trials == 1
    cells = {c.spec.scheme: c for c in cov.cells}
    assert cells["sprout"].done and cells["sprout"].reason == ""
    assert not cells["bic"].done and cells["bic"].reason == "CcUnavailable: no provider for bic"
    assert cells["vegas"].reason == NOT_RUN
    assert [r.spec.scheme for r in cov.records()] == ["sprout"]
    assert [c.spec.scheme for c in cov.missing()] == ["bic", "vegas"]


def test_a_finished_rerun_wins_over_an_earlier_failure(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    add_failed(store, spec("vegas"), "RuntimeError: flaky")
    add_done(store, spec("vegas"), throughput_mbps=1.0)
    cell = next(c for c in coverage(store, matrix).cells if c.spec.scheme == "vegas")
    assert cell.done and cell.reason == ""


def test_full_mode_when_any_full_run_finished(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    add_done(store, spec("sprout", quick=True), throughput_mbps=1.0)
    assert coverage(store, matrix).quick
    add_done(store, spec("bic", quick=False), throughput_mbps=1.0)
    cov = coverage(store, matrix)
    assert not cov.quick and [r.spec.scheme for r in cov.records()] == ["bic"]


def test_failures_alone_choose_their_mode(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    add_failed(store, spec("bic", quick=False), "CcUnavailable: no bic")
    assert not coverage(store, matrix).quick


def test_trials_up_to_the_highest_on_record(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    add_done(store, spec("sprout", trial=3), throughput_mbps=1.0)
    cov = coverage(store, matrix)
    assert cov.trials == 3 and len(cov.cells) == 9


def test_missing_variant_is_reported_never_dropped(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    for t in (1, 2):
        add_done(store, spec("sprout", trial=t), throughput_mbps=1.0)
        add_failed(store, spec("bic", trial=t), "CcUnavailable: no provider for bic")
    add_done(store, spec("vegas", trial=1), throughput_mbps=1.0)
    add_failed(store, spec("vegas", trial=2), "RuntimeError: sender still running")
    cov = coverage(store, matrix)
    assert cov.absent() == {"bic": ["CcUnavailable: no provider for bic"]}
    assert missing_notes(cov.cells, lambda s: s.scheme.upper()) == [
        "BIC: no result (CcUnavailable: no provider for bic)",
        "VEGAS: 1 of 2 runs missing (RuntimeError: sender still running)"]


def test_short_reason() -> None:
    assert short_reason("first line\nsecond") == "first line"
    assert short_reason("x" * 200, width=10) == "xxxxxxx..."
    assert short_reason("") == "unknown reason"


def test_a_quick_matrix_inside_the_full_one_stays_quick_until_a_full_only_run(tmp_path) -> None:
    """When the quick pass is a subset of the full matrix (prr-fig2: 32 KB only), its runs
    are the quick record, not a full one with half its runs missing."""
    def nested(quick: bool, trials: int) -> list[RunSpec]:
        schemes = ("sprout",) if quick else ("sprout", "vegas")
        return [spec(s, False, t) for t in range(1, trials + 1) for s in schemes]
    store = ExperimentStore(tmp_path / "x")
    add_done(store, spec("sprout", quick=False), throughput_mbps=1.0)
    cov = coverage(store, nested)
    assert cov.quick and len(cov.cells) == 1 and not cov.missing()
    add_done(store, spec("vegas", quick=False), throughput_mbps=1.0)
    assert not coverage(store, nested).quick


def test_one_shared_full_run_does_not_make_a_finished_quick_pass_full(tmp_path) -> None:
    """Another experiment's whole-trace run, shared into this store, is one full cell: the
    finished quick pass stays the record until the full matrix has as many runs done."""
    store = ExperimentStore(tmp_path / "x")
    for scheme in ("sprout", "bic", "vegas"):
        add_done(store, spec(scheme, quick=True), throughput_mbps=1.0)
    add_done(store, spec("sprout", quick=False), throughput_mbps=1.0)
    assert coverage(store, matrix).quick
    for scheme in ("bic", "vegas"):
        add_done(store, spec(scheme, quick=False), throughput_mbps=1.0)
    assert not coverage(store, matrix).quick


def test_an_invalid_finished_run_is_no_result_and_says_why(tmp_path) -> None:
    store = ExperimentStore(tmp_path / "x")
    add_failed(store, spec("vegas"), "RuntimeError: flaky", when=1.0)
    add_done(store, spec("vegas"), throughput_mbps=1.0, window_valid=False,
             window_verdict="absurd kernel window in the reverse flow: ssthresh 2183148773")
    add_done(store, spec("sprout"), throughput_mbps=1.0, window_valid=None)
    cov = coverage(store, matrix)
    cells = {c.spec.scheme: c for c in cov.cells}
    assert not cells["vegas"].done
    assert cells["vegas"].reason == ("invalid run: absurd kernel window in the reverse flow: "
                                     "ssthresh 2183148773")
    assert cells["sprout"].done  # unchecked (no probe) is not invalid
    assert [r.spec.scheme for r in cov.records()] == ["sprout"]
    assert [r.spec.scheme for r in cov.runs_on_record()] == ["sprout", "vegas"]


def test_a_quick_pass_whose_runs_were_all_invalid_stays_quick(tmp_path) -> None:
    """BBR's quick pass shares runs with the full matrix: when every quick run finished
    invalid, the record is still the quick pass, not a full one of which none was run."""
    def nested(quick: bool, trials: int) -> list[RunSpec]:
        schemes = ("sprout",) if quick else ("sprout", "vegas")
        return [spec(s, False, t) for t in range(1, trials + 1) for s in schemes]
    store = ExperimentStore(tmp_path / "x")
    add_done(store, spec("sprout", quick=False), throughput_mbps=1.0, window_valid=False,
             window_verdict="window-limited")
    cov = coverage(store, nested)
    assert cov.quick and not cov.records()
    assert [r.spec.scheme for r in cov.runs_on_record()] == ["sprout"]
    add_failed(store, spec("vegas", quick=False), "RuntimeError: flaky")
    assert not coverage(store, nested).quick  # a run only the full matrix plans was tried
