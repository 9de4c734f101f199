"""The per-ACK recovery model on a time axis: one transfer over the PRR path, its losses
marked as Linux 3.1 marked them (FACK) or as this kernel marks them (RACK).

A pure model, measured nothing. It runs one transfer of `size_bytes` as prr-fig2 does:
IW10 sent at time 0, the path dropping chosen *original* segments (numbered from 1), and
the window rules of experiments/prr/recovery_model.py (rate halving, RFC 3517, PRR) on
every ACK. What it adds to that model is when things happen, and the two loss markings.

The path (assumptions, each a simplification of prr-fig2's):

- segments leave the sender `send_gap_ms` apart when several go on one event (a real
  sender's are microseconds apart; the gap only orders their timestamps, which RACK reads);
- drops happen before the bottleneck (the switch), so a dropped segment takes no link time;
- the bottleneck is one FIFO at `rate_mbps`, a segment taking (payload + 56) bytes of it
  (netrepro-link counts IP length + 4), then `rtt_ms / 2` of fixed delay;
- the receiver ACKs every segment at once, with SACK blocks for everything above the
  cumulative ACK (no delayed ACKs, no limit of 3 blocks); ACKs take `rtt_ms / 2` back and
  no link time; no controller on the path (in the runs the first round trip crosses it);
- the receiver's window, when `rwnd_segments` is given, lets the sender send only below
  the cumulative ACK + that many segments (a 2011 receiver offered 10 segments at first,
  TCP_DEFAULT_INIT_RCVWND); None: no limit (this kernel's receiver offers 30 and grows);
- growth outside recovery is Reno's (slow start below ssthresh); ssthresh at entry is
  Cubic's 717/1024 or Reno's 1/2 of cwnd;
- the kernel's timers: RACK's reordering timer as tcp_rack_mark_lost arms it (the time
  left, rounded up to 4 ms jiffies, plus TCP_TIMEOUT_MIN = 2 jiffies), and an RTO of
  `min_rto_ms + rtt_ms` after the last progress; no tail loss probe (the runs turn it off).

Loss marking (`LossMarking`), as the kernels' sources have it:

- FACK (Linux 3.1, net/ipv4/tcp_input.c: tcp_time_to_recover, tcp_update_scoreboard,
  tcp_mark_head_lost, tcp_fastretrans_alert): fackets_out is the number of segments from
  snd_una up to the highest SACKed one. Recovery starts when fackets_out > reordering (3)
  or a segment is already marked lost. On an ACK that is a duplicate, that SACKs new data
  with fackets_out > reordering, or (in recovery) a partial ACK with fackets_out >
  reordering, the first max(fackets_out - reordering, 1) segments from snd_una (SACKed ones
  counted, not marked) sent before recovery began are marked lost. With `forward
  retransmission` (3.1's tcp_xmit_retransmit_queue) a hole below the highest SACK that is
  not yet marked is retransmitted when no new data may be sent.
- RACK (this kernel, net/ipv4/tcp_recovery.c: tcp_rack_advance, tcp_rack_detect_loss,
  tcp_rack_reo_wnd, tcp_rack_reo_timeout): RACK remembers the most recently sent segment
  that was delivered (a retransmission only if its round trip is at least min_rtt) and the
  round trip it took. A segment sent before it is lost once it has waited that round trip
  plus the reordering window; otherwise the timer is armed for the time left. The window is
  min_rtt / 4 until recovery, and 0 in recovery or once `reordering` segments are SACKed
  (the DUPACK threshold; tcp_recovery bit 0x4 turns that shortcut off). Recovery starts when
  a segment is marked lost, on an ACK or on the timer.
- DUPTHRESH: RFC 6675's IsLost (reordering SACKed segments above a hole), as the untimed
  model marks.

Rows (`Event`): one per ACK the sender processes and one per timer that fired; cwnd and
pipe after the event is processed, before anything is sent on it (as in RFC 6937's
tables), what was sent, the state.
"""
from __future__ import annotations

