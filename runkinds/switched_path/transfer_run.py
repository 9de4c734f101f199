"""One switched-path run read back from its artifacts: the flow from both captures, the
kernel's window, the recovery episodes, the drop verdict, and the numbers summary.csv and the
claims use.

Artifacts (written by the run, see runkinds/switched_path/):

    sender.pcap, receiver.pcap       tcpdump on the sender's and the receiver's interface
    tcp-probe.csv, tcp-cong-state.csv  the kernel's view (core/tcp_probe_format.py)
    meta.json                        the drop plan, the controller's drop log, the captures'
                                     counts, the clock offset, the transfer's verification

Clocks: pcap timestamps are wall-clock (CLOCK_REALTIME); tcp_probe's are
CLOCK_MONOTONIC. The run records realtime - monotonic once, side by side, and
every probe time is moved onto the capture's clock with it. Times in the
results are seconds from the sender's SYN.

Definitions:

- Recovery episode: from tcp_cong_state_set entering Recovery (3) or Loss (4)
  until it returns to Open (0) or Disorder (1). A timeout is an entry into
  Loss. Time in recovery is the sum of the episodes.
- cwnd and ssthresh at entry and exit: those of the first Recovery episode as
  runkinds/switched_path/recovery_episodes.py defines them (entry: the last sample before
  it and the first inside it; exit: the first sample after it, i.e. what the
  ACK that ended recovery left).
- Transfer time: from the sender's first data segment to the first ACK at
  the sender that covers all N bytes (sender capture). The handshake is
  reported apart (its SYN crosses the controller, whose delay under load is
  not the recovery's doing).
- Path delay: for every data transmission that arrived, receiver capture
  time minus sender capture time (the bottleneck's fixed delay and queue,
  plus any time the controller held the packet: a maximum far above the
  fixed delay plus a window's queue says the controller path perturbed it).
- Where a 2011 kernel would have entered recovery (sender capture): with FACK
  (3.1's default), at the first ACK whose highest SACKed byte lies more than
  3 segments above the cumulative ACK; with plain dupthresh, at the third
  duplicate ACK. This kernel's RACK enters later or at the same ACK; the gap
  (in ms and in ACKs) is how much its loss detection moves the figure.
- How the first recovery began (an ACK, RACK's timer, a timeout), and the smallest
  window in it: runkinds/switched_path/recovery_entry.py.
- In an episode, from the sender capture: new (original) segments sent; ACKs
  that arrived before the first new segment; the largest burst, i.e. the most
  data segments sent between two ACK arrivals; the bytes not yet sent when it
  began (0: there was no new data to hold back or send).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runkinds.switched_path.drop_check import DropVerdict, verify_drops
from runkinds.switched_path.recovery_episodes import recovery_episodes
from runkinds.switched_path.tcp_pcap import Flow, read_flow
from analysis.tcp_probe import ProbeTrace, read_probe
from runkinds.switched_path.options import RECEIVER_PCAP, SENDER_PCAP
from analysis.window_sanity import check_windows
from core.tcp_probe_format import CA_DISORDER, CA_LOSS, CA_OPEN, CA_RECOVERY

RECOVERY_STATES = (CA_RECOVERY, CA_LOSS)
CALM_STATES = (CA_OPEN, CA_DISORDER)


@dataclass(frozen=True)
class Episode:
    start_s: float  # seconds from the SYN
    end_s: float | None  # None: still in recovery when the recording ended
    timeouts: int  # entries into Loss during the episode
    first_state: int


@dataclass
class TransferRun:
    sender: Flow
    receiver: Flow
    probe: ProbeTrace | None
    t0: float  # the SYN, wall clock
    probe_offset_s: float | None  # add to a probe time to get wall clock
    size_bytes: int
    planned: tuple[int, ...]
    verdict: DropVerdict
    episodes: list[Episode] = field(default_factory=list)

    def probe_times(self) -> np.ndarray:
        """tcp_probe sample times in seconds from the SYN (empty without a probe)."""
        if self.probe is None or self.probe_offset_s is None or len(self.probe) == 0:
            return np.zeros(0)
        return self.probe.time_s + self.probe_offset_s - self.t0


def load_transfer_run(run_dir: Path, meta: dict[str, Any]) -> TransferRun:
    verification = meta.get("verification") or {}
    server_port = verification.get("server_port")
    sender = read_flow(run_dir / SENDER_PCAP, server_port)
    receiver = read_flow(run_dir / RECEIVER_PCAP, server_port)
    plan = tuple(int(n) for n in (meta.get("drop_plan") or {}).get("segments", ()))
    captures = meta.get("captures") or {}
    capture_drops = {side: int(facts.get("dropped_by_kernel") or 0)
                     for side, facts in captures.items() if isinstance(facts, dict)}
    log = (meta.get("controller") or {}).get("dropped_segments")
    verdict = verify_drops(sender, receiver, plan,
                           controller_log=None if log is None else [int(n) for n in log],
                           capture_drops=capture_drops)
    probe = read_probe(run_dir)
    offset = (meta.get("clock") or {}).get("realtime_minus_monotonic_s")
    t0 = sender.start_time_s()
    run = TransferRun(sender=sender, receiver=receiver, probe=probe, t0=t0,
                      probe_offset_s=None if offset is None else float(offset),
                      size_bytes=int(verification.get("bytes_requested")
                                     or (meta.get("spec") or {}).get("options", {}).get("size", 0)),
                      planned=plan, verdict=verdict)
    run.episodes = episodes(run)
    return run


def episodes(run: TransferRun) -> list[Episode]:
    """Recovery episodes from tcp_cong_state_set, in seconds from the SYN."""
    if run.probe is None or run.probe_offset_s is None:
        return []
    out: list[Episode] = []
    start: float | None = None
    first = CA_OPEN
    timeouts = 0
    for change in run.probe.state_changes:
        t = change.time_s + run.probe_offset_s - run.t0
        if change.ca_state in RECOVERY_STATES:
            if start is None:
                start, first, timeouts = t, change.ca_state, 0
            if change.ca_state == CA_LOSS:
                timeouts += 1
        elif change.ca_state in CALM_STATES and start is not None:
            out.append(Episode(start, t, timeouts, first))
            start = None
    if start is not None:
        out.append(Episode(start, None, timeouts, first))
    return out


def episode_sending(run: TransferRun, episode: Episode) -> dict[str, Any]:
    """What the sender's capture shows inside an episode (new segments, waiting, bursts)."""
    end = episode.end_s if episode.end_s is not None else float("inf")
    start = episode.start_s

    def inside(t_abs: float) -> bool:
        return start <= t_abs - run.t0 < end

    sends = [d for d in run.sender.data if inside(d.time_s)]
    acks = [a for a in run.sender.acks if inside(a.time_s)]
    new = [d for d in sends if not d.retransmission]
    acks_before_new = (sum(1 for a in acks if a.time_s < new[0].time_s) if new else None)
    # Bursts: sends grouped by the last ACK that arrived before them (the episode's start
    # counts as an arrival: the ACK that opened it).
    ack_times = sorted(a.time_s for a in acks)
    groups: dict[int, int] = {}
    for d in sends:
        k = int(np.searchsorted(ack_times, d.time_s, side="right"))
        groups[k] = groups.get(k, 0) + 1
    sent_before = max((d.end for d in run.sender.data if d.time_s - run.t0 < start),
                      default=0)
    return {"new_segments": len(new), "retransmissions": len(sends) - len(new),
            "unsent_bytes": max(0, run.size_bytes - sent_before),
            "acks": len(acks), "acks_before_new": acks_before_new,
            "max_burst": max(groups.values(), default=0)}


