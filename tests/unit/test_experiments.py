"""Experiment matrices keep the promises the docs make about them."""
from pathlib import Path

from app.runner import PER_RUN_OVERHEAD_S
from core.traces import TraceSet
from experiments.contest.warmup_a import ContestWarmupA
from experiments.registry import all_experiments

NO_TRACES = TraceSet([], Path("/nonexistent"), manifest={})  # its matrix needs no trace


def warmup() -> ContestWarmupA:
    return ContestWarmupA(NO_TRACES)


def test_warmup_full_matrix_is_the_contest_sweep() -> None:
    windows = [s.param("window") for s in warmup().matrix(quick=False)]
    assert windows == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 35, 40, 45, 50, 75,
                       100, 125, 150, 175, 200, 250, 350]
    assert all(s.once and s.delay_ms == 20 and s.queue == "infinite"
               for s in warmup().matrix(quick=False))


def test_warmup_quick_fits_in_five_minutes() -> None:
    specs = warmup().matrix(quick=True)
    assert sum((s.duration_s or 0.0) + PER_RUN_OVERHEAD_S for s in specs) <= 300


def test_trials_repeat_every_run() -> None:
    one = warmup().matrix(quick=True)
    three = warmup().matrix(quick=True, trials=3)
    assert len(three) == 3 * len(one)
    assert len({s.run_id() for s in three}) == len(three)


def test_experiment_names_are_unique() -> None:
    names = [e.name for e in all_experiments(NO_TRACES)]
    assert len(names) == len(set(names))
