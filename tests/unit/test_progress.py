"""The ETA counts the runs in flight: checked on a simulated pool with a fake clock."""
from __future__ import annotations

import heapq
import io
import random

import pytest

from core.progress import ProgressReporter, makespan_s


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def simulate(weights: list[float], jobs: int, slowness: float = 1.0,
             seed: int = 1) -> list[tuple[float, float, float]]:
    """Run `weights` through a pool of `jobs`, each taking weight * slowness (+-20%).

    Returns (time, reported ETA, true time left) at every finished run."""
    rng = random.Random(seed)
    clock = Clock()
    out = io.StringIO()
    reporter = ProgressReporter(weights, jobs=jobs, out=out, clock=clock)
    queue = list(enumerate(weights))
    running: list[tuple[float, int, float]] = []  # (end time, key, weight)
    events: list[tuple[float, float]] = []  # (time, ETA) at each finish
    while queue or running:
        while queue and len(running) < jobs:
            key, weight = queue.pop(0)
            reporter.start(key, weight)
            took = weight * slowness * rng.uniform(0.8, 1.2)
            heapq.heappush(running, (clock.now + took, key, weight))
        end, key, weight = heapq.heappop(running)
        clock.now = end
        reporter.advance(weight, f"run {key}", True, key=key)
        events.append((clock.now, reporter.eta_s()))
    finish = clock.now
    lines = out.getvalue().splitlines()
    assert len(lines) == len(weights) and all("ETA" in line for line in lines)
    return [(t, eta, finish - t) for t, eta in events]


QUICK_PASS = [33.0] * 40 + [63.0] * 60  # a quick pass's mix of 30 s and 60 s runs


def test_first_finished_run_of_ten_side_by_side_gives_the_pass_not_ten_times_it() -> None:
    events = simulate(QUICK_PASS, jobs=10)
    t, eta, left = events[0]
    # Counting only finished runs said elapsed x (total - w) / w: ~10 x the truth here.
    assert eta == pytest.approx(left, rel=0.25), (t, eta, left)


@pytest.mark.parametrize("jobs", [1, 4, 10])
@pytest.mark.parametrize("slowness", [0.7, 1.0, 1.5])
def test_eta_follows_the_time_left_all_along(jobs: int, slowness: float) -> None:
    events = simulate(QUICK_PASS, jobs=jobs, slowness=slowness)
    # Past the first tenth of the pass the ETA is within 25% (or a minute) of the truth,
    # however fast the machine is compared with the plan.
    start = len(events) // 10
    for t, eta, left in events[start:]:
        assert abs(eta - left) <= max(0.25 * left, 60.0), (jobs, slowness, t, eta, left)


def test_before_anything_finishes_the_eta_moves_with_the_runs_in_flight() -> None:
    clock = Clock()
    reporter = ProgressReporter([100.0] * 20, jobs=10, out=io.StringIO(), clock=clock)
    assert reporter.eta_s() == pytest.approx(200.0)  # the plan: 2 rounds of 10 side by side
    for key in range(10):
        reporter.start(key, 100.0)
    clock.now = 40.0
    assert reporter.progress() == pytest.approx(400.0)
    assert reporter.eta_s() == pytest.approx(160.0)


def test_a_run_past_its_expected_time_is_not_counted_as_done() -> None:
    clock = Clock()
    reporter = ProgressReporter([100.0], jobs=1, out=io.StringIO(), clock=clock)
    reporter.start("slow", 100.0)
    clock.now = 500.0
    assert reporter.progress() < 100.0 and reporter.eta_s() > 0
    reporter.advance(100.0, "slow", True, key="slow")
    assert reporter.progress() == 100.0 and reporter.eta_s() == 0.0


def test_makespan_takes_the_first_free_slot_in_order() -> None:
    assert makespan_s([], 4) == 0.0
    assert makespan_s([10, 10, 10, 10], 2) == 20.0
    assert makespan_s([30, 10, 10, 10], 2) == 30.0  # the long one first: the rest beside it
    assert makespan_s([10, 10, 10, 30], 2) == 40.0  # the long one last: it ends alone
    assert makespan_s([5], 3, busy=[20.0]) == 20.0