DUPTHRESH = 3


def path_delays_ms(run: TransferRun) -> list[float]:
    """Sender capture to receiver capture, ms, for every data transmission that arrived
    (the bottleneck's delay and queue, plus what the controller path held it)."""
    arrivals: dict[tuple, list[float]] = {}
    for d in run.receiver.data:
        arrivals.setdefault(d.identity(), []).append(d.time_s)
    delays = []
    for d in run.sender.data:
        times = arrivals.get(d.identity())
        if times:
            delays.append((times.pop(0) - d.time_s) * 1000)
    return delays


def legacy_triggers(flow: Flow) -> tuple[float | None, float | None]:
    """Wall times of the first ACK where FACK, and where dupthresh, would start recovery."""
    mss = flow.mss or 1
    fack = dup = None
    dupacks = 0
    last_ack = 0  # the handshake acknowledged no data: an ACK of 0 with SACK is a duplicate
    for a in flow.acks:
        highest = max((end for _, end in a.sack), default=a.ack)
        if fack is None and highest - a.ack > DUPTHRESH * mss:
            fack = a.time_s
        if a.ack == last_ack and a.sack:
            dupacks += 1
            if dup is None and dupacks >= DUPTHRESH:
                dup = a.time_s
        else:
            dupacks = 0
        last_ack = a.ack
    return fack, dup


