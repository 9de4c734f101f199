"""`./repro run all` prints every experiment's share and the total before it starts."""
from __future__ import annotations

from pathlib import Path

from core.cli import _print_overall_plan
from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.runner import MatrixRunner
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
    a, b = _Sweep("a", trace, 4), _Sweep("b", trace, 3)
    add_done(ExperimentStore(paths.results_dir / "a"), a.specs[0])
    plans = [(a, a.specs, MatrixRunner(paths, traces, jobs=1)),
             (b, b.specs, MatrixRunner(paths, traces, jobs=3))]
    _print_overall_plan(plans, traces)
    out = capsys.readouterr().out.splitlines()
    # 60 s of trace + 6 s of overhead per run: a has 3 left at --jobs 1, b 3 at --jobs 3.
    assert out[1] == "  a: 3 of 4 runs to do with --jobs 1, ~3 min 18 s"
    assert out[2] == "  b: 3 of 3 runs to do with --jobs 3, ~1 min 06 s"
    assert out[3] == "  expected in all: ~4 min 24 s"
