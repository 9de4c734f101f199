"""Random loss and rate steps, on the Python side: the run options and their refusals, the
seed a run gives the emulator, TraceLink's words and the flags they become, and the queue log's
`l` lines (native/link/link_conditions_test.cc checks the emulator's own loss rate, seeding and
stepped schedule)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analysis.queue_log import (backlog_at, backlog_series, departure_gaps, fidelity_metrics,
                                parse_queue_log_text)
from core.errors import UsageError
from core.runspec import RunSpec, make_params
from topologies.link_conditions import (SEED_STRIDE, LinkConditions, link_conditions,
                                        parse_rate_steps)
from topologies.link_side import LinkSide
from topologies.trace_link_options import (TraceLinkOptionError, check_loss, check_loss_seed,
                                           check_rate_steps, loss_args)


def spec(data: str = "rate:10", trial: int = 1, **options: Any) -> RunSpec:
    return RunSpec(experiment="t", scheme="bbr", data_trace=data, ack_trace="rate:10",
                   duration_s=60.0, trial=trial, options=make_params(**options))


# ------------------------------------------------------------------ the run options

def test_rate_steps_are_seconds_in_whole_milliseconds() -> None:
    assert parse_rate_steps("20:20,40:10") == ((20_000, 20.0), (40_000, 10.0))
    assert parse_rate_steps("0.5:12.5") == ((500, 12.5),)
    for bad, says in [("20", "is not SECONDS:MBPS"), ("20:x", "is not SECONDS:MBPS"),
                      ("0:10", "above 0 s"), ("-1:10", "above 0 s"),
                      ("0.0005:10", "whole milliseconds"), ("20:0", "above 0 Mbit/s"),
                      ("20:-5", "above 0 Mbit/s"), ("20:nan", "above 0 Mbit/s"),
                      ("20:10,10:5", "must increase"), ("20:10,20:5", "must increase"),
                      ("20:10,", "is not SECONDS:MBPS")]:
        with pytest.raises(ValueError, match=says):
            parse_rate_steps(bad)


def test_a_run_without_conditions_asks_for_nothing() -> None:
    c = link_conditions(spec(), 60_000)
    assert c == LinkConditions(trial=1)
    assert not c.lossy
    assert c.link_words() == {"data_loss": None, "ack_loss": None, "loss_seed": SEED_STRIDE + 1}


def test_loss_and_steps_are_read_and_the_seed_is_the_trials_own() -> None:
    c = link_conditions(spec(trial=3, loss=0.01, loss_seed=7, rate_steps="20:20,40:10"), 60_000)
    assert c.data_loss == 0.01 and c.ack_loss is None and c.lossy
    assert c.rate_steps == ((20_000, 20.0), (40_000, 10.0))
    assert c.emulator_seed == 7 * SEED_STRIDE + 3
    # Trials draw different losses; the same spec draws the same ones.
    seeds = {link_conditions(spec(trial=t, loss=0.01), 60_000).emulator_seed for t in (1, 2, 3)}
    assert len(seeds) == 3
    assert link_conditions(spec(trial=2, loss=0.01), 60_000).emulator_seed == \
        link_conditions(spec(trial=2, loss=0.01), 60_000).emulator_seed
    described = c.describe()
    assert described["emulator_seed"] == c.emulator_seed
    assert described["rate_steps_ms_mbps"] == [[20_000, 20.0], [40_000, 10.0]]


@pytest.mark.parametrize("options, says", [
    ({"loss": 1.0}, "--loss: 1.0 is out of range"),
    ({"loss": -0.001}, "--loss: -0.001 is out of range"),
    ({"ack_loss": 1.5}, "--ack-loss: 1.5 is out of range"),
    ({"loss": "0.1"}, "--loss: '0.1' is not a number"),
    ({"loss_seed": -1}, "--loss-seed: -1 is out of range"),
    ({"rate_steps": "20:0"}, "--rate-steps: '20:0': the rate must be above 0 Mbit/s"),
    ({"rate_steps": "60:20"}, "--rate-steps: the step at 60 s is not before the run's end"),
    ({"rate_steps": "20:20,75:10"}, "the step at 75 s is not before the run's end (60 s)"),
])
def test_bad_conditions_are_refused_naming_the_flag(options: dict[str, Any],
                                                    says: str) -> None:
    with pytest.raises(UsageError) as caught:
        link_conditions(spec(**options), 60_000)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_rate_steps_need_a_fixed_rate() -> None:
    with pytest.raises(UsageError, match="--rate-steps: rate steps change a fixed rate"):
        link_conditions(spec(data="Verizon-LTE-short.down", rate_steps="20:20"), 60_000)


# ------------------------------------------------------------------ TraceLink's words

def test_trace_link_takes_loss_as_a_fraction_below_one() -> None:
    assert check_loss("data_loss", None) is None
    assert check_loss("data_loss", 0) == 0.0
    assert check_loss("data_loss", 0.5) == 0.5
    for bad in (1, 1.0, -0.1, True, "0.1", float("nan")):
        with pytest.raises(TraceLinkOptionError, match=r"data_loss=.* must be a loss "
                                                       r"probability in \[0, 1\)"):
            check_loss("data_loss", bad)
    assert check_loss_seed(0) == 0
    for bad in (-1, 1.5, "3", True, 2**64):
        with pytest.raises(TraceLinkOptionError, match="loss_seed="):
            check_loss_seed(bad)


def test_loss_becomes_the_emulators_flags_with_the_seed() -> None:
    assert loss_args(None, None, 5) == []
    assert loss_args(0.01, None, 5) == ["--a2b-loss", "0.01", "--loss-seed", "5"]
    assert loss_args(None, 0.2, 5) == ["--b2a-loss", "0.2", "--loss-seed", "5"]
    assert loss_args(1e-05, 0.0, 9) == ["--a2b-loss", "1e-05", "--b2a-loss", "0.0",
                                        "--loss-seed", "9"]


def test_rate_steps_become_the_emulators_flag_on_a_fixed_rate_only() -> None:
    side = LinkSide(rate_mbps=10, rate_steps=((20_000, 20.0), (40_000, 10.0)))
    assert side.args("a2b") == ["--a2b-rate-mbps", "10", "--a2b-rate-steps",
                                "20000:20,40000:10"]
    assert side.describe() == "fixed 10 Mbit/s, 20 Mbit/s from 20000 ms, 10 Mbit/s from 40000 ms"
    assert side.mean_rate_mbps() == 20.0  # the emulator's load: its highest rate
    with pytest.raises(ValueError, match="rate steps change a fixed rate"):
        LinkSide(trace=Path("x"), rate_steps=((1000, 5.0),)).args("a2b")
    check_rate_steps("data", ((20_000, 20.0), (40_000, 10)), 60_000)
    for steps, says in [(((60_000, 20.0),), r"at or after the end of service \(60000 ms\)"),
                        (((0, 20.0),), "above 0 and increasing"),
                        (((2000, 5.0), (1000, 5.0)), "above 0 and increasing"),
                        (((1000, 0.0),), "the rate must be above 0"),
                        (((1.5, 5.0),), "is not \\(whole ms, Mbit/s\\)"),
                        ([(1000, 5.0)], "must be a tuple")]:
        with pytest.raises(TraceLinkOptionError, match=says):
            check_rate_steps("data", steps, 60_000)


# ------------------------------------------------------------------ the queue log's losses

HEADER = """# netrepro-link queue log
# trace: fixed 100 Mbit/s
# base timestamp: 5000
# format: l ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE
"""
# Four full-size packets arrive 1 us apart and leave 120 us apart; the third is lost after the
# queue. Then two more back to back, neither lost.
EVENTS = """- 1000 0 1504 0 0 1120 2120 2121
- 1001 1 1504 0 0 1240 2240 2241
l 1002 2 1504 0 0 1360
- 1003 3 1504 0 0 1480 2480 2481
- 5000 0 1504 0 0 5120 6120 6121
- 5000 1 1504 0 0 5240 6240 6241
"""


def test_lost_packets_were_in_the_queue_and_are_nobodys_neighbour() -> None:
    q = parse_queue_log_text(HEADER + EVENTS)
    assert list(q.lost_arrival_us) == [1002]
    assert list(q.lost_departure_us) == [1360]
    assert list(q.lost_backlog) == [2]
    # The queue's length counts the lost packet until it left.
    assert list(backlog_at(q, np.array([1003, 1300, 1400, 1500]))) == [4, 2, 1, 0]
    assert list(backlog_series(q)[1]) == [0, 1, 2, 3, 0, 1]
    # Gaps: 1240 after 1120 (120), and 5240 after 5120; 1480 follows the lost packet.
    gaps = departure_gaps(q)
    assert list(gaps.actual_us) == [120, 120]
    assert list(gaps.scheduled_us) == [120, 120]
    m = fidelity_metrics(q)
    assert m == {"gaps_backlogged": 2, "gaps_within_10pct_of_schedule": 1.0, "queue_drops": 0,
                 "random_losses": 1}
    assert fidelity_metrics(q, 0.004)["random_losses"] == 0


def test_gaps_are_judged_against_their_own_schedule() -> None:
    # A rate step: 1203-us gaps, then 601-us gaps; the last real gap is 700 us, 16% late.
    text = HEADER + """- 0 0 1504 0 0 1203 1203 1203
- 0 1 1504 0 0 2406 2406 2406
- 0 2 1504 0 0 3007 3007 3007
- 0 3 1504 0 0 3608 3608 4308
"""
    gaps = departure_gaps(parse_queue_log_text(text))
    assert list(gaps.scheduled_us) == [1203, 601, 601]
    assert list(gaps.actual_us) == [1203, 601, 1301]
    assert gaps.fraction_within_schedule() == pytest.approx(2 / 3)