def transfer_metrics(run: TransferRun, meta: dict[str, Any]) -> dict[str, Any]:
    """metrics.json of a switched-path run (None where an input is missing)."""
    done_at = run.sender.time_acked(run.size_bytes) if run.size_bytes else None
    first_data = run.sender.data[0].time_s if run.sender.data else None
    m: dict[str, Any] = {
        "transfer_time_s": (None if done_at is None or first_data is None
                            else done_at - first_data),
        "handshake_s": None if first_data is None else first_data - run.t0,
        "mss": run.sender.mss, "original_segments": len(run.sender.originals),
        "retransmissions": len(run.sender.retransmissions),
        "drops_as_planned": run.verdict.valid, "drop_verdict": run.verdict.reason() or "ok",
        "dropped_segments": list(run.verdict.dropped), "planned_segments": list(run.planned),
        "recovery_episodes": len(run.episodes),
        "time_in_recovery_s": (sum((e.end_s or 0.0) - e.start_s for e in run.episodes
                                   if e.end_s is not None) if run.probe is not None else None),
        "timeouts": (sum(e.timeouts for e in run.episodes) if run.probe is not None else None),
    }
    window = check_windows(run.probe, run.sender.mss) if run.probe is not None else None
    m["window_valid"] = None if window is None else window.valid
    m["window_verdict"] = None if window is None else (window.reason() or "ok")
    delays = path_delays_ms(run)
    m["path_delay_median_ms"] = float(np.median(delays)) if delays else None
    m["path_delay_max_ms"] = max(delays) if delays else None
    counters = meta.get("tcp_counters") or {}
    m["tcp_timeouts_counter"] = counters.get("TcpExt.TCPTimeouts")
    m["tcp_loss_probes_counter"] = counters.get("TcpExt.TCPLossProbes")
    m["controller_latency_ms"] = (meta.get("controller") or {}).get("added_latency_ms")
    info = (meta.get("verification") or {}).get("tcp_info") or {}
    m["total_retrans_tcp_info"] = info.get("total_retrans")
    m["final_cwnd_tcp_info"] = info.get("snd_cwnd")
    m["final_ssthresh_tcp_info"] = info.get("snd_ssthresh")
    first = run.episodes[0] if run.episodes else None
    keys = ("cwnd_entry", "ssthresh_entry", "cwnd_exit", "ssthresh_exit", "recovery_start_s",
            "recovery_end_s", "new_in_recovery", "recovery_acks", "acks_before_new",
            "max_burst", "unsent_at_recovery_bytes", "entry_after_fack_ms",
            "acks_after_fack", "entry_after_dupthresh_ms", "acks_after_dupthresh")
    m.update(dict.fromkeys(keys))
    if first is not None and run.probe is not None:
        m["recovery_start_s"] = first.start_s
        m["recovery_end_s"] = first.end_s
        kernel = recovery_episodes(run.probe)
        if kernel:
            m["cwnd_entry"] = kernel[0].cwnd_before
            m["ssthresh_entry"] = kernel[0].ssthresh
            m["cwnd_exit"] = kernel[0].cwnd_at_exit
            m["ssthresh_exit"] = kernel[0].ssthresh_at_exit
        sending = episode_sending(run, first)
        m["new_in_recovery"] = sending["new_segments"]
        m["recovery_acks"] = sending["acks"]
        m["acks_before_new"] = sending["acks_before_new"]
        m["max_burst"] = sending["max_burst"]
        m["unsent_at_recovery_bytes"] = sending["unsent_bytes"]
        entry = run.t0 + first.start_s
        fack, dup = legacy_triggers(run.sender)
        for name, when in (("fack", fack), ("dupthresh", dup)):
            m[f"entry_after_{name}_ms"] = None if when is None else (entry - when) * 1000
            m[f"acks_after_{name}"] = (None if when is None else sum(
                1 for a in run.sender.acks if when < a.time_s <= entry))
    # It reads a TransferRun, so it imports this module: not at import time.
    from runkinds.switched_path.recovery_entry import recovery_entry
    m.update(recovery_entry(run))
    return m