import enum
import heapq
import math
from dataclasses import dataclass, field, replace
from typing import Any

from experiments.prr.recovery_model import (PrrVariant, Recovery, prr_send_count,
                                            rate_halving_step, reno_grow)

INFINITE_SSTHRESH = 0x7FFFFFFF
LINK_OVERHEAD_BYTES = 56  # IP and TCP headers with timestamps (52) + 4, as netrepro-link counts
MAX_EVENTS = 10_000


class LossMarking(enum.Enum):
    FACK = "fack"  # Linux <= 4.14's default; the paper's kernels
    RACK = "rack"  # Linux >= 4.18; the only SACK loss detection from 6.17
    DUPTHRESH = "dupthresh"  # RFC 6675 IsLost


class CaState(enum.IntEnum):
    OPEN = 0
    DISORDER = 1
    RECOVERY = 3
    LOSS = 4


@dataclass(frozen=True)
class PathModel:
    rate_mbps: float = 10.0
    rtt_ms: float = 40.0  # the fixed delay, both ways; also min_rtt (the handshake's)
    send_gap_ms: float = 0.005
    jiffy_ms: float = 4.0  # HZ = 250
    min_rto_ms: float = 200.0

    def serialization_ms(self, payload: int) -> float:
        return (payload + LINK_OVERHEAD_BYTES) * 8 / (self.rate_mbps * 1000)


@dataclass(frozen=True)
class SenderModel:
    """One sender; the defaults are this kernel's (`this_kernel`), `linux_3` gives the
    paper's."""

    marking: LossMarking
    recovery: Recovery
    base: str = "cubic"  # ssthresh (Cubic 717/1024, Reno 1/2) and rate halving's floor
    variant: PrrVariant = PrrVariant.LINUX
    reordering: int = 3  # tp->reordering: net.ipv4.tcp_reordering
    rack_dupthresh: bool = True  # False: tcp_recovery bit 0x4 (RACK_NO_DUPTHRESH)
    # Linux 3.1 retransmitted holes below the highest SACK when no new data could go
    # (tcp_xmit_retransmit_queue's forward retransmission), and did not grow cwnd on the
    # ACK that ended recovery (tcp_may_raise_cwnd still saw the Recovery state); this kernel
    # does neither and grows on that ACK.
    forward_retransmit: bool = False
    grow_on_exit_ack: bool = True
    iw: int = 10

    def __post_init__(self) -> None:
        if self.base not in ("cubic", "reno"):
            raise ValueError(f"base must be cubic or reno, not {self.base!r}")
        if self.reordering < 1 or self.iw < 1:
            raise ValueError("reordering and iw must be at least 1")


def this_kernel(recovery: Recovery, **changes: Any) -> SenderModel:
    """A sender as this kernel (6.18) runs one: RACK, PRR as Linux >= 4.3."""
    return replace(SenderModel(LossMarking.RACK, recovery), **changes)


def linux_3(recovery: Recovery, **changes: Any) -> SenderModel:
    """A sender as the paper's kernels ran one: FACK (3.1's default) with forward
    retransmission and no growth on the exit ACK; PRR as Linux 3.2-4.2 had it (SSRB)."""
    return replace(SenderModel(LossMarking.FACK, recovery, variant=PrrVariant.LINUX_SSRB,
                               forward_retransmit=True, grow_on_exit_ack=False),
                   **changes)


@dataclass(frozen=True)
class Transfer:
    size_bytes: int = 32 * 1024
    mss: int = 1448
    drops: frozenset[int] = frozenset()  # original segments the path drops, from 1
    rwnd_segments: int | None = None  # receive window from the cumulative ACK; None: no limit

    def __post_init__(self) -> None:
        if self.size_bytes < 1 or self.mss < 1:
            raise ValueError("size_bytes and mss must be positive")
        if any(n < 1 for n in self.drops):
            raise ValueError("segments are numbered from 1")
        if self.rwnd_segments is not None and self.rwnd_segments < 1:
            raise ValueError("rwnd_segments must be at least 1")

    @property
    def segments(self) -> int:
        return math.ceil(self.size_bytes / self.mss)

    def payload(self, n: int) -> int:
        return min(self.mss, self.size_bytes - (n - 1) * self.mss)


