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

    def __init__(self, name: str, trace: Path, runs: int) -> None:
        self.name = name
        self.specs = [RunSpec(experiment=name, scheme="fixed-window", data_trace=str(trace),
                              ack_trace=str(trace), duration_s=60.0, trial=t)
                      for t in range(1, runs + 1)]

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return self.specs

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        return []


def test_each_experiment_then_the_total(tmp_path, capsys) -> None:
    trace = write_trace(tmp_path / "traces", "t.trace", [1])
    paths = ProjectPaths(results_override=tmp_path / "results")
    traces = trace_set(tmp_path / "traces")
    other = write_trace(tmp_path / "traces", "u.trace", [1])  # runs of their own, not a's
    a, b = _Sweep("a", trace, 4), _Sweep("b", other, 3)
    add_done(ExperimentStore(paths.results_dir / "a"), a.specs[0])
    runner = MatrixRunner(paths, traces, jobs=3, out=sys.stdout)
    ran = []
    runner._run_child = lambda name, spec: ran.append((name, spec.trial)) or (True, "", False)
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
    runner._run_child = lambda name, spec: (True, "", False)
    a = _Sweep("a", trace, 2)
    runner.run_plan([(a, a.specs)])
    assert not any("in all" in line for line in capsys.readouterr().out.splitlines())
