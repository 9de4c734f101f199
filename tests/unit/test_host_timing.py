"""The end hosts' timing read from a run's meta.json, and the verdict on it, on hand-made
stats of the shapes the native programs and the TCP recording write."""
from __future__ import annotations

from typing import Any

from analysis.host_timing import (MAX_HOST_P99_US, MIN_SAMPLES, host_measures,
                                  host_timing_metrics, hosts_late, worst_host_p99_us)


def figures(p99: int, count: int = 5000, p50: int = 40) -> dict[str, int]:
    return {"p50": p50, "p90": p50 * 2, "p99": p99, "max": p99 + 100, "count": count}


def native(pair: str, reaction: dict[str, int], wakeup: dict[str, int]) -> dict[str, Any]:
    return {"host_timing": {"arrival_to_send_us": reaction, "wakeup_lateness_us": wakeup,
                            "arrival_to_send": pair, "arrivals_without_timestamp": 0,
                            "negative_intervals": 0}}


def grump_meta(sender_p99: int, receiver_p99: int = 60, wakeups: int = 3,
               wakeup_p99: int = 9000) -> dict[str, Any]:
    return {"verification": {
        "sender": native("ACK -> data", figures(sender_p99), figures(wakeup_p99, wakeups)),
        "receiver": native("data -> ACK", figures(receiver_p99), figures(0, 0))}}


def tcp_meta(sender_p99: int, receiver_p99: int, status: str = "recorded") -> dict[str, Any]:
    return {"verification": {"cc_requested": "cubic", "tcp_probe": {
        "status": "recorded",
        "stack_delay": {"status": status,
                        "sender": {"interface": "s-eth0", "in_ksoftirqd": 0,
                                   "stack_delay_us": figures(sender_p99, p50=1)},
                        "receiver": {"interface": "r-eth0", "in_ksoftirqd": 0,
                                     "stack_delay_us": figures(receiver_p99, p50=1)}}}}}


def test_a_sender_that_answers_acks_late_makes_the_run_late() -> None:
    m = host_timing_metrics(grump_meta(sender_p99=MAX_HOST_P99_US + 1))
    assert m["host_timing_ok"] is False
    assert m["host_reaction_p99_us"] == MAX_HOST_P99_US + 1
    assert m["host_reaction_what"] == "sender ACK -> data"
    assert m["host_late"] == "sender ACK -> data"
    assert hosts_late(m)


def test_at_the_limit_is_on_time() -> None:
    m = host_timing_metrics(grump_meta(sender_p99=MAX_HOST_P99_US))
    assert m["host_timing_ok"] is True and m["host_late"] is None
    assert not hosts_late(m)


def test_a_late_receiver_counts_as_much_as_a_late_sender() -> None:
    m = host_timing_metrics(grump_meta(sender_p99=300, receiver_p99=4000))
    assert m["host_timing_ok"] is False
    assert m["host_reaction_what"] == "receiver data -> ACK"
    assert m["host_reaction_p99_us"] == 4000


def test_a_handful_of_samples_is_recorded_but_not_judged() -> None:
    # Three timeouts in a whole run, one of them 9 ms late: one stall, not a habit.
    meta = grump_meta(sender_p99=300, wakeups=MIN_SAMPLES - 1)
    m = host_timing_metrics(meta)
    assert m["host_timing_ok"] is True
    assert m["host_wakeup_p99_us"] is None, "an unjudged measure is not the worst"
    wakeup = [x for x in host_measures(meta) if x.kind == "wakeup" and x.role == "sender"]
    assert wakeup[0].p99_us == 9000 and not wakeup[0].judged
    # With enough of them the same lateness is a verdict.
    m = host_timing_metrics(grump_meta(sender_p99=300, wakeups=MIN_SAMPLES))
    assert m["host_timing_ok"] is False
    assert m["host_wakeup_p99_us"] == 9000 and m["host_wakeup_what"] == "sender wake-up"
    assert worst_host_p99_us(m) == 9000


def test_sprout_ends_are_read_the_same_way() -> None:
    meta = {"verification": {
        "sender": native("forecast -> data", figures(2500), figures(800)),
        "receiver": native("none (forecasts go out on the 20-ms tick)", figures(0, 0),
                           figures(1200))}}
    m = host_timing_metrics(meta)
    assert m["host_timing_ok"] is False and m["host_late"] == "sender forecast -> data"
    assert m["host_wakeup_p99_us"] == 1200 and m["host_wakeup_what"] == "receiver wake-up"


def test_tcp_runs_are_judged_on_their_kernels_stack_delay() -> None:
    m = host_timing_metrics(tcp_meta(4, 3))
    assert m["host_timing_ok"] is True
    assert m["host_reaction_p99_us"] == 4 and m["host_reaction_what"] == "sender stack delay"
    assert m["host_wakeup_p99_us"] is None
    late = host_timing_metrics(tcp_meta(5, 2600))
    assert late["host_timing_ok"] is False and late["host_late"] == "receiver stack delay"


def test_nothing_recorded_is_unknown_not_on_time() -> None:
    metas: list[dict[str, Any]] = [
        {}, {"verification": {"cc_requested": "cubic", "tcp_probe": {"status": "unavailable"}}},
        tcp_meta(5000, 5000, status="empty"), {"verification": {"sender": {"datagrams_sent": 5}}}]
    for meta in metas:
        m = host_timing_metrics(meta)
        assert m["host_timing_ok"] is None, meta
        assert not hosts_late(m)
        assert worst_host_p99_us(m) is None
