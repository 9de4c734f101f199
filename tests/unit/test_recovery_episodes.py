"""Recovery episodes from a hand-made probe trace (times, cwnd, ssthresh, state changes)."""
from __future__ import annotations

import numpy as np

from runkinds.switched_path.recovery_episodes import recovery_episodes
from analysis.tcp_probe import ProbeTrace
from core.tcp_probe_format import CA_DISORDER, CA_LOSS, CA_OPEN, CA_RECOVERY, CongStateChange


def trace(times: list[float], cwnd: list[int], ssthresh: list[int],
          changes: list[tuple[float, int]]) -> ProbeTrace:
    n = len(times)
    zeros = np.zeros(n, dtype=np.int64)
    return ProbeTrace(time_s=np.array(times), snd_cwnd=np.array(cwnd),
                      ssthresh=np.array(ssthresh), srtt_us=zeros, snd_nxt=zeros,
                      snd_una=zeros, snd_wnd=zeros, ca_state=zeros,
                      state_changes=tuple(CongStateChange(t, s) for t, s in changes))


def test_one_episode_with_entry_and_exit_windows() -> None:
    # Samples fire before each ACK: 0.3 is the entering ACK's sample, 0.4-0.6 inside,
    # 0.7 the first after the ACK that ended recovery at 0.65.
    probe = trace([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
                  [18, 20, 20, 19, 18, 12, 10],
                  [2147483647, 2147483647, 15, 10, 10, 10, 10],
                  [(0.25, CA_DISORDER), (0.35, CA_RECOVERY), (0.65, CA_OPEN)])
    [episode] = recovery_episodes(probe)
    assert (episode.start_s, episode.end_s, episode.end_state) == (0.35, 0.65, CA_OPEN)
    assert episode.cwnd_before == 20 and episode.ssthresh == 10
    assert episode.cwnd_at_exit == 10 and episode.ssthresh_at_exit == 10
    assert episode.acks == 3
    assert episode.duration_s is not None and abs(episode.duration_s - 0.3) < 1e-9


def test_timeout_ends_recovery_in_loss_and_a_later_episode_is_separate() -> None:
    probe = trace([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [30, 20, 1, 2, 8, 4],
                  [100, 15, 10, 10, 10, 4],
                  [(1.5, CA_RECOVERY), (2.5, CA_LOSS), (3.5, CA_OPEN), (5.5, CA_RECOVERY)])
    first, second = recovery_episodes(probe)
    assert first.end_state == CA_LOSS and first.cwnd_before == 30 and first.ssthresh == 15
    assert first.cwnd_at_exit == 1
    assert second.end_s is None and second.end_state is None and second.duration_s is None
    assert second.cwnd_before == 8 and second.ssthresh == 4 and second.cwnd_at_exit is None


def test_no_state_changes_no_episodes() -> None:
    assert recovery_episodes(trace([0.1], [10], [10], [])) == []


def test_recovery_to_recovery_is_not_a_new_episode() -> None:
    probe = trace([1.0, 2.0, 3.0], [20, 10, 10], [50, 10, 10],
                  [(1.5, CA_RECOVERY), (1.6, CA_RECOVERY), (2.5, CA_OPEN)])
    assert len(recovery_episodes(probe)) == 1
