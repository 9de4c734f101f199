"""Congestion-control behaviour metrics on hand-made logs and probe traces."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.cc_behaviour import (BIC_BETA, acked_packets_per_ack, bic_growth_by_region,
                                   bic_reductions,
                                   bic_wmax_after, cc_behaviour_metrics, growth_per_rtt,
                                   hybla_rho, loss_episodes, queue_occupancy_per_ms,
                                   steady_queue, LossEpisode)
from analysis.mahimahi_log import parse_log
from analysis.tcp_probe import ProbeTrace
from core.tcp_probe_format import CA_DISORDER, CA_LOSS, CA_OPEN, CA_RECOVERY


def _probe(time_s, cwnd, ssthresh, state, srtt_us=100_000, snd_una=None) -> ProbeTrace:
    n = len(time_s)
    arr = lambda v: np.asarray(v if np.ndim(v) else [v] * n, dtype=np.int64)  # noqa: E731
    una = arr(snd_una if snd_una is not None else np.arange(n) * 2896)
    return ProbeTrace(time_s=np.asarray(time_s, dtype=float), snd_cwnd=arr(cwnd),
                      ssthresh=arr(ssthresh), srtt_us=arr(srtt_us), snd_nxt=una + 100_000,
                      snd_una=una, snd_wnd=arr(65535), ca_state=arr(state))


def _log(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "data.log"
    path.write_text("# base timestamp: 1000\n" + "\n".join(lines) + "\n")
    return path


def test_queue_occupancy_counts_arrivals_drops_and_departures(tmp_path: Path) -> None:
    # ms 0: three arrive (one of them dropped); ms 1: one leaves; ms 3: one leaves.
    log = parse_log(_log(tmp_path, ["1000 + 1504", "1000 + 1504", "1000 + 1504",
                                    "1000 d 1 1504", "1001 - 1504 1", "1003 - 1504 3"]))
    assert list(queue_occupancy_per_ms(log)) == [2, 1, 1, 0]


def test_steady_queue_is_the_second_half_of_the_span(tmp_path: Path) -> None:
    lines = [f"{1000 + t} + 1504" for t in range(0, 10)] + ["1009 - 1504 0"]
    q = steady_queue(parse_log(_log(tmp_path, lines)))
    assert list(q) == [6, 7, 8, 9, 9]


def test_loss_episode_takes_the_window_before_and_ssthresh_inside() -> None:
    # The probe samples before each ACK is processed: the sample before Recovery has the
    # window at the loss; the first one in Recovery reports the new ssthresh.
    probe = _probe([0, 1, 2, 3, 4, 5], cwnd=[100, 101, 101, 90, 80, 80],
                   ssthresh=[75, 75, 75, 80, 80, 80],
                   state=[CA_OPEN, CA_OPEN, CA_DISORDER, CA_RECOVERY, CA_RECOVERY, CA_OPEN])
    (episode,) = loss_episodes(probe)
    assert (episode.cwnd_at_loss, episode.ssthresh_after, episode.state) == (101, 80, CA_RECOVERY)
    assert episode.time_s == 3


def test_growth_per_rtt_counts_rtts_elapsed_in_avoidance_only() -> None:
    # Slow start before the loss is ignored; after it, +1 per 0.1 s at srtt 0.1 s.
    t = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    probe = _probe(t, cwnd=[10, 40, 20, 20, 21, 22, 23], ssthresh=[2 ** 31 - 1, 2 ** 31 - 1,
                                                                   20, 20, 20, 20, 20],
                   state=[CA_OPEN, CA_OPEN, CA_RECOVERY, CA_OPEN, CA_OPEN, CA_OPEN, CA_OPEN])
    assert growth_per_rtt(probe) == pytest.approx(1.0)
    assert acked_packets_per_ack(probe, mss=1448) == pytest.approx(2.0)


def test_no_loss_means_no_avoidance_growth() -> None:
    probe = _probe([0, 1, 2], cwnd=[10, 20, 40], ssthresh=2 ** 31 - 1, state=CA_OPEN)
    assert growth_per_rtt(probe) is None


def test_bic_wmax_follows_fast_convergence_and_timeouts() -> None:
    eps = [LossEpisode(0, CA_RECOVERY, 200, 159), LossEpisode(1, CA_RECOVERY, 150, 119),
           LossEpisode(2, CA_RECOVERY, 160, 127), LossEpisode(3, CA_LOSS, 100, 79)]
    # 200: first loss; 150 < 200: (1 + beta) / 2 of it; 160 >= 135: itself; timeout: 0.
    assert bic_wmax_after(eps) == [200, int(150 * (1 + BIC_BETA) / 2), 160, 0]


def test_bic_wmax_follows_the_lowerings_inside_an_episode_too() -> None:
    """A run of CI's: slow start's loss at 227, two more lowerings of ssthresh while it
    recovers (115, 91), then losses at 122 and 115 in avoidance. BIC's hook ran four times
    before the loss at 115, so fast convergence applies there (115 < 122): Wmax 103, not the
    115 that replaying the three episodes alone gives."""
    open_, rec = CA_OPEN, CA_RECOVERY
    rows = [(0.00, 226, 2147483647, open_), (0.01, 227, 2147483647, open_),
            (0.02, 200, 181, rec), (0.10, 150, 115, rec), (0.20, 100, 91, rec),
            (0.30, 91, 91, open_), (2.00, 122, 91, open_), (2.01, 110, 97, rec),
            (2.10, 97, 97, open_), (3.00, 115, 97, open_), (3.01, 100, 91, rec)]
    t, cwnd, ssthresh, state = (list(c) for c in zip(*rows))
    probe = _probe(t, cwnd=cwnd, ssthresh=ssthresh, state=state)
    reductions = bic_reductions(probe)
    assert [r.cwnd_at_loss for r in reductions] == [227, 144, 114, 122, 115]
    assert bic_wmax_after(reductions) == [227, 129, 102, 122, 103]
    assert bic_wmax_after(loss_episodes(probe)) == [227, 109, 115]  # the episodes alone


def test_bic_growth_far_from_and_near_wmax() -> None:
    # First, slow start ends with a loss at 130 (its overshoot: BIC sets Wmax 130 and
    # ssthresh 104); while the sender recovers, another loss lowers ssthresh to 100 through
    # BIC's hook (a window of 126: Wmax 126 x (1 + beta) / 2 = 113), and cwnd creeps
    # 100 -> 103, 10-13 below it: neither far nor near, not measured.
    overshoot_cwnd = [129, 130, 104, 100, 101, 102, 103]
    overshoot_time = [0, 0.01, 0.02, 0.03, 0.13, 0.23, 0.33]
    overshoot_state = [CA_OPEN, CA_OPEN, CA_RECOVERY] + [CA_OPEN] * 4
    overshoot_ssthresh = [200, 200, 104, 100, 100, 100, 100]
    # Then a loss at 140 in avoidance (Wmax 140, ssthresh 112), srtt 0.1 s. Far (gap >= 16,
    # cwnd <= 124): +1 per 0.01 s = +10 per RTT; between: +1 per 0.05 s; near (cwnd >= 133):
    # +1 per 0.2 s = +0.5 per RTT.
    steps = [(c, 0.01) for c in range(112, 125)] + [(c, 0.05) for c in range(125, 133)] \
        + [(c, 0.2) for c in range(133, 137)]
    cwnd = overshoot_cwnd + [139, 140] + [c for c, _ in steps]
    time_s = np.concatenate([overshoot_time, [1.0, 1.01],
                             1.02 + np.cumsum([0] + [dt for _, dt in steps[:-1]])])
    state = overshoot_state + [CA_OPEN, CA_OPEN, CA_RECOVERY] + [CA_OPEN] * (len(steps) - 1)
    ssthresh = overshoot_ssthresh + [105, 105] + [112] * len(steps)
    probe = _probe(time_s, cwnd=cwnd, ssthresh=ssthresh, state=state)
    grow_far, grow_near = bic_growth_by_region(probe)
    assert grow_far == pytest.approx(10)
    assert grow_near == pytest.approx(0.5)
    # With only slow start's loss there is nothing to measure yet.
    first_only = _probe(overshoot_time, cwnd=overshoot_cwnd, ssthresh=overshoot_ssthresh,
                        state=overshoot_state)
    assert bic_growth_by_region(first_only) == (None, None)
    # Had ssthresh stayed the one BIC set (104), those samples would be BIC's search, and a
    # creep of +1 per RTT 30 below Wmax would count against it: nothing is skipped by position.
    kept = _probe(overshoot_time, cwnd=[129, 130, 104, 104, 105, 106, 107],
                  ssthresh=[200, 200, 104, 104, 104, 104, 104], state=overshoot_state)
    far, near = bic_growth_by_region(kept)
    assert far == pytest.approx(1.0) and near is None


def test_hybla_rho_from_the_smallest_srtt() -> None:
    probe = _probe([0, 1, 2], cwnd=10, ssthresh=20, state=CA_OPEN,
                   srtt_us=[230_000, 201_000, 260_000])
    assert hybla_rho(probe) == 8.0  # 201 ms / 25 ms = 8.04, in eighths: 64 / 8
    assert hybla_rho(_probe([0], 10, 20, CA_OPEN, srtt_us=[5_000])) == 1.0  # rho >= 1


def test_metrics_without_inputs_are_empty(tmp_path: Path) -> None:
    assert cc_behaviour_metrics(tmp_path, "vegas") == {}
