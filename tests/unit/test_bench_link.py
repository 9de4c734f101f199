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
