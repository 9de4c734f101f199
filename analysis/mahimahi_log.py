"""Parse a mahimahi-format link log (`mm-link --uplink-log`) into numpy arrays.

Format (mahimahi `src/frontend/link_queue.cc`; ../docs and the link spec, section 3):

    # any header line; `# base timestamp: <ms>` is required
    T + S        arrival of S bytes (also logged for packets that are then dropped)
    T d N B      N packets / B bytes dropped at enqueue
    T # S        a delivery opportunity of S bytes, used or not
    T - S D      departure of S bytes after D ms in the queue

All times come back in ms relative to the base timestamp.  The whole file is
parsed with vectorised numpy passes (no Python loop per line): a 10-million-line
log takes a few seconds.  Every line is checked; a malformed one is an error that
names the file and the line.  A log whose writer died mid-line (no newline at the
end) loses only that partial last line, with a warning.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

BASE_TIMESTAMP_KEY = "base timestamp"
EVENT_FORMS = "'T + S', 'T # S', 'T - S D' or 'T d N B' (non-negative integers, single spaces)"

# Byte classes, computed for a whole chunk with one bytes.translate (C speed).
_DIGIT, _SPACE, _NEWLINE, _SYMBOL, _BAD = 0, 1, 2, 3, 4
_CLASS_TABLE = bytearray([_BAD] * 256)
for _c in b"0123456789":
    _CLASS_TABLE[_c] = _DIGIT
_CLASS_TABLE[ord(" ")] = _SPACE
_CLASS_TABLE[ord("\n")] = _NEWLINE
for _c in b"+#-d":
    _CLASS_TABLE[_c] = _SYMBOL
_CLASS_TABLE_BYTES = bytes(_CLASS_TABLE)

# Event-type symbols become a digit so np.fromstring can read every field as an int.
_CODE_TABLE = bytes.maketrans(b"+#-d", b"0000")
_MAX_DIGITS = 18  # int64 holds every 18-digit number
_HEADER_FIELD = re.compile(r"#\s*([A-Za-z][A-Za-z0-9 _.-]*?)\s*:\s*(.*)")


class LogFormatError(ValueError):
    """A log that is not in mahimahi's format; the message names file and line."""


@dataclass(frozen=True, eq=False, kw_only=True)
class _Events:
    """Events split by kind, one array per field: of one chunk while parsing, of the
    whole log in a LinkLog. Times are ms after the base timestamp."""

    ARRAYS = ("arrival_time", "arrival_size", "drop_time", "drop_count", "drop_bytes",
              "opportunity_time", "opportunity_bytes", "departure_time", "departure_size",
              "departure_delay")
    arrival_time: np.ndarray
    arrival_size: np.ndarray
    drop_time: np.ndarray
    drop_count: np.ndarray
    drop_bytes: np.ndarray
    opportunity_time: np.ndarray
    opportunity_bytes: np.ndarray
    departure_time: np.ndarray
    departure_size: np.ndarray
    departure_delay: np.ndarray
    # mm-throughput-graph's duration window: the first `+`/`#`/`-` line in file
    # order and the largest time over those lines (`d` lines are not counted).
    first_event_ms: int | None = None
    last_event_ms: int | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class LinkLog(_Events):
    """One direction's link log: its events and its header."""

    source: str
    base_timestamp_ms: int
    header: dict[str, str]
    header_lines: tuple[str, ...]
    truncated: bool = False

    @property
    def event_count(self) -> int:
        return int(self.arrival_time.size + self.drop_time.size
                   + self.opportunity_time.size + self.departure_time.size)


