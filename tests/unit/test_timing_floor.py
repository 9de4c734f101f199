"""The machine's timing floor from a spinning probe's stats (bench/timing_floor.py)."""
from __future__ import annotations

import pytest

from bench.timing_floor import describe, floor_from_stats


def stats(**cpus: tuple[int, int]) -> dict:
    return {"report_us": 12, "cpus": {
        cpu.removeprefix("cpu"): {"spin": {"gaps_over_report": n, "excess_us": excess},
                                  "lateness_us": {"max": 40}}
        for cpu, (n, excess) in cpus.items()}}


def test_the_worst_cpu_sets_the_bound() -> None:
    # 5 s: CPU 0 lost 50,000 us beyond the limit (1% of the time), CPU 1 100,000 (2%).
    floor = floor_from_stats(stats(cpu0=(4500, 50_000), cpu1=(5000, 100_000)), 5.0)
    assert floor["cpus"]["0"]["gaps_over_limit_per_s"] == 900
    assert floor["cpus"]["0"]["excess_share"] == pytest.approx(0.01)
    assert floor["cpus"]["0"]["gaps_within_estimate"] == pytest.approx(0.98)
    assert floor["gaps_within_estimate"] == pytest.approx(0.96)  # CPU 1: 1 - 2 x 2%
    assert "about 96.0% of departure gaps" in describe(floor)


def test_a_quiet_cpu_bounds_nothing_and_no_cpu_bounds_unknown() -> None:
    assert floor_from_stats(stats(cpu0=(0, 0)), 5.0)["gaps_within_estimate"] == 1.0
    assert floor_from_stats({"report_us": 12, "cpus": {}}, 5.0)["gaps_within_estimate"] is None
    # A machine that lost over half its time: the bound does not go below 0.
    assert floor_from_stats(stats(cpu0=(10, 3_000_000)), 5.0)["gaps_within_estimate"] == 0.0
