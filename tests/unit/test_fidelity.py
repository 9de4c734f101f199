"""A run's emulator lateness verdict, CPU steal, and how late runs show on a figure."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402

from analysis.fidelity import (MAX_LATENESS_P99_US, MIN_GAPS_COUNTED,  # noqa: E402
                               emulator_late, gaps_within_10pct, late_reason, lateness_ok,
                               lateness_p99_us, worst_lateness_p99_us)
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


def with_gaps(link: dict, direction: str, backlogged: int, fraction: float | None) -> dict:
    link[direction]["departure_gaps"] = {"backlogged": backlogged, "fraction": fraction}
    return link


def test_departure_gaps_under_95_percent_make_a_timely_run_late() -> None:
    # p99 well within 2 ms, but only 94% of the backlogged gaps within 10% of schedule.
    link = with_gaps(stats(30, 40), "a2b", 60000, 0.94)
    assert gaps_within_10pct(link) == 0.94
    assert lateness_ok(link) is False
    assert lateness_ok(with_gaps(stats(30, 40), "a2b", 60000, 0.95)) is True
    # The worse direction decides, as for lateness.
    both = with_gaps(with_gaps(stats(30, 40), "a2b", 60000, 0.99), "b2a", 5000, 0.90)
    assert gaps_within_10pct(both) == 0.90 and lateness_ok(both) is False


def test_too_few_or_unknown_gaps_do_not_judge() -> None:
    few = with_gaps(stats(30, 40), "a2b", MIN_GAPS_COUNTED - 1, 0.5)
    assert gaps_within_10pct(few) is None and lateness_ok(few) is True
    unknown = with_gaps(stats(30, 40), "a2b", 60000, None)  # a delay per far host
    assert gaps_within_10pct(unknown) is None and lateness_ok(unknown) is True
    assert gaps_within_10pct(stats(30, 40)) is None  # stats from before the count


def test_the_late_reason_names_what_was_late() -> None:
    assert late_reason({"lateness_ok": True, "lateness_p99_us": 30}) == ""
    slow = {"lateness_ok": False, "lateness_p99_us": 2600}
    assert emulator_late(slow) and late_reason(slow) == "p99 lateness 2.6 ms, over 2 ms"
    imprecise = {"lateness_ok": False, "lateness_p99_us": 40,
                 "emulator_gaps_within_10pct": 0.921}
    assert late_reason(imprecise) == ("92.1% of backlogged departure gaps within 10% of "
                                      "schedule, under 95%")


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
    assert "hollow: 1 run(s) with the emulator late (p99 lateness above 2 ms, or under 95%" in notes
    plt.close(fig)


def test_a_point_whose_runs_were_on_time_is_filled() -> None:
    fig, ax = plt.subplots()
    draw_panel(ax, series_per_scheme([point_of([_row(True)])]), "panel")
    assert not [line for line in ax.lines if line.get_markerfacecolor() == "white"]
    assert "hollow" not in " ".join(t.get_text() for t in ax.texts)
    plt.close(fig)
