"""`./repro run all` prints every experiment's share and the total before it starts."""
from __future__ import annotations

from pathlib import Path

from core.cli import _print_overall_plan
from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.runner import PER_RUN_OVERHEAD_S, MatrixRunner, format_duration
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
    runner = MatrixRunner(paths, traces, jobs=3)
    _print_overall_plan([(a, a.specs), (b, b.specs)], runner, traces)
    out = capsys.readouterr().out.splitlines()
    # 60 s of trace + the per-run overhead; a has 3 runs left, b 3, all through 3 side by side.
    per_run = 60 + PER_RUN_OVERHEAD_S
    assert out[0] == "plan: every experiment, through one pool of 3 runs side by side:"
    assert out[1] == f"  a: 3 of 4 runs to do, ~{format_duration(3 * per_run / 3)}"
    assert out[2] == f"  b: 3 of 3 runs to do, ~{format_duration(3 * per_run / 3)}"
    assert out[3] == f"  expected in all: ~{format_duration(6 * per_run / 3)}"
