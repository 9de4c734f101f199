"""Per-ACK model of TCP fast recovery: RFC 6675/3517, Linux <= 3.1 rate halving, and PRR.

A pure model, measured nothing: a SACK sender with a window of segments in
flight, a path that drops chosen *original* transmissions and delivers
everything else in the order it was sent (a FIFO, as on a single link with
no reordering), and a receiver that ACKs every segment at once with SACK.
For every returning ACK the model records what the RFC 6937 and RFC 9937
examples tabulate: cwnd and pipe after the ACK is processed but before
anything is sent on it, and what is sent ("N" new data, "R" a
retransmission, "7R" seven of them).

Loss marking is RFC 6675's IsLost (DupThresh SACKed segments above a hole),
which here marks the same segments Linux's RACK does (no reordering seen:
RACK's reordering window is zero once DupThresh segments are SACKed).

Recoveries (`Recovery`):

- RFC6675: at entry ssthresh from the CC, cwnd = ssthresh; the first lost
  segment is retransmitted whatever pipe is; then send while pipe < cwnd.
  (RFC 3517 behaves the same way in these examples.) At exit cwnd = ssthresh.
- RATE_HALVING: Linux <= 3.1 (tcp_cwnd_down, tcp_complete_cwr): cwnd
  unchanged at entry; every second ACK that makes progress lowers cwnd by one
  while cwnd > floor (Reno: ssthresh / 2; Cubic: ssthresh); then
  cwnd = min(cwnd, pipe + 1); send while pipe < cwnd; at exit
  cwnd = min(cwnd, ssthresh).
- PRR with a `PrrVariant`: prr_delivered += DeliveredData; if pipe > ssthresh
  sndcnt = ceil(prr_delivered * ssthresh / RecoverFS) - prr_out, else a
  reduction bound: CRB min(ssthresh - pipe, prr_delivered - prr_out); SSRB
  (RFC 6937) min(ssthresh - pipe, max(prr_delivered - prr_out, DeliveredData)
  + 1); LINUX (tcp_cwnd_reduction, Linux >= 4.3) as SSRB but the +1 only on an
  ACK that advances snd_una without marking a new loss, RecoverFS =
  prior_cwnd, and sndcnt >= 1 while prr_out == 0; LINUX_SSRB (Linux 3.2-4.2,
  the paper's PRR: tcp_update_cwnd_in_recovery, later tcp_cwnd_reduction,
  before commit 3759824da87b) as LINUX but the +1 on every ACK; RFC9937 as LINUX but one
  segment forced only when prr_out == 0 and sndcnt == 0, and RecoverFS =
  snd.nxt - snd.una at entry less what was SACKed before it. cwnd = pipe +
  sndcnt; at exit cwnd = ssthresh.

The "RB" flag of RFC 6937 names the bound that set a send in the reduction
bound branch: s = ssthresh - pipe, b = the banked prr_delivered - prr_out
(+1 under SSRB), d = DeliveredData + 1 (SSRB); blank when nothing was sent.

Outside recovery the sender sends while pipe < cwnd (so each dupACK clocks
out one new segment, as Limited Transmit and Linux's Disorder state do) and
grows cwnd as Reno on ACKs that advance snd_una.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Iterable, Protocol


class Recovery(enum.Enum):
    RFC6675 = "rfc6675"
    RATE_HALVING = "rate-halving"
    PRR = "prr"


class PrrVariant(enum.Enum):
    CRB = "crb"  # RFC 6937, conservative reduction bound
    SSRB = "ssrb"  # RFC 6937, slow-start reduction bound
    LINUX = "linux"  # tcp_cwnd_reduction: +1 only on a safe ACK, RecoverFS = prior_cwnd
    LINUX_SSRB = "linux-3.2"  # Linux 3.2-4.2: as LINUX, the +1 on every ACK
    RFC9937 = "rfc9937"


class SsthreshRule(enum.Enum):
    FLIGHT = "flight"  # RFC 5681/6675: FlightSize / 2 (snd.nxt - snd.una at entry)
    CWND = "cwnd"  # Linux tcp_reno_ssthresh: cwnd / 2


class WindowState(Protocol):
    """What the window rules below read and write: this model's sender and the transfer
    model's (experiments/prr/transfer_model.py) both have it."""

    variant: PrrVariant
    floor_half: bool
    cwnd: int
    ssthresh: int
    prr_delivered: int
    prr_out: int
    recover_fs: int
    rh_count: int
    ca_count: int


