"""Fast-recovery episodes from the kernel's own view of one sender (tcp_probe + tcp_cong_state_set).

An episode starts when tcp:tcp_cong_state_set moves the socket into Recovery
(3) and ends at the next change to any other state: Open (0) or Disorder (1)
when recovery completes, Loss (4) when a retransmission timeout ends it. For
each, the window around it as tcp:tcp_probe saw it. tcp_probe samples are
taken before each ACK is processed, so:

- `cwnd_before`: the last sample before the episode, i.e. the window the
  loss hit (the entering ACK's own sample);
- `ssthresh`: the first sample inside the episode (the probe reports the real
  ssthresh during a reduction; outside one it is max(ssthresh, 3/4 cwnd));
- `cwnd_at_exit`, `ssthresh_at_exit`: the first sample after the episode,
  i.e. the state the ACK that ended recovery left behind.

Values are None when the trace has no sample there (the episode began before
the first sample or was still open when the trace ended).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tcp_probe import ProbeTrace
from core.tcp_probe_format import CA_RECOVERY


@dataclass(frozen=True)
class RecoveryEpisode:
    start_s: float
    end_s: float | None  # None: still in Recovery when the trace ended
    end_state: int | None  # the state it left Recovery for
    cwnd_before: int | None
    ssthresh: int | None
    cwnd_at_exit: int | None
    ssthresh_at_exit: int | None
    acks: int  # probe samples (incoming ACKs) that found the socket in Recovery

    @property
    def duration_s(self) -> float | None:
        return None if self.end_s is None else self.end_s - self.start_s


def recovery_episodes(probe: ProbeTrace) -> list[RecoveryEpisode]:
    """Every Recovery episode of the trace, in order."""
    episodes: list[RecoveryEpisode] = []
    changes = list(probe.state_changes)
    state = None
    start: float | None = None
    for change in changes:
        if change.ca_state == CA_RECOVERY and state != CA_RECOVERY:
            start = change.time_s
        elif change.ca_state != CA_RECOVERY and state == CA_RECOVERY and start is not None:
            episodes.append(_episode(probe, start, change.time_s, change.ca_state))
            start = None
        state = change.ca_state
    if start is not None:
        episodes.append(_episode(probe, start, None, None))
    return episodes


def _episode(probe: ProbeTrace, start: float, end: float | None,
             end_state: int | None) -> RecoveryEpisode:
    t = probe.time_s
    before = np.flatnonzero(t <= start)
    inside_mask = (t > start) if end is None else ((t > start) & (t <= end))
    inside = np.flatnonzero(inside_mask)
    after = np.flatnonzero(t > end) if end is not None else np.array([], dtype=int)

    def value(column: np.ndarray, index: np.ndarray, pick: int) -> int | None:
        return int(column[index[pick]]) if index.size else None

    return RecoveryEpisode(
        start_s=start, end_s=end, end_state=end_state,
        cwnd_before=value(probe.snd_cwnd, before, -1),
        ssthresh=value(probe.ssthresh, inside, 0),
        cwnd_at_exit=value(probe.snd_cwnd, after, 0),
        ssthresh_at_exit=value(probe.ssthresh, after, 0),
        acks=int(inside.size))
