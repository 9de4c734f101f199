"""Raw artifacts are the truth: metrics.json carries the analysis version that computed
it, `./repro report` recomputes stale ones from the logs, and a run whose analysis
raised is kept (committed, error recorded) rather than lost."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runkinds.metrics import VERSION_KEY, is_stale
from app import cli
from app.executor import execute
from app.refresh import refresh
from core.errors import EXIT_FAILED, EXIT_OK
from runkinds.registry import analysis_version_of
from core.paths import ProjectPaths
from core.results import DONE, ExperimentStore, experiment_store, read_json, write_json
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from experiments.contest.warmup_a import ContestWarmupA
from tests.unit.test_metrics import HAND_LOG

SPEC = RunSpec(experiment="contest-warmup-a", scheme="fixed-window",
               data_trace="Verizon-LTE-short.down", ack_trace="Verizon-LTE-short.up",
               duration_s=30.0, params=make_params(window=10))


def _fake_measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                  meta: dict[str, Any]) -> None:
    """What a measurement leaves: the data direction's log, and facts in meta."""
    (out / "data.log").write_bytes(HAND_LOG)
    meta["duration_s"] = spec.duration_s


def _failing_measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                     meta: dict[str, Any]) -> None:
    (out / "data.log").write_bytes(HAND_LOG[:40])
    raise RuntimeError("the emulator died")


def _run(tmp_path: Path, measure: Any = _fake_measure) -> Any:
    paths = ProjectPaths(results_override=tmp_path / "results")
    store = experiment_store(paths.results_dir, SPEC.experiment)
    return store, execute(SPEC, store, paths, TraceSet([tmp_path], tmp_path / "cache", {}),
                          measure=measure)


def test_metrics_carry_the_analysis_version(tmp_path: Path) -> None:
    store, outcome = _run(tmp_path)
    assert outcome.ok and outcome.reason == ""
    metrics = read_json(outcome.path / "metrics.json")
    assert metrics[VERSION_KEY] == analysis_version_of(SPEC)
    assert metrics["throughput_mbps"] == outcome.metrics["throughput_mbps"] > 0
    assert not is_stale(outcome.path)


def test_a_run_whose_analysis_raises_is_committed_and_report_retries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> dict[str, Any]:
        raise ZeroDivisionError("a bug in a metric")

    monkeypatch.setattr("app.executor.stamped_metrics", broken)
    store, outcome = _run(tmp_path)
    assert outcome.ok and outcome.metrics is None
    assert "metrics failed (ZeroDivisionError: a bug in a metric)" in outcome.reason
    assert "./repro report" in outcome.reason
    # The measurement is kept, finished, in its place: not in failed/.
    assert store.is_done(SPEC) and (outcome.path / DONE).is_file()
    assert (outcome.path / "data.log").read_bytes() == HAND_LOG
    assert not (outcome.path / "metrics.json").exists()
    meta = read_json(outcome.path / "meta.json")
    assert meta["analysis_error"]["error"] == "ZeroDivisionError: a bug in a metric"
    assert not store.failed_dir.exists()
    # The analysis is fixed: the report computes the metrics from the kept log.
    monkeypatch.undo()
    done = refresh(store, ContestWarmupA(TraceSet([tmp_path], tmp_path / "cache", {})))
    assert done.recomputed == 1 and done.failed == []
    assert read_json(outcome.path / "metrics.json")[VERSION_KEY] == analysis_version_of(SPEC)


def test_stale_metrics_are_recomputed_once(tmp_path: Path) -> None:
    store, outcome = _run(tmp_path)
    metrics_file = outcome.path / "metrics.json"
    fresh = read_json(metrics_file)
    write_json(metrics_file, dict(fresh, throughput_mbps=-1.0, **{VERSION_KEY: "older"}))
    assert is_stale(outcome.path)
    exp = ContestWarmupA(TraceSet([tmp_path], tmp_path / "cache", {}))
    first = refresh(store, exp)
    assert first.recomputed == 1
    assert read_json(metrics_file) == fresh
    assert refresh(store, exp).recomputed == 0


def test_metrics_that_cannot_be_recomputed_are_kept_and_reported(tmp_path: Path) -> None:
    store, outcome = _run(tmp_path)
    metrics_file = outcome.path / "metrics.json"
    old = dict(read_json(metrics_file), **{VERSION_KEY: "older"})
    write_json(metrics_file, old)
    (outcome.path / "data.log").unlink()
    result = refresh(store, ContestWarmupA(TraceSet([tmp_path], tmp_path / "cache", {})))
    assert result.recomputed == 0 and len(result.failed) == 1
    assert read_json(metrics_file) == old
    assert any("metrics could not be computed" in line for line in result.lines("x"))


def test_a_failed_measurement_keeps_its_artifacts_in_failed(tmp_path: Path) -> None:
    store, outcome = _run(tmp_path, _failing_measure)
    assert not outcome.ok and outcome.reason == "RuntimeError: the emulator died"
    assert outcome.path.parent == store.failed_dir
    assert (outcome.path / "data.log").read_bytes() == HAND_LOG[:40]
    assert not store.is_done(SPEC)


def test_report_says_how_many_it_recomputed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    store, outcome = _run(tmp_path)
    write_json(outcome.path / "metrics.json",
               dict(read_json(outcome.path / "metrics.json"), **{VERSION_KEY: "older"}))
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    assert cli.main(["--traces-dir", str(tmp_path), "report"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "contest-warmup-a: recomputed the metrics of 1 runs from their logs" in out
    assert json.loads((outcome.path / "metrics.json").read_text())[VERSION_KEY] == \
        analysis_version_of(SPEC)
    assert isinstance(store, ExperimentStore)
    # A run whose metrics cannot be computed makes the report's exit status say so.
    write_json(outcome.path / "metrics.json",
               dict(read_json(outcome.path / "metrics.json"), **{VERSION_KEY: "older"}))
    (outcome.path / "data.log").unlink()
    assert cli.main(["--traces-dir", str(tmp_path), "report"]) == EXIT_FAILED
    assert "metrics could not be computed" in capsys.readouterr().out