@dataclass(frozen=True)
class Event:
    time_ms: float
    kind: str  # "ack", "reo-timer" or "rto"
    segment: int  # the segment whose arrival triggered the ACK (0 for a timer)
    retransmission: bool  # ... and whether that arrival was a retransmission
    cwnd: int
    ssthresh: int
    pipe: int
    sent_new: int
    sent_retrans: int
    state: CaState
    newly_lost: int
    entered: bool = False  # this event started a recovery (or, for "rto", a Loss episode)
    ended: bool = False  # this event ended one


@dataclass(frozen=True)
class TransferResult:
    events: tuple[Event, ...]
    transfer_ms: float | None  # first data segment sent to the ACK of the last byte
    timeouts: int

    @property
    def entry(self) -> Event | None:
        """The event that started the first recovery."""
        return next((e for e in self.events if e.entered and e.kind != "rto"), None)

    @property
    def exit(self) -> Event | None:
        """The event that ended the first recovery."""
        return next((e for e in self.events if e.ended), None)

    @property
    def exit_cwnd(self) -> int | None:
        """cwnd as the ACK that ended the first recovery left it (what tcp_probe samples next,
        and what prr-fig2's cwnd_exit reads)."""
        end = self.exit
        return None if end is None else end.cwnd

    @property
    def acks_before_entry(self) -> int | None:
        entry = self.entry
        if entry is None:
            return None
        return sum(1 for e in self.events if e.kind == "ack" and e.time_ms < entry.time_ms)

    def acks_waited(self) -> int | None:
        """ACKs of the first recovery before the first one that let new data go, counted from
        the ACK that started it; all of its ACKs when none did (prr-fig2's acks_waited)."""
        entry = self.entry
        if entry is None:
            return None
        end = self.exit
        inside = [e for e in self.events if e.kind == "ack" and e.time_ms >= entry.time_ms
                  and (end is None or e.time_ms < end.time_ms)]
        return next((i for i, e in enumerate(inside) if e.sent_new), len(inside))

    def min_cwnd_in_recovery(self) -> int | None:
        inside = [e.cwnd for e in self.events if e.state is CaState.RECOVERY]
        return min(inside) if inside else None


class ModelError(RuntimeError):
    """The model ran past its event budget (a bug, or a transfer that never ends)."""


@dataclass
class _Seg:
    n: int
    xmit_ms: float
    sacked: bool = False
    lost: bool = False
    retrans_out: bool = False  # a retransmission of it is in flight (SACKED_RETRANS)
    retransmitted: bool = False  # ever (TCPCB_EVER_RETRANS)