@dataclass(frozen=True)
class Scenario:
    """One flight of `window` segments (0 .. window-1) with cwnd = FlightSize = pipe = window."""

    window: int = 20
    lost: frozenset[int] = frozenset({0})  # original transmissions the path drops
    acks: int = 19  # returning ACKs to model
    ssthresh_rule: SsthreshRule = SsthreshRule.FLIGHT
    cubic_beta: float | None = None  # Cubic's ssthresh = cwnd * beta (None: Reno's half)
    dupthresh: int = 3

    def __post_init__(self) -> None:
        if self.window < 1 or self.acks < 1:
            raise ValueError("window and acks must be positive")
        if any(s < 0 for s in self.lost):
            raise ValueError("segments are numbered from 0")


@dataclass(frozen=True)
class AckRow:
    index: int  # 1-based position among the ACKs that returned
    segment: int  # the segment whose arrival triggered this ACK
    retransmission: bool  # ... and whether that arrival was a retransmission
    cwnd: int
    pipe: int
    sent_new: int
    sent_retrans: int
    rb: str = ""  # PRR only
    in_recovery: bool = False

    @property
    def sent(self) -> str:
        """RFC 6937's notation: "", "N", "R", "7R", "2R", or both kinds ("R N")."""
        parts = []
        for count, kind in ((self.sent_retrans, "R"), (self.sent_new, "N")):
            if count:
                parts.append(kind if count == 1 else f"{count}{kind}")
        return " ".join(parts)

    @property
    def sent_total(self) -> int:
        return self.sent_new + self.sent_retrans

    @property
    def window_used(self) -> int:
        """The cwnd a window-based sender holds to send what was sent on this ACK.

        cwnd itself, except where the algorithm sends although pipe >= cwnd (RFC 6675's
        first retransmission): then pipe + what was sent.
        """
        if self.sent_total == 0:
            return self.cwnd
        return max(self.cwnd, self.pipe + self.sent_total)


@dataclass
class _Segment:
    seq: int
    sacked: bool = False
    lost: bool = False
    retransmitted: bool = False


