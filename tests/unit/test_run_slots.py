"""A run kind can say how many of the pool's slots a run takes (core/run_kind.py `slots`):
the runner starts runs in order when their slots are free, a run that asks for more than
the pool has runs alone, the plan and the ETA simulate the same, and a cluster run asks
for its slots as worker resources, capped at the largest worker."""
from __future__ import annotations

import random
import sys
import threading
import time
from pathlib import Path

import pytest

from app.cluster.backend import requirements, within_workers
from app.runner import MatrixRunner, format_duration, pass_s, run_slots, start_order
from core.paths import ProjectPaths
from core.progress import ProgressReporter, makespan_s
from core.results import ExperimentStore
from core.run_kind import WHOLE_POOL
from core.runspec import RunSpec, make_params
from core.worker_resources import RUNS
from experiments.base import Experiment
from runkinds.registry import SHARED_BOTTLENECK, TRACE_PATH
from tests.unit.fake_runs import trace_set, write_trace


def bottleneck_spec(trial: int, seconds: float = 20.0) -> RunSpec:
    return RunSpec(experiment="heavy", scheme="dctcp", data_trace="rate:100",
                   ack_trace="rate:100", delay_ms=0, queue="ecn:k=20,packets=425",
                   duration_s=seconds, trial=trial,
                   options=make_params(topology=SHARED_BOTTLENECK.name, flows=2, rtt_ms=1,
                                       marking="emulator", warmup_s=2.0))


class _Plan(Experiment):
    title = "a plan"

    def __init__(self, name: str, specs: list[RunSpec]) -> None:
        self.name = name
        self.specs = specs

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return self.specs

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        return []


# ------------------------------------------------------------------ the simulation

def test_one_slot_each_is_the_plain_pool() -> None:
    rng = random.Random(3)
    for _ in range(50):
        weights = [rng.uniform(1, 100) for _ in range(rng.randint(1, 30))]
        jobs = rng.randint(1, 12)
        assert makespan_s(weights, jobs, slots=[1] * len(weights)) == \
            pytest.approx(makespan_s(weights, jobs))


def test_a_run_taking_the_pool_waits_for_it_to_drain_and_holds_the_rest_back() -> None:
    # Two slots: a 5-s run, then a 10-s run that needs both (it waits until 5 s), then a
    # 5-s run that may not pass it (it starts at 15 s).
    assert makespan_s([5, 10, 5], 2, slots=[1, 2, 1]) == pytest.approx(20)
    # The same runs, the heavy one first: it runs alone 0-10, the others side by side after.
    assert makespan_s([10, 5, 5], 2, slots=[2, 1, 1]) == pytest.approx(15)
    # Asking for more than the pool has takes the whole pool.
    assert makespan_s([10, 5, 5], 2, slots=[WHOLE_POOL, 1, 1]) == pytest.approx(15)


def test_busy_slots_delay_a_run_that_needs_them_all() -> None:
    # Three slots, one busy for 7 s more: a run needing all three starts at 7.
    assert makespan_s([4], 3, busy=[7.0], slots=[3]) == pytest.approx(11)
    assert makespan_s([4], 3, busy=[7.0], slots=[1]) == pytest.approx(7)


def test_the_pool_starts_the_heaviest_runs_first_then_the_longest() -> None:
    runs = [(60.0, 1), (20.0, 13), (300.0, 1), (25.0, 13)]
    assert sorted(runs, key=start_order) == [(25.0, 13), (20.0, 13), (300.0, 1), (60.0, 1)]
    # Alone first, then the rest side by side: 25 + 20 + 300.
    assert pass_s(runs, 13) == pytest.approx(345)


def test_a_slot_count_is_clamped_to_the_pool() -> None:
    assert run_slots(bottleneck_spec(1), 13) == 13
    assert run_slots(bottleneck_spec(1), 1) == 1
    plain = RunSpec(experiment="x", scheme="cubic", data_trace="rate:12", ack_trace="rate:12",
                    duration_s=10)
    assert TRACE_PATH.slots(plain) == 1 and run_slots(plain, 13) == 1


def test_a_trace_path_above_20_mbps_fixed_goes_alone() -> None:
    def spec(data: str, ack: str, **options: object) -> RunSpec:
        return RunSpec(experiment="x", scheme="bbr", data_trace=data, ack_trace=ack,
                       duration_s=30, options=make_params(**options))
    assert TRACE_PATH.slots(spec("rate:100", "rate:100")) == WHOLE_POOL
    assert TRACE_PATH.slots(spec("rate:10", "rate:100")) == WHOLE_POOL  # either direction
    assert TRACE_PATH.slots(spec("rate:20", "rate:20")) == 1
    assert TRACE_PATH.slots(spec("rate:10", "rate:10", rate_steps="10:20,20:10")) == 1
    assert TRACE_PATH.slots(spec("rate:10", "rate:10", rate_steps="10:50")) == WHOLE_POOL
    assert TRACE_PATH.slots(spec("Verizon-LTE-short.up", "Verizon-LTE-short.down")) == 1
    # Any rate goes alone when its spec asks.
    assert TRACE_PATH.slots(spec("rate:10", "rate:10", alone=True)) == WHOLE_POOL