@dataclass
class _Sender:
    """One sender's state; the window-rule fields are recovery_model.WindowState's."""

    cfg: SenderModel
    variant: PrrVariant
    floor_half: bool
    cwnd: int
    ssthresh: int = INFINITE_SSTHRESH
    prr_delivered: int = 0
    prr_out: int = 0
    recover_fs: int = 0
    rh_count: int = 0
    ca_count: int = 0
    state: CaState = CaState.OPEN
    snd_una: int = 1
    snd_nxt: int = 1
    high_seq: int = 1
    segs: dict[int, _Seg] = field(default_factory=dict)
    rack_key: tuple[float, int] | None = None  # (sent at, segment) of RACK's reference
    rack_rtt_ms: float = 0.0

    def pipe(self) -> int:
        return sum((0 if s.lost else 1) + (1 if s.retrans_out else 0)
                   for s in self.segs.values() if not s.sacked)

    def sacked_out(self) -> int:
        return sum(1 for s in self.segs.values() if s.sacked)

    def lost_out(self) -> int:
        return sum(1 for s in self.segs.values() if s.lost and not s.sacked)

    def fackets_out(self) -> int:
        sacked = [s.n for s in self.segs.values() if s.sacked]
        return max(sacked) - self.snd_una + 1 if sacked else 0

    def reduced_ssthresh(self) -> int:
        if self.cfg.base == "cubic":
            return max(self.cwnd * 717 // 1024, 2)
        return max(self.cwnd // 2, 2)


def simulate_transfer(sender: SenderModel, transfer: Transfer,
                      path: PathModel = PathModel()) -> TransferResult:
    """Run one transfer; its events in time order."""
    return _Run(sender, transfer, path).run()


class _Run:
    def __init__(self, cfg: SenderModel, transfer: Transfer, path: PathModel) -> None:
        self.cfg, self.transfer, self.path = cfg, transfer, path
        self.s = _Sender(cfg, cfg.variant, floor_half=(cfg.base == "reno"), cwnd=cfg.iw)
        self.queue: list[tuple[float, int, str, tuple]] = []
        self.order = 0
        self.link_free_ms = 0.0
        self.received: set[int] = set()
        self.rcv_nxt = 1
        self.reo_deadline: float | None = None
        self.rto_deadline: float | None = None
        self.events: list[Event] = []
        self.timeouts = 0
        self.done_ms: float | None = None

    # ------------------------------------------------------------------ the path

    def _push(self, time_ms: float, kind: str, data: tuple) -> None:
        self.order += 1
        heapq.heappush(self.queue, (time_ms, self.order, kind, data))

    def _transmit(self, n: int, t: float, retransmission: bool) -> None:
        if not retransmission and n in self.transfer.drops:
            return  # dropped at the switch, before the bottleneck
        start = max(t, self.link_free_ms)
        self.link_free_ms = start + self.path.serialization_ms(self.transfer.payload(n))
        self._push(self.link_free_ms + self.path.rtt_ms / 2, "arrive", (n, retransmission))

    def _arrive(self, t: float, n: int, retransmission: bool) -> None:
        self.received.add(n)
        while self.rcv_nxt in self.received:
            self.rcv_nxt += 1
        sacks = frozenset(m for m in self.received if m > self.rcv_nxt)
        self._push(t + self.path.rtt_ms / 2, "ack", (self.rcv_nxt, sacks, n, retransmission))

    # ------------------------------------------------------------------ the loop

    def run(self) -> TransferResult:
        self._send(0.0, self.cfg.iw)
        self.rto_deadline = self._rto_from(0.0)
        while self.done_ms is None:
            if len(self.events) > MAX_EVENTS:
                raise ModelError(f"no end after {MAX_EVENTS} events")
            t, kind, data = self._next()
            if kind == "arrive":
                self._arrive(t, *data)
            elif kind == "ack":
                self._on_ack(t, *data)
            elif kind == "reo":
                self._on_reo_timer(t)
            else:
                self._on_rto(t)
        return TransferResult(tuple(self.events), self.done_ms, self.timeouts)

    def _next(self) -> tuple[float, str, tuple]:
        timers = [(d, k) for d, k in ((self.reo_deadline, "reo"), (self.rto_deadline, "rto"))
                  if d is not None]
        first_timer = min(timers, default=None)
        if self.queue and (first_timer is None or self.queue[0][0] <= first_timer[0]):
            t, _, kind, data = heapq.heappop(self.queue)
            return t, kind, data
        if first_timer is None:
            raise ModelError("nothing in flight, no timer armed, data unacknowledged")
        t, kind = first_timer
        if kind == "reo":
            self.reo_deadline = None
        else:
            self.rto_deadline = None
        return t, kind, ()

    def _rto_from(self, t: float) -> float:
        return t + self.path.min_rto_ms + self.path.rtt_ms

    # ------------------------------------------------------------------ the sender

    def _on_ack(self, t: float, cum: int, sacks: frozenset[int], trigger: int,
                retransmission: bool) -> None:
        s = self.s
        una_advanced = cum > s.snd_una
        newly: list[_Seg] = []
        for n in range(s.snd_una, cum):
            seg = s.segs.pop(n)
            if not seg.sacked:
                newly.append(seg)
        s.snd_una = max(s.snd_una, cum)
        newly_sacked = 0
        for n in sorted(sacks):
            held = s.segs.get(n)
            if held is not None and not held.sacked:
                held.sacked, held.lost, held.retrans_out = True, False, False
                newly.append(held)
                newly_sacked += 1
        delivered = len(newly)
        rack_advanced = self._rack_advance(t, newly)
        if s.snd_una > self.transfer.segments:
            self.done_ms = t

        entered = ended = False
        newly_lost = 0
        # D. the end of a recovery or a Loss episode
        if s.state in (CaState.RECOVERY, CaState.LOSS) and s.snd_una >= s.high_seq:
            if s.state is CaState.RECOVERY:
                s.cwnd = (min(s.cwnd, s.ssthresh) if self.cfg.recovery is Recovery.RATE_HALVING
                          else s.ssthresh)
                ended = True
            s.state = CaState.OPEN
        # E/F. loss marking, and the start of a recovery
        if self.cfg.marking is LossMarking.FACK:
            newly_lost, entered = self._fack(una_advanced, newly_sacked)
        else:
            if self.cfg.marking is LossMarking.RACK:
                newly_lost = self._rack_detect(t) if rack_advanced else 0
            else:
                newly_lost = self._dupthresh_mark()
            if s.state in (CaState.OPEN, CaState.DISORDER) and s.lost_out():
                self._enter_recovery()
                entered = True
        if s.state in (CaState.OPEN, CaState.DISORDER):
            s.state = CaState.DISORDER if s.segs and (s.sacked_out() or s.lost_out()) \
                else CaState.OPEN

        pipe = s.pipe()
        sndcnt = self._window(delivered, pipe, una_advanced, newly_lost, ended)
        row = self._send(t, sndcnt, kind="ack", segment=trigger, retransmission=retransmission,
                         pipe=pipe, newly_lost=newly_lost, entered=entered, ended=ended)
        if una_advanced or row.sent_new or row.sent_retrans:
            self.rto_deadline = self._rto_from(t) if s.segs else None

    def _window(self, delivered: int, pipe: int, una_advanced: bool, newly_lost: int,
                ended: bool) -> int:
        """cwnd for this ACK (set on the sender); how many segments it lets go."""
        s = self.s
        if s.state is CaState.RECOVERY:
            if self.cfg.recovery is Recovery.PRR:
                sndcnt, _ = prr_send_count(s, delivered, pipe,
                                           una_advanced and newly_lost == 0)
                s.cwnd = pipe + sndcnt
                return sndcnt
            if self.cfg.recovery is Recovery.RATE_HALVING:
                if delivered or una_advanced:
                    rate_halving_step(s, pipe)
                return max(s.cwnd - pipe, 0)
            return max(s.cwnd - pipe, 0 if s.prr_out else 1)  # RFC 3517 / 6675
        if una_advanced and (self.cfg.grow_on_exit_ack or not ended):
            reno_grow(s, delivered)
        return max(s.cwnd - pipe, 0)

    def _enter_recovery(self) -> None:
        s = self.s
        s.state = CaState.RECOVERY
        s.high_seq = s.snd_nxt
        s.ssthresh = s.reduced_ssthresh()
        s.prr_delivered = s.prr_out = s.rh_count = 0
        s.recover_fs = s.cwnd  # Linux: prior_cwnd
        if self.cfg.recovery is Recovery.RFC6675:
            s.cwnd = s.ssthresh

    # ------------------------------------------------------------------ FACK (Linux 3.1)

    def _fack(self, una_advanced: bool, newly_sacked: int) -> tuple[int, bool]:
        s, reordering = self.s, self.cfg.reordering
        fackets = s.fackets_out()
        do_lost = not una_advanced or (newly_sacked > 0 and fackets > reordering)
        entered = False
        if s.state is CaState.RECOVERY:
            if una_advanced:
                do_lost = fackets > reordering  # a partial ACK: tcp_try_undo_partial's "failed"
        elif s.state is CaState.LOSS:
            return 0, False
        elif s.lost_out() or fackets > reordering:  # tcp_time_to_recover
            self._enter_recovery()
            entered = True
        else:
            return 0, False
        if not do_lost:
            return 0, entered
        # tcp_update_scoreboard / tcp_mark_head_lost: the first max(fackets - reordering, 1)
        # segments from snd_una, SACKed ones counted, sent before recovery began.
        limit = max(fackets - reordering, 1)
        newly = 0
        for count, n in enumerate(range(s.snd_una, s.high_seq), start=1):
            if count > limit:
                break
            seg = s.segs[n]
            if not seg.sacked and not seg.lost:
                seg.lost = True
                newly += 1
        return newly, entered

    # ------------------------------------------------------------------ RACK (this kernel)

    def _rack_advance(self, t: float, delivered: list[_Seg]) -> bool:
        s = self.s
        advanced = False
        for seg in delivered:
            rtt = t - seg.xmit_ms
            if seg.retransmitted and rtt < self.path.rtt_ms:
                continue  # ambiguous: the original may have been the one delivered
            key = (seg.xmit_ms, seg.n)
            if s.rack_key is None or key > s.rack_key:
                s.rack_key, s.rack_rtt_ms = key, rtt
                advanced = True
        return advanced

    def _reo_wnd_ms(self) -> float:
        s = self.s
        if s.state >= CaState.RECOVERY:
            return 0.0
        if self.cfg.rack_dupthresh and s.sacked_out() >= self.cfg.reordering:
            return 0.0
        return self.path.rtt_ms / 4  # min_rtt / 4 (one step; no DSACK here to widen it)

    def _rack_detect(self, t: float) -> int:
        """Mark what RACK finds lost; (re)arm its timer for the rest. Returns how many."""
        s = self.s
        if s.rack_key is None:
            return 0
        reo_wnd = self._reo_wnd_ms()
        newly, wait_us = 0, -1
        for seg in sorted(s.segs.values(), key=lambda g: (g.xmit_ms, g.n)):
            if seg.sacked or (seg.lost and not seg.retrans_out):
                continue
            if not (seg.xmit_ms, seg.n) < s.rack_key:
                break
            remaining_us = round((s.rack_rtt_ms + reo_wnd - (t - seg.xmit_ms)) * 1000)
            if remaining_us < 0:
                seg.lost, seg.retrans_out = True, False
                newly += 1
            else:
                wait_us = max(wait_us, remaining_us)
        if wait_us >= 0:
            jiffy_us = round(self.path.jiffy_ms * 1000)
            jiffies = math.ceil((wait_us + 1) / jiffy_us) + 2  # + TCP_TIMEOUT_MIN
            self.reo_deadline = t + jiffies * self.path.jiffy_ms
        else:
            self.reo_deadline = None  # the ACK re-arms the RTO instead
        return newly

    def _on_reo_timer(self, t: float) -> None:
        s = self.s
        before = s.pipe()
        newly = self._rack_detect(t)
        entered = False
        sndcnt = 0
        if s.pipe() != before:
            if s.state is not CaState.RECOVERY:
                self._enter_recovery()
                entered = True
                if self.cfg.recovery is Recovery.PRR:  # tcp_cwnd_reduction(sk, 1, 0, 0)
                    count, _ = prr_send_count(s, 1, s.pipe(), False)
                    s.cwnd = s.pipe() + count
                # an eBPF cong_control is not called here: its cwnd stays as it was
            sndcnt = max(s.cwnd - s.pipe(), 0)
        self._send(t, sndcnt, kind="reo-timer", pipe=s.pipe(), newly_lost=newly,
                   entered=entered)

    # ------------------------------------------------------------------ marking for DUPTHRESH

    def _dupthresh_mark(self) -> int:
        s = self.s
        sacked = sorted(g.n for g in s.segs.values() if g.sacked)
        newly = 0
        for seg in s.segs.values():
            if seg.sacked or seg.lost:
                continue
            if sum(1 for n in sacked if n > seg.n) >= self.cfg.reordering:
                seg.lost = True
                newly += 1
        return newly

    # ------------------------------------------------------------------ timeouts

    def _on_rto(self, t: float) -> None:
        s = self.s
        self.timeouts += 1
        if s.state <= CaState.DISORDER or s.snd_una >= s.high_seq:
            s.ssthresh = s.reduced_ssthresh()
        s.cwnd = 1
        for seg in s.segs.values():
            if not seg.sacked:
                seg.lost, seg.retrans_out = True, False
        s.state = CaState.LOSS
        s.high_seq = s.snd_nxt
        self.reo_deadline = None
        self._send(t, max(s.cwnd - s.pipe(), 1), kind="rto", pipe=s.pipe(), newly_lost=0,
                   entered=True)
        self.rto_deadline = self._rto_from(t)

    # ------------------------------------------------------------------ sending

    def _send(self, t: float, count: int, kind: str = "", segment: int = 0,
              retransmission: bool = False, pipe: int = 0, newly_lost: int = 0,
              entered: bool = False, ended: bool = False) -> Event:
        s = self.s
        new = retrans = 0
        for k in range(max(count, 0)):
            when = t + k * self.path.send_gap_ms
            n = self._next_retransmission()
            if n is not None:
                seg = s.segs[n]
                seg.xmit_ms, seg.retrans_out, seg.retransmitted = when, True, True
                self._transmit(n, when, retransmission=True)
                retrans += 1
            elif self._may_send_new():
                n = s.snd_nxt
                s.segs[n] = _Seg(n, when)
                s.snd_nxt += 1
                self._transmit(n, when, retransmission=False)
                new += 1
            else:
                n = self._forward_hole()
                if n is None:
                    break
                seg = s.segs[n]
                seg.xmit_ms, seg.retrans_out, seg.retransmitted = when, True, True
                self._transmit(n, when, retransmission=True)
                retrans += 1
        if s.state is CaState.RECOVERY:
            s.prr_out += new + retrans
        event = Event(t, kind, segment, retransmission, s.cwnd, s.ssthresh, pipe, new, retrans,
                      s.state, newly_lost, entered, ended)
        if kind:
            self.events.append(event)
        return event

    def _next_retransmission(self) -> int | None:
        return min((g.n for g in self.s.segs.values()
                    if g.lost and not g.retrans_out and not g.sacked), default=None)

    def _may_send_new(self) -> bool:
        s = self.s
        if s.snd_nxt > self.transfer.segments:
            return False
        rwnd = self.transfer.rwnd_segments
        return rwnd is None or s.snd_nxt < s.snd_una + rwnd

    def _forward_hole(self) -> int | None:
        """Linux 3.1's forward retransmission: the lowest hole below the highest SACK that is
        neither marked lost nor retransmitted, in recovery, when no new data may go."""
        s = self.s
        if not self.cfg.forward_retransmit or s.state is not CaState.RECOVERY:
            return None
        sacked = [g.n for g in s.segs.values() if g.sacked]
        if not sacked:
            return None
        top = max(sacked)
        return min((g.n for g in s.segs.values()
                    if g.n < top and not (g.sacked or g.lost or g.retrans_out)), default=None)
