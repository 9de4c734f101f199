"""Why a planned run would run (`./repro run --dry-run`), and which finished runs
`--redo-late` and `--redo-invalid` run again."""
from __future__ import annotations

from pathlib import Path

from analysis.summary import RunRecord
from app.run_reasons import (DONE_ALREADY, FORCED, INVALID, LATE, NEW_SPEC, invalid_finder,
                             plan_reasons, why_it_runs)
from core.results import DONE, ExperimentStore, experiment_store, write_json
from core.runspec import RunSpec, make_params


def spec(flows: int) -> RunSpec:
    options = dict(topology="shared-bottleneck", flows=flows, rtt_ms=100, marking="emulator")
    return RunSpec("e", "reno", "rate:50", "rate:50", delay_ms=50,
                   queue="droptail:packets=100", duration_s=30.0, options=make_params(**options))


def finish(store: ExperimentStore, s: RunSpec, **metrics: object) -> Path:
    run_dir = store.run_dir(s)
    run_dir.mkdir(parents=True)
    write_json(run_dir / "metrics.json", metrics)
    write_json(run_dir / "meta.json", {})
    (run_dir / DONE).write_text("")
    return run_dir


def busy(record: RunRecord) -> str:
    """An experiment's rule: a run with under 30% of the CPU idle is no result."""
    idle = record.metrics.get("cpu_idle_pct")
    return f"{idle}% idle" if isinstance(idle, (int, float)) and idle < 30 else ""


def test_finished_runs_are_done_unless_asked_to_redo_them(tmp_path: Path) -> None:
    store = experiment_store(tmp_path, "e")
    finish(store, spec(2), cpu_idle_pct=80, lateness_ok=True)
    finish(store, spec(4), cpu_idle_pct=19, lateness_ok=True)
    finish(store, spec(8), cpu_idle_pct=90, lateness_ok=False)
    invalid = invalid_finder(busy, store)
    reasons = {dict(p.spec.options)["flows"]: p.reason
               for p in plan_reasons([spec(n) for n in (2, 4, 8, 16)], store, {},
                                     redo_late=True, invalid=invalid)}
    assert reasons == {2: DONE_ALREADY, 4: INVALID + "19% idle", 8: LATE, 16: NEW_SPEC}
    # Without the flags the invalid and the late run stay done.
    assert why_it_runs(spec(4), store, {}) == DONE_ALREADY
    assert why_it_runs(spec(8), store, {}) == DONE_ALREADY
    assert why_it_runs(spec(2), store, {}, force=True) == FORCED


def test_an_unreadable_or_unfinished_run_is_not_called_invalid(tmp_path: Path) -> None:
    store = experiment_store(tmp_path, "e")
    run_dir = finish(store, spec(2), cpu_idle_pct=10)
    (run_dir / "metrics.json").write_text("{not json")
    invalid = invalid_finder(busy, store)
    assert invalid(spec(2)) == ""
    assert invalid(spec(4)) == ""  # never run: a new run, not a redo
