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

import pytest  # noqa: E402

from bench.link import MAX_RATE_MBPS, RATES_MBPS, climb, next_rate, refine  # noqa: E402


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


def test_refining_halves_the_last_step_twice() -> None:
    link = FakeLink(capacity=900)
    result = refine(link.measure, holds, climb(link.measure, holds))
    # 750 held, 1000 failed; 875 holds, then 950 (937.5 rounded to 25) fails twice.
    assert link.measured[-5:] == [1000, 1000, 875, 950, 950]
    assert (result.highest_held_mbps, result.first_failed_mbps) == (875, 950)
    assert [r["rate_mbps"] for r in result.attempts][-3:] == [875, 950, 950]


def test_refining_moves_down_when_the_midpoint_fails() -> None:
    link = FakeLink(capacity=790)
    result = refine(link.measure, holds, climb(link.measure, holds))
    # 875 fails twice, then 800 (812.5 rounded) fails twice: 750 stays the highest held.
    assert link.measured[-4:] == [875, 875, 800, 800]
    assert (result.highest_held_mbps, result.first_failed_mbps) == (750, 800)


def test_nothing_to_refine_without_a_held_and_a_failed_rate() -> None:
    for capacity in (10, float("inf")):
        link = FakeLink(capacity=capacity)
        before = climb(link.measure, holds)
        count = len(link.measured)
        after = refine(link.measure, holds, before)
        assert len(link.measured) == count and after is before


# --- the held rule: delivery AND lateness ---------------------------------------------------

from bench.link import (SUSTAINED_FRACTION, bare_holds, ceiling_ratio,  # noqa: E402
                        emulator_holds, ip4_basis_mbps, iperf3_limited, packet_rates,
                        udp_payload_for_frame)
from analysis.fidelity import MAX_LATENESS_P99_US  # noqa: E402


def emulated(delivered_vs_rate: float, p99_us: int | None) -> dict[str, Any]:
    return {"delivered_vs_rate": delivered_vs_rate, "lateness_p99_us": p99_us}


def test_a_rate_is_held_only_on_time_and_delivered() -> None:
    assert SUSTAINED_FRACTION == 0.995
    assert emulator_holds(emulated(0.995, MAX_LATENESS_P99_US)) is True
    assert emulator_holds(emulated(1.0, MAX_LATENESS_P99_US + 1)) is False  # late
    assert emulator_holds(emulated(0.994, 100)) is False  # short of the rate
    assert emulator_holds(emulated(0.99, 100)) is False  # the old 99% rule would hold it


def test_unknown_lateness_is_not_held() -> None:
    assert emulator_holds(emulated(1.0, None)) is False


def test_the_bare_path_is_judged_by_delivery_alone() -> None:
    assert bare_holds({"delivered_vs_rate": 1.1}) is True
    assert bare_holds({"delivered_vs_rate": 0.994}) is False


def test_the_climb_stops_at_the_first_late_rate_even_if_delivered() -> None:
    # Every rate delivered in full; lateness crosses 2 ms above 1000 Mbit/s.
    def measure(rate: float) -> dict[str, Any]:
        return {"rate_mbps": rate, **emulated(1.0, 500 if rate <= 1000 else 2500)}
    result = climb(measure, emulator_holds)
    assert result.highest_held_mbps == 1000
    assert result.first_failed_mbps == 1500
    assert [r["rate_mbps"] for r in result.attempts][-2:] == [1500, 1500]


def test_ceiling_ratio_against_the_bare_path() -> None:
    assert ceiling_ratio(750, 3000) == 0.25
    assert ceiling_ratio(1500, 1000) == 1.5
    assert ceiling_ratio(750, 0) is None  # the bare path held nothing: no ratio


# --- packets per second -----------------------------------------------------------------------

def test_frame_sizes_to_udp_payloads_on_a_veth() -> None:
    # 14 Ethernet + 20 IP + 8 UDP; no FCS on a veth.
    assert udp_payload_for_frame(64) == 22
    assert udp_payload_for_frame(1500) == 1458
    assert udp_payload_for_frame(1514) == 1472
    with pytest.raises(ValueError):
        udp_payload_for_frame(42)


def test_payload_rate_on_the_emulators_byte_basis() -> None:
    # 1472 payload bytes are a 1500-byte IP packet: 1504 bytes on the IP length + 4 basis.
    assert ip4_basis_mbps(1472.0, 1472) == pytest.approx(1504.0)
    assert ip4_basis_mbps(22.0, 22) == pytest.approx(54.0)


def test_packet_rates_from_both_ends_of_iperf3() -> None:
    client = {"end": {"sum": {"packets": 500_000, "seconds": 5.0}}}
    server = {"end": {"sum": {"packets": 400_000, "lost_packets": 100_000, "seconds": 4.0,
                              "lost_percent": 25.0}}}
    r = packet_rates(client, server)
    assert r["offered_pps"] == 100_000
    assert r["received_packets"] == 300_000
    assert r["delivered_pps"] == 75_000  # over the receiver's own 4 s
    assert r["delivered_vs_offered"] == 0.75
    assert r["receiver_lost_percent"] == 25.0


def test_packet_rates_without_a_report_are_unknown() -> None:
    r = packet_rates({"end": {}}, {"end": {}})
    assert r["offered_pps"] is None and r["delivered_pps"] is None
    assert r["delivered_vs_offered"] is None


def test_iperf3_is_the_limit_when_the_bare_path_carries_all_it_sent() -> None:
    assert iperf3_limited({"delivered_vs_offered": 0.999}) is True
    assert iperf3_limited({"delivered_vs_offered": 0.9}) is False
    assert iperf3_limited({"delivered_vs_offered": None}) is False


def test_a_bare_failure_without_loss_is_the_senders() -> None:
    from bench.link import sender_limited
    quiet = [{"rate_mbps": 1500, "receiver_lost_percent": 0.0},
             {"rate_mbps": 1500, "receiver_lost_percent": 0.2}]
    lossy = [{"rate_mbps": 1500, "receiver_lost_percent": 0.0},
             {"rate_mbps": 1500, "receiver_lost_percent": 12.0}]
    assert sender_limited(quiet, 1500) is True
    assert sender_limited(lossy, 1500) is False
    assert sender_limited(quiet, None) is False  # nothing failed
