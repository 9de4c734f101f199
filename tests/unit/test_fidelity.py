"""A run's emulator lateness verdict, CPU steal, and how late runs show on a figure."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402

from analysis.fidelity import (MAX_LATENESS_P99_US, lateness_ok, lateness_p99_us,  # noqa: E402
                               worst_lateness_p99_us)
from experiments.sprout.tradeoff_points import point_of  # noqa: E402
from experiments.sprout.tradeoff_plot import draw_panel, series_per_scheme  # noqa: E402
from core.cpu_steal import StealMeter, cpu_times  # noqa: E402


def stats(a2b: int | None, b2a: int | None) -> dict:
    return {d: {"lateness_us": {} if v is None else {"p99": v}}
            for d, v in (("a2b", a2b), ("b2a", b2a))}


def test_the_worse_direction_decides() -> None:
    assert lateness_p99_us(stats(300, 2500)) == 2500
    assert lateness_ok(stats(300, MAX_LATENESS_P99_US)) is True
    assert lateness_ok(stats(300, MAX_LATENESS_P99_US + 1)) is False
    assert lateness_ok(stats(None, 400)) is True
    assert lateness_ok(stats(None, None)) is None
    assert lateness_ok(None) is None


def test_from_a_runs_metrics_the_worse_direction_too() -> None:
    assert worst_lateness_p99_us({"lateness_p99_us": 90, "ack_lateness_p99_us": 2600}) == 2600
    assert worst_lateness_p99_us({"lateness_p99_us": 90, "ack_lateness_p99_us": None}) == 90
    assert worst_lateness_p99_us({}) is None


def test_steal_is_the_share_of_all_cpu_time(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 0 50 800 10 0 5 35 7 0\ncpu0 1 2 3\n")
    assert cpu_times(stat) == (35, 1000)
    meter = StealMeter(stat)
    stat.write_text("cpu  150 0 60 1530 10 0 5 45 9 0\n")  # +800 jiffies, 10 of them stolen
    assert meter.percent() == 100.0 * 10 / 800
    assert meter.idle_percent() == 100.0 * 730 / 800  # idle and iowait
    stat.write_text("garbage\n")
    assert cpu_times(stat) is None and meter.percent() is None
    assert meter.idle_percent() is None


def _row(ok: bool | None) -> dict:
    return {"scheme": "sprout", "throughput_mbps": 4.0, "self_inflicted_delay_ms": 50.0,
            "provider": None, "lateness_ok": ok}


def test_a_point_with_a_late_run_is_drawn_hollow_and_noted() -> None:
    point = point_of([_row(True), _row(False), _row(None)])
    assert point.late == 1
    fig, ax = plt.subplots()
    draw_panel(ax, series_per_scheme([point]), "panel")
    hollow = [line for line in ax.lines if line.get_markerfacecolor() == "white"]
    assert len(hollow) == 1
    notes = " ".join(t.get_text() for t in ax.texts)
    assert "hollow: 1 run(s) with the emulator late (p99 lateness > 2 ms)" in notes
    plt.close(fig)


def test_a_point_whose_runs_were_on_time_is_filled() -> None:
    fig, ax = plt.subplots()
    draw_panel(ax, series_per_scheme([point_of([_row(True)])]), "panel")
    assert not [line for line in ax.lines if line.get_markerfacecolor() == "white"]
    assert "hollow" not in " ".join(t.get_text() for t in ax.texts)
    plt.close(fig)