def parse_log(path: Path | str) -> LinkLog:
    """Read and parse a mahimahi-format log file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise LogFormatError(f"{path}: cannot read the link log: {e.strerror or e}") from e
    return parse_log_bytes(data, str(path))


def parse_log_bytes(data: bytes, source: str = "<log>") -> LinkLog:
    """Parse a log held in memory; `source` names it in error messages."""
    if not data:
        raise LogFormatError(f"{source}: the log is empty: the link emulator wrote nothing "
                             "(did it start, and was it stopped cleanly?)")
    truncated = False
    end = len(data)
    if data and not data.endswith(b"\n"):
        end = data.rfind(b"\n") + 1
        log.warning("%s:%d: ignoring the unterminated last line %r (the writer stopped "
                    "mid-line, e.g. it was killed)", source, data.count(b"\n", 0, end) + 1,
                    data[end:end + 60])
        truncated = True

    # Headers normally all come first, so this loops over a few blocks, not lines.
    headers: list[tuple[int, bytes]] = []
    regions: list[tuple[int, int]] = []
    pos = 0
    while pos < end:
        if data[pos] == ord("#"):
            stop = data.index(b"\n", pos)  # data[:end] ends with a newline
            headers.append((pos, data[pos:stop]))
            pos = stop + 1
        else:
            nxt = data.find(b"\n#", pos, end)
            region_end = end if nxt < 0 else nxt + 1
            regions.append((pos, region_end))
            pos = region_end
    header, header_lines, base = _parse_header(headers, data, source)

    parts = [_parse_events(data[a:b], base, _Where(data, a, source))
             for start, stop in regions for a, b in _chunks(data, start, stop)]
    window = [p for p in parts if p.first_event_ms is not None]
    return LinkLog(
        source=source, base_timestamp_ms=base, header=header, header_lines=header_lines,
        **{name: _concat([getattr(p, name) for p in parts]) for name in _Events.ARRAYS},
        first_event_ms=window[0].first_event_ms if window else None,
        last_event_ms=max(p.last_event_ms or 0 for p in window) if window else None,
        truncated=truncated,
    )


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    if not arrays:
        return np.zeros(0, dtype=np.int64)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


# Work in pieces of a few MB: the temporaries stay small and are reused, which
# matters because touching fresh memory is the slowest step on a small VM.
_CHUNK_BYTES = 8 << 20


def _chunks(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut into pieces that end at newlines."""
    pieces = []
    while start < end:
        stop = end
        if end - start > _CHUNK_BYTES:
            stop = data.rfind(b"\n", start, start + _CHUNK_BYTES) + 1
            if stop <= start:  # one enormous line: take all of it
                stop = data.index(b"\n", start + _CHUNK_BYTES) + 1
        pieces.append((start, stop))
        start = stop
    return pieces


@dataclass(frozen=True, eq=False)
class _Where:
    """Where a chunk sits in the file, to turn a byte offset into a line number."""

    data: bytes
    offset: int
    source: str

    def lineno(self, chunk_pos: int) -> int:
        return self.data.count(b"\n", 0, self.offset + chunk_pos) + 1


def _parse_header(headers: list[tuple[int, bytes]], data: bytes, source: str
                  ) -> tuple[dict[str, str], tuple[str, ...], int]:
    """Header `key: value` fields, the raw header lines, and the base timestamp."""
    fields: dict[str, str] = {}
    base: int | None = None
    texts = []
    for offset, raw in headers:
        lineno = data.count(b"\n", 0, offset) + 1
        text = raw.decode("utf-8", errors="replace")
        texts.append(text)
        m = _HEADER_FIELD.fullmatch(text)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if key == BASE_TIMESTAMP_KEY:
            if base is not None:
                raise LogFormatError(f"{source}:{lineno}: the base timestamp is defined twice; "
                                     "a log holds exactly one `# base timestamp: <ms>` line")
            if not re.fullmatch(r"\d{1,18}", value):
                raise LogFormatError(f"{source}:{lineno}: base timestamp {value!r} is not a "
                                     "non-negative integer number of ms")
            base = int(value)
        fields.setdefault(key, value)
    if base is None:
        raise LogFormatError(f"{source}: the log has no `# base timestamp: <ms>` header line; "
                             "it is not a mahimahi-format link log (or its header was cut off)")
    return fields, tuple(texts), base


