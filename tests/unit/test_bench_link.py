"""bench link reads what the iperf3 server received, whichever iperf3 wrote it."""
from __future__ import annotations

from bench.link import _received_sum


def test_newer_iperf3_reports_received_udp_in_sum_received() -> None:
    # iperf3 3.16's UDP server: `sum` reads 0 bytes, `sum_received` has the payload.
    server = {"end": {"sum": {"bytes": 0, "bits_per_second": 0, "lost_percent": 17.7},
                      "sum_received": {"bytes": 1131451328, "bits_per_second": 1806153522.5,
                                       "lost_percent": 17.7},
                      "sum_sent": {"bytes": 0, "bits_per_second": 0}}}
    assert _received_sum(server)["bits_per_second"] == 1806153522.5


def test_older_iperf3_reports_it_in_sum() -> None:
    server = {"end": {"sum": {"bytes": 10, "bits_per_second": 80.0, "lost_percent": 0.0}}}
    assert _received_sum(server)["bits_per_second"] == 80.0


def test_nothing_reported_is_empty_not_zero() -> None:
    assert _received_sum({"end": {}}) == {}


# --- the fixed-rate climb, with a fake measurement ------------------------------------------

from typing import Any  # noqa: E402

from bench.link import MAX_RATE_MBPS, RATES_MBPS, climb, next_rate  # noqa: E402


class FakeLink:
    """Delivers min(rate, capacity); `flaky` rates fail their first attempt only."""

    def __init__(self, capacity: float, flaky: tuple[float, ...] = ()) -> None:
        self.capacity = capacity
        self.flaky = set(flaky)
        self.measured: list[float] = []

    def measure(self, rate: float) -> dict[str, Any]:
        self.measured.append(rate)
        delivered = min(rate, self.capacity)
        if rate in self.flaky:
            self.flaky.discard(rate)
            delivered = rate * 0.5
        return {"rate_mbps": rate, "delivered_mbps": delivered,
                "delivered_vs_rate": delivered / rate}


def holds(r: dict[str, Any]) -> bool:
    return bool(r["delivered_vs_rate"] >= 0.99)


def test_next_rate_follows_the_ladder_then_climbs_by_a_quarter() -> None:
    assert [next_rate(r) for r in (100, 250, 1500)] == [250, 500, 2000]
    assert next_rate(2000) == 2500
    assert next_rate(2500) == 3250  # 3125 rounded up to a multiple of 250
    assert next_rate(3250) == 4250  # 4062.5 likewise
    assert next_rate(MAX_RATE_MBPS) is None


def test_a_ceiling_inside_the_ladder_stops_the_climb_there() -> None:
    link = FakeLink(capacity=1200)
    result = climb(link.measure, holds)
    assert result.highest_held_mbps == 1000
    assert result.first_failed_mbps == 1500
    # 1500 tried twice, nothing above it tried.
    assert link.measured == [100, 250, 500, 750, 1000, 1500, 1500]
    assert [r["held"] for r in result.attempts][-2:] == [False, False]


def test_the_climb_goes_on_past_the_top_of_the_ladder() -> None:
    link = FakeLink(capacity=5000)
    result = climb(link.measure, holds)
    assert RATES_MBPS[-1] == 2000
    assert result.highest_held_mbps == 4250
    assert result.first_failed_mbps == 5500  # 4250 * 1.25 = 5312.5, rounded up
    assert link.measured[-4:] == [3250, 4250, 5500, 5500]


def test_one_failed_attempt_is_retried_and_does_not_end_the_climb() -> None:
    link = FakeLink(capacity=800, flaky=(250,))
    result = climb(link.measure, holds)
    assert link.measured[:4] == [100, 250, 250, 500]
    assert [r["attempt"] for r in result.attempts][:4] == [1, 1, 2, 1]
    assert result.highest_held_mbps == 750
    assert result.first_failed_mbps == 1000


def test_failing_at_the_first_rate_reports_nothing_held() -> None:
    result = climb(FakeLink(capacity=10).measure, holds)
    assert result.highest_held_mbps == 0
    assert result.first_failed_mbps == 100


def test_running_out_of_rates_reports_no_failing_rate() -> None:
    link = FakeLink(capacity=float("inf"))
    result = climb(link.measure, holds)
    assert result.first_failed_mbps is None
    assert result.highest_held_mbps == link.measured[-1]
    assert next_rate(link.measured[-1]) is None
