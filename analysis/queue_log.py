"""Parse netrepro-link's per-packet queue log (`--a2b-queue-log`, a run's `data-queue.log`).

Format (native/link/README.md, "Outputs"): `#` header lines (the mahimahi log's, with
`base timestamp: <ms>`), then one line per packet, times in integer microseconds after the
base timestamp, ECN fields as codepoints (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE):

    - ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE RELEASE SENT   a packet sent on
    d ARRIVAL BACKLOG SIZE ECN_IN                                   dropped at enqueue
    D ARRIVAL BACKLOG SIZE ECN_IN DROPPED                           dropped at dequeue (CoDel)
    l ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE                 left the queue, then lost
                                                                    to random loss

BACKLOG is the number of packets waiting when the packet arrived (the arriving one and one in
transit not counted), so the queue's length is known at every arrival, not sampled. Lines are
in the order the emulator knew each packet's fate; everything here comes back sorted by
arrival. A packet belongs to a window [start_s, end_s) by its arrival time.

What this gives: the per-packet queue-length series and its statistics, marks and drops, the
queue's length at any chosen times (as `tc` polling would have read it), and the gaps between
real departures while the queue was backlogged, for the fidelity check against an ideal link.
A packet lost to random loss after the queue (`l`) was in the queue like any other: it counts
in the queue's length, and it is nobody's neighbour in the gaps (it was never sent).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3
FULL_SIZE = 1504  # a full-size packet on the emulator's basis: IP length 1500 + 4
_FIELDS = {"-": 8, "d": 4, "D": 5, "l": 6}
_HEADER_FIELD = re.compile(r"#\s*([A-Za-z][A-Za-z0-9 _.-]*?)\s*:\s*(.*)")
_FIXED_RATE = re.compile(r"fixed\s+([0-9.eE+-]+)\s+Mbit/s")


class QueueLogError(ValueError):
    """A file that is not a queue log; the message names the file and line."""


@dataclass(frozen=True, eq=False, kw_only=True)
class QueueLog:
    """One direction's queue log. Sent packets and drops, each sorted by arrival (µs after
    the base timestamp)."""

    source: str
    header: dict[str, str]
    base_ms: int
    # Packets sent on.
    arrival_us: np.ndarray
    backlog: np.ndarray
    size: np.ndarray
    ecn_in: np.ndarray
    ecn_out: np.ndarray
    departure_us: np.ndarray  # scheduled departure from the queue
    release_us: np.ndarray    # scheduled release after the delay stage
    sent_us: np.ndarray       # handed to the socket
    # Drops.
    drop_arrival_us: np.ndarray
    drop_backlog: np.ndarray
    drop_size: np.ndarray
    drop_ecn: np.ndarray
    drop_at_dequeue: np.ndarray  # bool: CoDel's, at dequeue
    drop_time_us: np.ndarray     # when dropped (= arrival for drops at enqueue)
    # Lost to random loss after the queue (they left it at lost_departure_us), by arrival.
    lost_arrival_us: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lost_backlog: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lost_size: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lost_departure_us: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def marked(self) -> np.ndarray:
        """Bool per sent packet: this queue set CE on it."""
        return self.ecn_in != self.ecn_out

    @property
    def rate_mbps(self) -> float | None:
        """The fixed rate from the header (`# trace: fixed R Mbit/s`), None for a trace."""
        match = _FIXED_RATE.fullmatch(self.header.get("trace", "").strip())
        return float(match.group(1)) if match else None


@dataclass(frozen=True)
class QueueStats:
    """Statistics of a queue-length series, in packets (percentiles interpolate linearly)."""

    samples: int
    median: float
    p5: float
    p95: float
    max: int


@dataclass(frozen=True)
class DepartureGaps:
    """Gaps between consecutive real departures while the queue was backlogged (µs), beside
    the gaps the schedule asked for."""

    actual_us: np.ndarray
    scheduled_us: np.ndarray

    def fraction_within(self, ideal_us: float, tolerance: float = 0.10) -> float:
        """The share of real gaps within ±tolerance of `ideal_us` (NaN with no gaps)."""
        if self.actual_us.size == 0:
            return float("nan")
        return float(np.mean(np.abs(self.actual_us - ideal_us) <= tolerance * ideal_us))

    def fraction_within_schedule(self, tolerance: float = 0.10) -> float:
        """The share of real gaps within ±tolerance of the gap their schedule asked for (a
        rate that steps, or a trace's, as well as a fixed one); NaN with no gaps."""
        if self.actual_us.size == 0:
            return float("nan")
        scheduled = self.scheduled_us.astype(np.float64)
        return float(np.mean(np.abs(self.actual_us - scheduled) <= tolerance * scheduled))


def ideal_gap_us(rate_mbps: float, size_bytes: int = FULL_SIZE) -> float:
    """The time to serialize `size_bytes` at `rate_mbps`, as the emulator counts bytes (IP
    length + 4): 120.32 µs for a full-size packet at 100 Mbit/s."""
    return size_bytes * 8 / rate_mbps


def parse_queue_log(path: Path | str) -> QueueLog:
    path = Path(path)
    return parse_queue_log_text(path.read_text(), str(path))


def parse_queue_log_text(text: str, source: str = "<queue log>") -> QueueLog:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        log.warning("%s:%d: ignoring the unterminated last line %r (the writer stopped "
                    "mid-line)", source, len(lines), lines[-1][:60])
        lines.pop()
    header: dict[str, str] = {}
    rows: dict[str, list[str]] = {kind: [] for kind in _FIELDS}
    linenos: dict[str, list[int]] = {kind: [] for kind in _FIELDS}
    for lineno, line in enumerate(lines, 1):
        if line.startswith("#"):
            match = _HEADER_FIELD.fullmatch(line)
            if match:
                header.setdefault(match.group(1), match.group(2).strip())
            continue
        kind = line[:1]
        fields = line[2:].split(" ")
        if kind not in _FIELDS or line[1:2] != " " or len(fields) != _FIELDS[kind]:
            raise QueueLogError(f"{source}:{lineno}: {line[:60]!r} is not a queue-log line "
                                "('- A B S E E D R T', 'd A B S E', 'D A B S E T' or "
                                "'l A B S E E D')")
        rows[kind].append(line[2:])
        linenos[kind].append(lineno)
    if "base timestamp" not in header or not header["base timestamp"].isdigit():
        raise QueueLogError(f"{source}: no '# base timestamp: <ms>' header line")
    sent = _table(rows["-"], linenos["-"], 8, source)
    refused = _table(rows["d"], linenos["d"], 4, source)
    dequeued = _table(rows["D"], linenos["D"], 5, source)
    lost = _table(rows["l"], linenos["l"], 6, source)
    lost = lost[np.argsort(lost[:, 0], kind="stable")]
    order = np.argsort(sent[:, 0], kind="stable")
    sent = sent[order]
    drops = np.concatenate([
        np.column_stack([refused, refused[:, 0], np.zeros(len(refused), dtype=np.int64)]),
        np.column_stack([dequeued, np.ones(len(dequeued), dtype=np.int64)]),
    ])
    drops = drops[np.argsort(drops[:, 0], kind="stable")]
    return QueueLog(
        source=source, header=header, base_ms=int(header["base timestamp"]),
        arrival_us=sent[:, 0], backlog=sent[:, 1], size=sent[:, 2], ecn_in=sent[:, 3],
        ecn_out=sent[:, 4], departure_us=sent[:, 5], release_us=sent[:, 6], sent_us=sent[:, 7],
        drop_arrival_us=drops[:, 0], drop_backlog=drops[:, 1], drop_size=drops[:, 2],
        drop_ecn=drops[:, 3], drop_time_us=drops[:, 4], drop_at_dequeue=drops[:, 5] == 1,
        lost_arrival_us=lost[:, 0], lost_backlog=lost[:, 1], lost_size=lost[:, 2],
        lost_departure_us=lost[:, 5])


def _table(rows: list[str], linenos: list[int], width: int, source: str) -> np.ndarray:
    """The rows' fields as an int64 array of `width` columns; a bad field names its line."""
    if not rows:
        return np.zeros((0, width), dtype=np.int64)
    words = " ".join(rows).split(" ")
    if not all(_is_count(w) for w in words):
        bad = next(i for i, row in enumerate(rows)
                   if not all(_is_count(w) for w in row.split(" ")))
        raise QueueLogError(f"{source}:{linenos[bad]}: {rows[bad][:60]!r}: every field must "
                            "be a non-negative integer")
    table = np.array(words, dtype=np.int64).reshape(len(rows), width)
    ecn = table[:, 3:5] if width in (_FIELDS["-"], _FIELDS["l"]) else table[:, 3:4]
    wrong = np.nonzero(np.any(ecn > CE, axis=1))[0]
    if wrong.size:
        raise QueueLogError(f"{source}:{linenos[wrong[0]]}: an ECN field above 3 (CE)")
    return table


def _is_count(word: str) -> bool:
    return word.isascii() and word.isdigit()


def _in_window(times_us: np.ndarray, start_s: float | None, end_s: float | None) -> np.ndarray:
    """Times (integer µs) in [start_s, end_s); the edges are rounded to whole µs first, so
    0.00102 s means 1020 µs and not the float just above it."""
    keep = np.ones(times_us.shape, dtype=bool)
    if start_s is not None:
        keep &= times_us >= round(start_s * 1e6)
    if end_s is not None:
        keep &= times_us < round(end_s * 1e6)
    return keep


def backlog_series(q: QueueLog, start_s: float | None = None,
                   end_s: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(arrival µs, backlog in packets) at every arrival in the window, drops and random
    losses included, in arrival order: the queue's length as each packet found it."""
    times = np.concatenate([q.arrival_us, q.drop_arrival_us, q.lost_arrival_us])
    backlog = np.concatenate([q.backlog, q.drop_backlog, q.lost_backlog])
    order = np.argsort(times, kind="stable")
    times, backlog = times[order], backlog[order]
    keep = _in_window(times, start_s, end_s)
    return times[keep], backlog[keep]


def backlog_at(q: QueueLog, times_us: np.ndarray) -> np.ndarray:
    """The number of packets in the queue at each time (µs after the base): those that had
    arrived (at or before t) and not yet departed (scheduled departure after t), as a `tc`
    poll would read it. This counts the head packet until its departure, as BACKLOG does for
    full-size packets. Packets still queued when the log ended have no line and are missing,
    so the last milliseconds of a log read low. Packets lost after the queue count until
    their departure, as they were in it."""
    arrivals = np.sort(np.concatenate([q.arrival_us, q.lost_arrival_us]))
    departures = np.sort(np.concatenate([q.departure_us, q.lost_departure_us]))
    times_us = np.asarray(times_us)
    return (np.searchsorted(arrivals, times_us, side="right")
            - np.searchsorted(departures, times_us, side="right"))


def queue_stats(backlog: np.ndarray) -> QueueStats:
    """Median, 5th and 95th percentiles (linear interpolation) and maximum of a series."""
    if backlog.size == 0:
        raise QueueLogError("no queue samples in the window")
    p5, median, p95 = np.percentile(backlog, [5, 50, 95])
    return QueueStats(samples=int(backlog.size), median=float(median), p5=float(p5),
                      p95=float(p95), max=int(backlog.max()))


def backlog_stats(q: QueueLog, start_s: float | None = None,
                  end_s: float | None = None) -> QueueStats:
    """queue_stats of the per-packet series (every arrival's backlog) in the window."""
    return queue_stats(backlog_series(q, start_s, end_s)[1])


def mark_count(q: QueueLog, start_s: float | None = None, end_s: float | None = None) -> int:
    """Packets this queue marked CE (ECT in, CE out), by arrival in the window."""
    return int(np.count_nonzero(q.marked & _in_window(q.arrival_us, start_s, end_s)))


def drop_count(q: QueueLog, start_s: float | None = None, end_s: float | None = None) -> int:
    """Packets dropped (at enqueue or dequeue), by arrival in the window."""
    return int(np.count_nonzero(_in_window(q.drop_arrival_us, start_s, end_s)))


def departure_gaps(q: QueueLog, start_s: float | None = None, end_s: float | None = None,
                   size: int | None = FULL_SIZE) -> DepartureGaps:
    """Gaps between each sent packet's real departure from the queue and its predecessor's,
    for packets that found the queue backlogged (BACKLOG >= 1: the one before had not yet
    left, so the link served them back to back) and, unless `size` is None, are `size` bytes
    (the ideal gap of a full-size packet is one opportunity). A packet's real departure is
    its real send time less its own fixed delay (RELEASE - DEPARTURE): with one delay for
    every packet that is the send times' gaps, and with a delay per far host (packets then
    leave the delay stage in another order than the queue) it is still the queue's. The
    scheduled gaps (DEPARTURE differences) come beside them: at a fixed rate they are the
    ideal link's, floor-rounded to whole µs."""
    if q.sent_us.size < 2:
        empty = np.zeros(0, dtype=np.int64)
        return DepartureGaps(actual_us=empty, scheduled_us=empty)
    # Sent lines are in send order; the queue's order is the departures' (FIFO: arrival
    # order). With one delay they are the same; with a delay per far host they are not.
    order = np.argsort(q.departure_us, kind="stable")
    departure, backlog, sizes = q.departure_us[order], q.backlog[order], q.size[order]
    left_queue = (q.sent_us - (q.release_us - q.departure_us))[order]
    follows = np.ones(departure.size, dtype=bool)
    follows[0] = False
    follows &= backlog >= 1
    if size is not None:
        follows &= sizes == size
    follows &= _in_window(q.arrival_us[order], start_s, end_s)
    if q.lost_departure_us.size:
        # A packet lost between two sent ones took an opportunity: their gap is no one's.
        lost = np.sort(q.lost_departure_us)
        between = (np.searchsorted(lost, departure, side="right")
                   - np.searchsorted(lost, np.concatenate([[0], departure[:-1]]), side="left"))
        follows &= between == 0
    idx = np.nonzero(follows)[0]
    return DepartureGaps(actual_us=left_queue[idx] - left_queue[idx - 1],
                         scheduled_us=departure[idx] - departure[idx - 1])


def fidelity_metrics(q: QueueLog, start_s: float | None = None,
                     end_s: float | None = None) -> dict[str, float | int | None]:
    """How faithfully the link served over the window, from its own record: the gaps between
    backlogged full-size departures against their schedule (`gaps_within_10pct_of_schedule`,
    None without gaps), the queue's drops and the packets random loss took."""
    gaps = departure_gaps(q, start_s, end_s)
    lost = int(np.count_nonzero(_in_window(q.lost_arrival_us, start_s, end_s)))
    return {"gaps_backlogged": int(gaps.actual_us.size),
            "gaps_within_10pct_of_schedule": (gaps.fraction_within_schedule()
                                              if gaps.actual_us.size else None),
            "queue_drops": drop_count(q, start_s, end_s), "random_losses": lost}
