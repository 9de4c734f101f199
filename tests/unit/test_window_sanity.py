"""The window check that marks a run with an absurd kernel cwnd or ssthresh invalid."""
from __future__ import annotations

import numpy as np

from analysis.tcp_probe import ProbeTrace
from analysis.window_sanity import ABSURD_FACTOR, INFINITE_SSTHRESH, check_windows

MSS = 1448
INF = INFINITE_SSTHRESH
# Seen once in an eBPF RFC 3517 run (heavy pattern): ssthresh and cwnd at recovery entry.
GARBAGE = 2183148773


def trace(cwnd: list[int], ssthresh: list[int], flight_segments: list[int],
          una: int = 1000, states: list[int] | None = None) -> ProbeTrace:
    n = len(cwnd)
    snd_una = np.full(n, una, dtype=np.int64)
    snd_nxt = (snd_una + np.array(flight_segments, dtype=np.int64) * MSS) % (1 << 32)
    zeros = np.zeros(n, dtype=np.int64)
    return ProbeTrace(time_s=np.arange(n, dtype=float) * 0.01, snd_cwnd=np.array(cwnd),
                      ssthresh=np.array(ssthresh), srtt_us=zeros, snd_nxt=snd_nxt,
                      snd_una=snd_una, snd_wnd=zeros,
                      ca_state=np.array(states if states else [0] * n, dtype=np.int64))


def test_a_heavy_loss_recovery_as_recorded_is_valid() -> None:
    # The eBPF RFC 3517 heavy run's shape: IW10, recovery at ssthresh 7, growth after it.
    probe = trace([10, 10, 10, 7, 7, 7, 7, 8, 8], [INF, INF, INF, 7, 7, 7, 7, 7, 7],
                  [10, 10, 10, 10, 10, 10, 7, 5, 3], states=[0, 1, 1, 3, 3, 3, 3, 0, 0])
    verdict = check_windows(probe, MSS)
    assert verdict.valid and verdict.reason() == ""
    assert verdict.reference == 10 and verdict.limit == ABSURD_FACTOR * 10
    assert verdict.max_cwnd == 10 and verdict.max_ssthresh == 7


def test_the_absurd_recovery_entry_is_invalid_with_its_value_in_the_reason() -> None:
    probe = trace([10, 10, GARBAGE, GARBAGE], [INF, INF, GARBAGE, GARBAGE], [10, 10, 10, 10],
                  states=[0, 1, 3, 3])
    verdict = check_windows(probe, MSS)
    assert not verdict.valid
    assert verdict.first_bad_time_s == probe.time_s[2]
    assert str(GARBAGE) in verdict.reason() and "state 3" in verdict.reason()


def test_an_absurd_ssthresh_alone_is_invalid() -> None:
    verdict = check_windows(trace([10, 7, 7], [INF, GARBAGE, 7], [10, 10, 9]), MSS)
    assert not verdict.valid and f"ssthresh {GARBAGE}" in verdict.first_bad


def test_the_bound_comes_from_the_flight_not_from_the_window_under_test() -> None:
    # A cwnd already absurd at the first sample cannot raise its own bound.
    assert not check_windows(trace([GARBAGE, GARBAGE], [INF, INF], [10, 10]), MSS).valid
    # Slow start to twice the flight is what Linux allows: valid.
    assert check_windows(trace([10, 20, 40, 80], [INF] * 4, [10, 20, 40, 40]), MSS).valid
    # Just under and at the limit.
    assert check_windows(trace([10, 99], [INF, 99], [10, 10]), MSS).valid
    assert not check_windows(trace([10, 100], [INF, 100], [10, 10]), MSS).valid


def test_flight_is_measured_across_the_sequence_wrap() -> None:
    probe = trace([10, 150], [INF, INF], [10, 20], una=(1 << 32) - 3 * MSS)
    verdict = check_windows(probe, MSS)
    assert verdict.reference == 20 and verdict.valid


def test_an_unknown_mss_gives_a_looser_bound_and_an_empty_trace_is_valid() -> None:
    loose = check_windows(trace([10, 100], [INF, 100], [10, 10]), None)
    assert loose.valid and loose.reference > 10
    assert check_windows(trace([], [], []), MSS).valid
