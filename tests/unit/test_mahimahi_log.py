"""The mahimahi log parser: arrays, header, errors with line numbers, speed."""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pytest

from analysis import mahimahi_log
from analysis.mahimahi_log import LogFormatError, parse_log, parse_log_bytes

LOG = b"""# mahimahi mm-link (uplink) [trace] > uplink.log
# base timestamp: 1000
# queue: infinite
1000 # 1504
1001 + 1500
1001 d 1 1500
1003 # 1504
1003 - 1500 2
"""


def test_arrays_have_base_subtracted_and_split_by_kind():
    log = parse_log_bytes(LOG, "up.log")
    assert log.base_timestamp_ms == 1000
    assert log.header["base timestamp"] == "1000"
    assert log.header["queue"] == "infinite"
    assert len(log.header_lines) == 3
    assert list(log.opportunity_time) == [0, 3]
    assert list(log.opportunity_bytes) == [1504, 1504]
    assert list(log.arrival_time) == [1] and list(log.arrival_size) == [1500]
    assert list(log.drop_time) == [1]
    assert list(log.drop_count) == [1] and list(log.drop_bytes) == [1500]
    assert list(log.departure_time) == [3]
    assert list(log.departure_size) == [1500] and list(log.departure_delay) == [2]
    assert (log.first_event_ms, log.last_event_ms) == (0, 3)
    assert log.event_count == 5 and not log.truncated


def test_parse_log_reads_a_file(tmp_path: Path):
    path = tmp_path / "x.log"
    path.write_bytes(LOG)
    assert list(parse_log(path).departure_delay) == [2]


def test_window_is_first_line_in_file_order_and_ignores_drop_lines():
    # mm-throughput-graph takes the first event line's time (not the minimum)
    # and the largest time; `d` lines do not count.
    log = parse_log_bytes(b"# base timestamp: 0\n5 # 1504\n3 + 100\n7 - 100 4\n9 d 1 100\n")
    assert (log.first_event_ms, log.last_event_ms) == (5, 7)


def test_header_anywhere_and_fields():
    log = parse_log_bytes(b"1 + 10\n# base timestamp: 100\n2 # 1504\n# note: x\n3 - 10 2\n")
    assert list(log.arrival_time) == [-99]
    assert list(log.opportunity_time) == [-98]
    assert list(log.departure_time) == [-97]
    assert log.header["note"] == "x"


def test_missing_base_timestamp_names_the_file():
    with pytest.raises(LogFormatError, match=r"up\.log: .*base timestamp"):
        parse_log_bytes(b"# mahimahi\n1 + 10\n", "up.log")


def test_empty_log_is_a_clear_error():
    with pytest.raises(LogFormatError, match=r"up\.log: the log is empty"):
        parse_log_bytes(b"", "up.log")


def test_base_timestamp_twice_is_an_error():
    with pytest.raises(LogFormatError, match=r"f:2: .*twice"):
        parse_log_bytes(b"# base timestamp: 1\n# base timestamp: 2\n", "f")


def test_unreadable_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(LogFormatError, match="cannot read"):
        parse_log(tmp_path / "absent.log")


@pytest.mark.parametrize("bad_line", [
    b"",                      # empty line
    b"1002 x 1504",           # unknown event type
    b"1002 - 1500",           # departure without delay
    b"1002 d 1",              # drop without bytes
    b"1002 + 1500 3",         # arrival with an extra field
    b"1002 # 1504 1 2",
    b"1002  # 1504",          # two spaces
    b"1002 #1504",
    b"1002 + ",
    b" 1002 + 1500",
    b"1002 - 1500  4",
    b"+ 1002 1500",
    b"1002 + -1500",
    b"1002 + 15a0",
    b"1002 + 1500\r",
    b"1002 + 1234567890123456789",
])
def test_malformed_line_names_file_and_line(bad_line: bytes):
    data = b"# base timestamp: 1000\n1000 # 1504\n1001 + 1500\n" + bad_line + b"\n1003 # 1504\n"
    with pytest.raises(LogFormatError, match=r"^f:4: "):
        parse_log_bytes(data, "f")


def test_line_numbers_stay_right_across_chunks(monkeypatch):
    monkeypatch.setattr(mahimahi_log, "_CHUNK_BYTES", 64)
    lines = [b"# base timestamp: 0"] + [b"%d + 1500" % i for i in range(200)]
    lines[150] = b"149 + oops"
    with pytest.raises(LogFormatError, match=r"^f:151: "):
        parse_log_bytes(b"\n".join(lines) + b"\n", "f")


def test_chunked_parse_equals_whole_parse(monkeypatch):
    rng = np.random.default_rng(7)
    body = []
    for t in range(3000):
        kind = rng.integers(4)
        body.append([b"%d # 1504", b"%d + 100", b"%d - 100 3", b"%d d 1 100"][kind] % t)
    data = b"# base timestamp: 0\n" + b"\n".join(body) + b"\n"
    whole = parse_log_bytes(data)
    monkeypatch.setattr(mahimahi_log, "_CHUNK_BYTES", 100)
    chunked = parse_log_bytes(data)
    for name in ("arrival_time", "drop_time", "drop_bytes", "opportunity_time",
                 "departure_time", "departure_delay"):
        assert np.array_equal(getattr(whole, name), getattr(chunked, name)), name
    assert whole.event_count == 3000
    assert (chunked.first_event_ms, chunked.last_event_ms) == (whole.first_event_ms,
                                                               whole.last_event_ms)


def test_truncated_last_line_is_ignored_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        log = parse_log_bytes(LOG + b"1004 - 15", "crash.log")
    assert log.truncated
    assert list(log.departure_time) == [3]
    assert "crash.log:9" in caplog.text and "unterminated" in caplog.text


def test_header_only_log_has_empty_arrays():
    log = parse_log_bytes(b"# base timestamp: 5\n")
    assert log.event_count == 0 and log.first_event_ms is None


def _synthetic_log(n_lines: int) -> bytes:
    """A 10 Mbit/s-like log: opportunity, arrival and departure each ms."""
    base = 1_700_000_000_000
    t = base + np.arange(n_lines // 3, dtype=np.int64)
    ts = t.astype(bytes)  # numpy turns each int into its decimal text
    parts = [b"# mahimahi mm-link (uplink) [synthetic] > log\n",
             b"# base timestamp: %d\n" % base]
    rows = np.char.add(ts, b" # 1504\n"), np.char.add(ts, b" + 1504\n"), \
        np.char.add(np.char.add(ts, b" - 1504 "), (np.arange(ts.size) % 50).astype(bytes))
    body = np.empty(ts.size * 3, dtype=object)
    body[0::3], body[1::3], body[2::3] = rows[0], rows[1], np.char.add(rows[2], b"\n")
    return b"".join(parts) + b"".join(list(body))


def test_two_million_lines_parse_quickly():
    data = _synthetic_log(2_000_001)
    start = time.monotonic()
    log = parse_log_bytes(data, "synthetic")
    elapsed = time.monotonic() - start
    assert log.event_count == 2_000_001
    assert list(log.departure_delay[:3]) == [0, 1, 2]
    assert log.opportunity_time[-1] == 666_666
    assert elapsed < 10.0, f"parsing 2M lines took {elapsed:.1f} s"
