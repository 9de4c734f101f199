"""How a switched-path run's first recovery began, and how far its window fell, from its artifacts.

- `recovery_trigger`: "ack" when the kernel entered Recovery while processing an ACK (the
  state change, tcp:tcp_cong_state_set, within `ACK_WINDOW_S` after an ACK reached the
  sender's capture), "timer" when it entered with no ACK just before (RACK's reordering
  timer: tcp_rack_reo_timeout fires at least TCP_TIMEOUT_MIN, two 4 ms jiffies, after the
  ACK that armed it), "rto" when the first episode began in Loss (a retransmission timeout).
- `entry_ack`: which ACK of the flow (1 = the first after the handshake) started it, or, for
  a timer, the last ACK before it; `entry_dupacks`: how many duplicate ACKs (same cumulative
  ACK, carrying SACK) had arrived by then, that one included.
- `entry_after_first_sack_ms`: from the first ACK carrying SACK to the entry.
- `cwnd_min_recovery`: the smallest cwnd tcp_probe saw from the first sample after the entry
  to the first sample after the exit (the values the recovery set, the exit's included).
- `rwnd_segments_before_recovery`: the largest window the receiver had offered (tcp_probe's
  snd_wnd, scaled) before the entry, in MSS: whether the sender could send new data beyond
  the lost window (limited transmit).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from runkinds.switched_path.transfer_run import TransferRun
from core.tcp_probe_format import CA_LOSS

# The kernel logs the state change some microseconds after the capture saw the ACK (tens of
# them on the loaded VM); a RACK timer fires 8 ms or more after the last ACK.
ACK_WINDOW_S = 0.002


def recovery_entry(run: TransferRun) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(
        ("recovery_trigger", "entry_ack", "entry_dupacks", "entry_after_first_sack_ms",
         "cwnd_min_recovery", "rwnd_segments_before_recovery"))
    if not run.episodes or run.probe is None or run.probe_offset_s is None:
        return out
    first = run.episodes[0]
    entry = run.t0 + first.start_s
    acks = run.sender.acks
    before = [i for i, a in enumerate(acks) if a.time_s <= entry]
    last = before[-1] if before else None
    if first.first_state == CA_LOSS:
        out["recovery_trigger"] = "rto"
    elif last is not None and entry - acks[last].time_s <= ACK_WINDOW_S:
        out["recovery_trigger"] = "ack"
    else:
        out["recovery_trigger"] = "timer"
    if last is not None:
        out["entry_ack"] = last + 1
        out["entry_dupacks"] = _dupacks_through(run, last)
    first_sack = next((a.time_s for a in acks if a.sack), None)
    if first_sack is not None:
        out["entry_after_first_sack_ms"] = (entry - first_sack) * 1000
    times = run.probe_times()
    inside = times > first.start_s
    if first.end_s is not None:
        after_exit = np.nonzero(times > first.end_s)[0]
        if after_exit.size:
            inside &= times <= times[after_exit[0]]
    if inside.any():
        out["cwnd_min_recovery"] = int(run.probe.snd_cwnd[inside].min())
    earlier = times <= first.start_s
    mss = run.sender.mss or 1
    if earlier.any():
        out["rwnd_segments_before_recovery"] = float(run.probe.snd_wnd[earlier].max()) / mss
    return out


def _dupacks_through(run: TransferRun, index: int) -> int:
    """Duplicate ACKs (the cumulative ACK unchanged, with SACK) up to and including ACK
    `index`, counted since the cumulative ACK last moved."""
    count = 0
    previous = 0  # the handshake acknowledged no data
    for a in run.sender.acks[:index + 1]:
        if a.ack == previous and a.sack:
            count += 1
        elif a.ack != previous:
            count = 0
        previous = a.ack
    return count