def test_the_eta_counts_a_running_run_that_holds_the_whole_pool() -> None:
    now = [0.0]
    reporter = ProgressReporter([30.0, 10.0, 10.0], jobs=2, out=open("/dev/null", "w"),
                                clock=lambda: now[0], slots=[2, 1, 1])
    reporter.start("heavy", 30.0, slots=2)
    now[0] = 10.0
    # 20 s left of the heavy run on both slots, then the two light ones side by side.
    assert reporter.eta_s() == pytest.approx(30.0)


# ------------------------------------------------------------------ the runner

def _runner(tmp_path: Path, jobs: int) -> tuple[MatrixRunner, list[tuple[str, str, int]]]:
    """A runner whose children sleep a little and record when they start and end."""
    trace = write_trace(tmp_path / "traces", "t.trace", [1])
    paths = ProjectPaths(results_override=tmp_path / "results")
    runner = MatrixRunner(paths, trace_set(trace.parent), jobs=jobs, out=sys.stdout)
    events: list[tuple[str, str, int]] = []
    lock = threading.Lock()

    def child(name: str, spec: RunSpec) -> tuple[bool, str, bool]:
        heavy = dict(spec.options).get("topology") == SHARED_BOTTLENECK.name
        kind = "heavy" if heavy else "light"
        with lock:
            events.append(("start", kind, spec.trial))
        time.sleep(0.05)
        with lock:
            events.append(("end", kind, spec.trial))
        return True, "", False

    setattr(runner, "_run_child", child)
    return runner, events


def _light(trace: Path, name: str, n: int) -> list[RunSpec]:
    return [RunSpec(experiment=name, scheme="fixed-window", data_trace=str(trace),
                    ack_trace=str(trace), duration_s=30.0, trial=t) for t in range(1, n + 1)]


def test_a_whole_pool_run_never_runs_beside_another(tmp_path: Path, capsys) -> None:
    runner, events = _runner(tmp_path, jobs=4)
    trace = tmp_path / "traces" / "t.trace"
    light = _Plan("light", _light(trace, "light", 8))
    heavy = _Plan("heavy", [bottleneck_spec(t) for t in (1, 2, 3)])
    results = runner.run_plan([(light, light.specs), (heavy, heavy.specs)])
    assert len(results["light"].succeeded) == 8 and len(results["heavy"].succeeded) == 3
    running: dict[tuple[str, int], bool] = {}
    for what, kind, trial in events:
        if what == "start":
            others = [k for k in running if running[k]]
            if kind == "heavy":
                assert not others, f"heavy run {trial} started beside {others}"
            else:
                assert not any(k[0] == "heavy" for k in others), \
                    f"light run {trial} started beside a heavy run"
            running[(kind, trial)] = True
        else:
            running[(kind, trial)] = False
    # The heavy runs go first, one after the other; then the light ones fill the pool.
    assert [k for w, k, _ in events[:6]] == ["heavy"] * 6
    out = capsys.readouterr().out
    assert "3 alone (each takes the whole pool)" in out


def test_the_plan_line_simulates_the_heavy_runs_alone(tmp_path: Path, capsys) -> None:
    runner, _ = _runner(tmp_path, jobs=4)
    heavy = _Plan("heavy", [bottleneck_spec(t, seconds=20.0) for t in (1, 2)])
    runner.run_plan([(heavy, heavy.specs)])
    from app.runner import run_estimate_s
    each = run_estimate_s(heavy.specs[0], runner.traces)
    line = capsys.readouterr().out.splitlines()[0]
    assert line.endswith(f"expected {format_duration(2 * each)}"), line


def test_a_cluster_run_asks_for_its_slots_up_to_the_largest_worker() -> None:
    traces = trace_set(Path("/nonexistent"))
    needs, _ = requirements(bottleneck_spec(1), traces)
    assert needs[RUNS] == WHOLE_POOL
    workers = {"a": {RUNS: 13.0}, "b": {RUNS: 4.0}}
    assert within_workers(needs, workers)[RUNS] == 13.0
    light, _ = requirements(RunSpec(experiment="x", scheme="cubic", data_trace="rate:12",
                                    ack_trace="rate:12", duration_s=10), traces)
    assert within_workers(light, workers)[RUNS] == 1