@dataclass
class _Sender:
    recovery: Recovery
    variant: PrrVariant
    scenario: Scenario
    floor_half: bool  # rate halving's floor: ssthresh / 2 (Reno) or ssthresh (Cubic)
    cwnd: int
    ssthresh: int = 1 << 30
    snd_una: int = 0
    snd_nxt: int = 0
    outstanding: dict[int, _Segment] = field(default_factory=dict)
    in_recovery: bool = False
    high_seq: int = 0
    prr_delivered: int = 0
    prr_out: int = 0
    recover_fs: int = 0
    rh_count: int = 0
    ca_count: int = 0

    def pipe(self) -> int:
        total = 0
        for seg in self.outstanding.values():
            if seg.sacked:
                continue
            total += (0 if seg.lost else 1) + (1 if seg.retransmitted else 0)
        return total

    def mark_losses(self) -> int:
        """RFC 6675 IsLost; returns how many segments were newly marked."""
        sacked = sorted(s.seq for s in self.outstanding.values() if s.sacked)
        newly = 0
        for seg in self.outstanding.values():
            if seg.sacked or seg.lost:
                continue
            above = sum(1 for s in sacked if s > seg.seq)
            if above >= self.scenario.dupthresh:
                seg.lost = True
                newly += 1
        return newly

    def base_ssthresh(self, flight: int) -> int:
        basis = flight if self.scenario.ssthresh_rule is SsthreshRule.FLIGHT else self.cwnd
        if self.scenario.cubic_beta is not None:
            return max(int(basis * self.scenario.cubic_beta), 2)
        return max(basis // 2, 2)


def simulate(recovery: Recovery, scenario: Scenario,
             variant: PrrVariant = PrrVariant.LINUX, base: str = "reno") -> list[AckRow]:
    """Run the scenario; one row per returning ACK, at most `scenario.acks` rows."""
    if base not in ("reno", "cubic"):
        raise ValueError(f"base must be reno or cubic, not {base!r}")
    sender = _Sender(recovery, variant, scenario, floor_half=(base == "reno"),
                     cwnd=scenario.window)
    path: list[tuple[int, bool]] = []  # (segment, is retransmission), in sending order
    for seq in range(scenario.window):
        sender.outstanding[seq] = _Segment(seq)
        path.append((seq, False))
    sender.snd_nxt = scenario.window
    received: set[int] = set()
    rows: list[AckRow] = []
    while path and len(rows) < scenario.acks:
        seq, is_retrans = path.pop(0)
        if not is_retrans and seq in scenario.lost:
            continue
        received.add(seq)
        ack = sender.snd_una
        while ack in received:
            ack += 1
        row, sends = _on_ack(sender, len(rows) + 1, seq, is_retrans, ack, received)
        rows.append(row)
        path.extend(sends)
    return rows


def _on_ack(s: _Sender, index: int, seq: int, is_retrans: bool, ack: int,
            received: set[int]) -> tuple[AckRow, list[tuple[int, bool]]]:
    # What this ACK delivers: newly cumulatively ACKed (not SACKed before) + newly SACKed.
    delivered = 0
    una_advanced = ack > s.snd_una
    for q in range(s.snd_una, ack):
        seg = s.outstanding.pop(q)
        if not seg.sacked:
            delivered += 1
    s.snd_una = max(s.snd_una, ack)
    sacked_before = sum(1 for g in s.outstanding.values() if g.sacked)
    for q in received:
        held = s.outstanding.get(q)
        if held is not None and not held.sacked:
            held.sacked = True
            delivered += 1
    newly_lost = s.mark_losses()
    any_lost = any(g.lost for g in s.outstanding.values())

    entering = False
    if not s.in_recovery and any_lost:
        entering = True
        s.in_recovery = True
        s.high_seq = s.snd_nxt
        flight = s.snd_nxt - s.snd_una  # FlightSize at entry
        s.ssthresh = s.base_ssthresh(flight)
        s.prr_delivered = 0
        s.prr_out = 0
        s.rh_count = 0
        if s.variant is PrrVariant.RFC9937:
            s.recover_fs = s.snd_nxt - s.snd_una - sacked_before
        elif s.variant in (PrrVariant.LINUX, PrrVariant.LINUX_SSRB):
            s.recover_fs = s.cwnd  # prior_cwnd
        else:
            s.recover_fs = s.snd_nxt - s.snd_una
        if s.recovery is Recovery.RFC6675:
            s.cwnd = s.ssthresh
    elif s.in_recovery and s.snd_una >= s.high_seq:
        s.in_recovery = False
        s.cwnd = (min(s.cwnd, s.ssthresh) if s.recovery is Recovery.RATE_HALVING
                  else s.ssthresh)

    pipe = s.pipe()
    rb = ""
    if s.in_recovery:
        if s.recovery is Recovery.PRR:
            sndcnt, rb = prr_send_count(s, delivered, pipe, una_advanced and newly_lost == 0)
            s.cwnd = pipe + sndcnt
        elif s.recovery is Recovery.RATE_HALVING:
            if delivered or una_advanced:  # an ACK that makes progress
                rate_halving_step(s, pipe)
            sndcnt = max(s.cwnd - pipe, 0)
        else:
            sndcnt = max(s.cwnd - pipe, 1 if entering else 0)
    else:
        if una_advanced and not entering:
            reno_grow(s, delivered)
        sndcnt = max(s.cwnd - pipe, 0)

    sends: list[tuple[int, bool]] = []
    new = retrans = 0
    for _ in range(sndcnt):
        hole = min((g.seq for g in s.outstanding.values()
                    if g.lost and not g.retransmitted and not g.sacked), default=None)
        if hole is not None:
            s.outstanding[hole].retransmitted = True
            sends.append((hole, True))
            retrans += 1
        else:
            s.outstanding[s.snd_nxt] = _Segment(s.snd_nxt)
            sends.append((s.snd_nxt, False))
            s.snd_nxt += 1
            new += 1
    if s.in_recovery:
        s.prr_out += sndcnt
    row = AckRow(index, seq, is_retrans, s.cwnd, pipe, new, retrans, rb, s.in_recovery)
    return row, sends


def rate_halving_step(s: WindowState, pipe: int) -> None:
    """Linux <= 3.1's tcp_cwnd_down on an ACK that makes progress: every second one lowers
    cwnd by one while it is above the floor, then cwnd = min(cwnd, pipe + 1)."""
    decr = s.rh_count + 1
    s.rh_count = decr & 1
    decr >>= 1
    floor = s.ssthresh // 2 if s.floor_half else s.ssthresh
    if decr and s.cwnd > floor:
        s.cwnd -= decr
    s.cwnd = min(s.cwnd, pipe + 1)


def prr_send_count(s: WindowState, delivered: int, pipe: int,
                   safe_ack: bool) -> tuple[int, str]:
    """sndcnt and the RB flag for one ACK in recovery."""
    linux = (PrrVariant.LINUX, PrrVariant.LINUX_SSRB, PrrVariant.RFC9937)
    if delivered == 0 and s.variant in linux:
        return max(s.cwnd - pipe, 0), ""  # Linux leaves cwnd alone on such ACKs
    s.prr_delivered += delivered
    rb = ""
    if pipe > s.ssthresh:
        sndcnt = math.ceil(s.prr_delivered * s.ssthresh / s.recover_fs) - s.prr_out
    else:
        room = s.ssthresh - pipe
        banked = s.prr_delivered - s.prr_out
        if s.variant is PrrVariant.CRB:
            limit = banked
            candidates = {"b": banked}
        else:
            plus = 1 if (s.variant in (PrrVariant.SSRB, PrrVariant.LINUX_SSRB)
                         or safe_ack) else 0
            limit = max(banked, delivered) + plus
            candidates = {"b": banked + plus, "d": delivered + plus}
        sndcnt = min(room, limit)
        if sndcnt > 0:
            rb = ("s" if sndcnt == room else "") + "".join(
                k for k, v in candidates.items() if v == sndcnt)
    if s.variant in (PrrVariant.LINUX, PrrVariant.LINUX_SSRB):
        sndcnt = max(sndcnt, 0 if s.prr_out else 1)
    elif s.variant is PrrVariant.RFC9937:
        if s.prr_out == 0 and sndcnt <= 0:
            sndcnt = 1
    return max(sndcnt, 0), rb


def reno_grow(s: WindowState, acked: int) -> None:
    """Reno's growth on an ACK that advances snd_una: slow start below ssthresh, else one
    segment per window of ACKed segments."""
    if s.cwnd < s.ssthresh:
        s.cwnd += acked
        return
    s.ca_count += acked
    if s.ca_count >= s.cwnd:
        s.ca_count -= s.cwnd
        s.cwnd += 1


def column(rows: Iterable[AckRow], name: str) -> list[object]:
    """One field of every row, e.g. column(rows, "cwnd")."""
    return [getattr(r, name) for r in rows]