def _parse_events(events: bytes, base: int, where: _Where) -> _Events:
    """Check every event line's shape and read its integers; see the module docstring."""
    classes = events.translate(_CLASS_TABLE_BYTES)
    bad = classes.find(bytes([_BAD]))
    cls = np.frombuffer(classes, dtype=np.uint8)
    nl = np.flatnonzero(cls == _NEWLINE)
    n_lines = nl.size
    line_start = np.empty(n_lines, dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = nl[:-1] + 1

    def fail(line_index: int, problem: str) -> LogFormatError:
        text = events[line_start[line_index]:nl[line_index]]
        shown = text[:80].decode("utf-8", errors="replace")
        return LogFormatError(f"{where.source}:{where.lineno(int(line_start[line_index]))}: "
                              f"{problem if text else 'empty line'}: {shown!r}; expected "
                              f"{EVENT_FORMS} or a `#` header line")

    if bad >= 0:
        raise fail(int(np.searchsorted(nl, bad)), f"unexpected character {events[bad:bad + 1]!r}")

    starts_with_digit = cls[line_start] == _DIGIT  # also rejects empty lines
    if not starts_with_digit.all():
        raise fail(int(np.argmin(starts_with_digit)), "the line does not start with a timestamp")
    ends_with_digit = cls[nl - 1] == _DIGIT
    if not ends_with_digit.all():
        raise fail(int(np.argmin(ends_with_digit)), "the line does not end with a number")

    # Exactly one event-type symbol per line, sitting between two spaces.
    sym = np.flatnonzero(cls == _SYMBOL)
    aligned = sym.size == n_lines and bool(((sym > line_start) & (sym < nl)).all())
    if not aligned:
        per_line = np.searchsorted(sym, nl) - np.searchsorted(sym, line_start)
        raise fail(int(np.argmax(per_line != 1)), "expected exactly one event type (+ # - d)")
    code = np.frombuffer(events, dtype=np.uint8)[sym]
    four = (code == ord("-")) | (code == ord("d"))
    expected_spaces = np.where(four, 3, 2)

    sp = np.flatnonzero(cls == _SPACE)
    spaces_before_end = np.searchsorted(sp, nl)
    first_space = np.empty(n_lines, dtype=np.int64)
    first_space[0] = 0
    first_space[1:] = spaces_before_end[:-1]
    count_ok = (spaces_before_end - first_space) == expected_spaces
    if not count_ok.all():
        raise fail(int(np.argmin(count_ok)), "wrong number of fields")
    # The first space is just before the symbol and one follows it, so the
    # timestamp is a single run of digits and the symbol stands alone.
    shape_ok = (sp[first_space] == sym - 1) & (cls[sym + 1] == _SPACE)
    if not shape_ok.all():
        raise fail(int(np.argmin(shape_ok)), "the event type must be the second field")
    ts_len = sym - 1 - line_start
    f3_end = nl.copy()
    f4_len = np.zeros(n_lines, dtype=np.int64)
    idx4 = np.flatnonzero(four)
    if idx4.size:
        third = sp[first_space[idx4] + 2]
        if not (cls[third - 1] == _DIGIT).all():
            raise fail(int(idx4[np.argmin(cls[third - 1] == _DIGIT)]), "empty field")
        f3_end[idx4] = third
        f4_len[idx4] = nl[idx4] - third - 1
    f3_len = f3_end - sym - 2
    too_long = (ts_len > _MAX_DIGITS) | (f3_len > _MAX_DIGITS) | (f4_len > _MAX_DIGITS)
    if too_long.any():
        raise fail(int(np.argmax(too_long)), f"a number longer than {_MAX_DIGITS} digits")

    # The shape is proven; now read all integers in one C pass.
    flat = np.fromstring(events.translate(_CODE_TABLE), dtype=np.int64, sep=" ")
    n_fields = expected_spaces + 1
    offsets = np.empty(n_lines, dtype=np.int64)
    offsets[0] = 0
    np.cumsum(n_fields[:-1], out=offsets[1:])
    if flat.size != int(n_fields.sum()):  # cannot happen after the checks above
        raise LogFormatError(f"{where.source}: internal error reading the numbers "
                             f"({flat.size} fields, expected {int(n_fields.sum())})")
    time = flat[offsets] - base
    rows = {symbol: np.flatnonzero(code == ord(symbol)) for symbol in "+#-d"}
    window = np.flatnonzero(code != ord("d"))

    def column(symbol: str, number: int) -> np.ndarray:
        """Field `number` (0-based) of every line of one event type."""
        return flat[offsets[rows[symbol]] + number]

    return _Events(
        arrival_time=time[rows["+"]], arrival_size=column("+", 2),
        drop_time=time[rows["d"]], drop_count=column("d", 2), drop_bytes=column("d", 3),
        opportunity_time=time[rows["#"]], opportunity_bytes=column("#", 2),
        departure_time=time[rows["-"]], departure_size=column("-", 2),
        departure_delay=column("-", 3),
        first_event_ms=int(time[window[0]]) if window.size else None,
        last_event_ms=int(time[window].max()) if window.size else None,
    )
