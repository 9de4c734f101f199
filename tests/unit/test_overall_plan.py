"""`./repro run all` prints every experiment's share and the total before it starts."""
from __future__ import annotations

import sys
from pathlib import Path

from core.paths import ProjectPaths
from core.results import ExperimentStore
from app.runner import PER_RUN_OVERHEAD_S, MatrixRunner, format_duration
from core.runspec import RunSpec
from experiments.base import Experiment
from tests.unit.fake_runs import add_done, trace_set, write_trace


class _Sweep(Experiment):
    title = "a sweep"

    def __init__(self, name: str, trace: Path, runs: int, delay_ms: int = 20,
                 seconds: float = 60.0) -> None:
        self.name = name
        self.specs = [RunSpec(experiment=name, scheme="fixed-window", data_trace=str(trace),
                              ack_trace=str(trace), duration_s=seconds, trial=t,
                              delay_ms=delay_ms)
                      for t in range(1, runs + 1)]

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return self.specs

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        return []


def test_each_experiment_then_the_total(tmp_path, capsys) -> None:
    trace = write_trace(tmp_path / "traces", "t.trace", [1])
    paths = ProjectPaths(results_override=tmp_path / "results")
    traces = trace_set(tmp_path / "traces")
    a, b = _Sweep("a", trace, 4), _Sweep("b", trace, 3, delay_ms=30)
    add_done(ExperimentStore(paths.results_dir / "a"), a.specs[0])
    runner = MatrixRunner(paths, traces, jobs=3, out=sys.stdout)
    ran: list[tuple[str, int]] = []

    def child(name: str, spec: RunSpec) -> tuple[bool, str, bool]:
        ran.append((name, spec.trial))
        return True, "", False

    setattr(runner, "_run_child", child)
    results = runner.run_plan([(a, a.specs), (b, b.specs)])
    out = capsys.readouterr().out.splitlines()
    # 60 s of trace + the per-run overhead; a has 3 runs left, b 3, all through 3 side by side.
    per_run = 60 + PER_RUN_OVERHEAD_S
    assert out[0] == (f"plan: a: 4 runs, 1 already done, 3 to run with --jobs 3; expected "
                      f"{format_duration(3 * per_run / 3)}")
    assert out[1] == (f"plan: b: 3 runs, 0 already done, 3 to run with --jobs 3; expected "
                      f"{format_duration(3 * per_run / 3)}")
    assert out[2] == (f"plan: in all, 6 runs through one pool of 3 side by side; expected "
                      f"{format_duration(6 * per_run / 3)}")
    assert sorted(ran) == [("a", 2), ("a", 3), ("a", 4), ("b", 1), ("b", 2), ("b", 3)]
    assert len(results["a"].succeeded) == 3 and results["a"].skipped == 1


def test_one_experiment_has_no_total_line(tmp_path, capsys) -> None:
    trace = write_trace(tmp_path / "traces", "t.trace", [1])
    paths = ProjectPaths(results_override=tmp_path / "results")
    runner = MatrixRunner(paths, trace_set(tmp_path / "traces"), jobs=2, out=sys.stdout)
    setattr(runner, "_run_child", lambda name, spec: (True, "", False))
    a = _Sweep("a", trace, 2)
    runner.run_plan([(a, a.specs)])
    assert not any("in all" in line for line in capsys.readouterr().out.splitlines())


def test_the_longest_runs_start_first_and_the_plan_counts_the_longest(tmp_path, capsys) -> None:
    """Six 30-s runs and one 300-s run, 3 side by side: in the plan's order the long run
    would start last and end at 60 + 300 s; started first, the short ones fill the other
    two slots beside it and the pass takes the long run's 300 s."""
    trace = write_trace(tmp_path / "traces", "t.trace", [1])
    paths = ProjectPaths(results_override=tmp_path / "results")
    runner = MatrixRunner(paths, trace_set(tmp_path / "traces"), jobs=3, out=sys.stdout)
    started: list[str] = []

    def child(name: str, spec: RunSpec) -> tuple[bool, str, bool]:
        started.append(name)
        return True, "", False

    setattr(runner, "_run_child", child)
    short, long = _Sweep("short", trace, 6, seconds=30.0), _Sweep("long", trace, 1, seconds=300.0)
    runner.run_plan([(short, short.specs), (long, long.specs)])
    assert started[0] == "long"
    out = capsys.readouterr().out.splitlines()
    assert out[2] == (f"plan: in all, 7 runs through one pool of 3 side by side; expected "
                      f"{format_duration(300 + PER_RUN_OVERHEAD_S)}")
