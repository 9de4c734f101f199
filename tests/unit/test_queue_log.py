"""The per-packet queue log parser, on a hand-made log whose every number is worked out here.

The log: ecn:k=2,packets=5 at a fixed 100 Mbit/s, 1 ms of delay after the queue. Five
full-size packets arrive 10 µs apart from 1000 µs (backlogs 0-4; the ECT ones found above
K = 2 are marked: the ECT(0) at 1030 and the ECT(1) at 1040; the Not-ECT at 1020 is not); a
sixth finds 5 waiting and is dropped (its line comes first, as the emulator writes a drop when
it happens and a sent packet when it leaves). Then two small packets at 3000 and 3010, and a
CoDel-style drop at dequeue. The fourth packet was sent 255 µs after the third (late), the
fifth 1 µs after the fourth (the same batch).
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from analysis.queue_log import (CE, ECT0, ECT1, NOT_ECT, QueueLogError, backlog_at,
                                backlog_series, backlog_stats, departure_gaps, drop_count,
                                ideal_gap_us, mark_count, parse_queue_log, parse_queue_log_text,
                                queue_stats)

HEADER = """# netrepro-link queue log
# command line: netrepro-link --a2b-queue ecn:k=2,packets=5
# direction: a2b (nrs-a -> nrs-b)
# queue: ecn [k=2, packets=5]
# trace: fixed 100 Mbit/s
# delay: 1 ms (queue-delay)
# byte basis: ip+4 (1504-byte opportunities)
# base timestamp: 5000
# times: microseconds after the base timestamp; ECN: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
# format: - ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE RELEASE SENT
# format: d ARRIVAL BACKLOG SIZE ECN_IN
# format: D ARRIVAL BACKLOG SIZE ECN_IN DROPPED
"""
EVENTS = """d 1045 5 1504 2
- 1000 0 1504 2 2 1100 2100 2105
- 1010 1 1504 2 2 1220 2220 2230
- 1020 2 1504 0 0 1340 2340 2345
- 1030 3 1504 2 3 1460 2460 2600
- 1040 4 1504 1 3 1580 2580 2601
- 3000 0 52 0 0 3100 4100 4102
- 3010 1 52 3 3 3100 4100 4102
D 3500 0 1504 2 3600
"""


@pytest.fixture
def queue_log(tmp_path: Path):
    path = tmp_path / "data-queue.log"
    path.write_text(HEADER + EVENTS)
    return parse_queue_log(path)


def test_reads_the_header_and_every_packet(queue_log) -> None:
    q = queue_log
    assert q.base_ms == 5000
    assert q.header["queue"] == "ecn [k=2, packets=5]"
    assert q.rate_mbps == 100.0
    assert q.arrival_us.tolist() == [1000, 1010, 1020, 1030, 1040, 3000, 3010]
    assert q.backlog.tolist() == [0, 1, 2, 3, 4, 0, 1]
    assert q.ecn_in.tolist() == [ECT0, ECT0, NOT_ECT, ECT0, ECT1, NOT_ECT, CE]
    assert q.ecn_out.tolist() == [ECT0, ECT0, NOT_ECT, CE, CE, NOT_ECT, CE]
    assert q.marked.tolist() == [False, False, False, True, True, False, False]
    assert q.sent_us.tolist() == [2105, 2230, 2345, 2600, 2601, 4102, 4102]
    assert (q.release_us - q.departure_us).tolist() == [1000] * 7  # the 1 ms delay
    assert q.drop_arrival_us.tolist() == [1045, 3500]
    assert q.drop_backlog.tolist() == [5, 0]
    assert q.drop_at_dequeue.tolist() == [False, True]
    assert q.drop_time_us.tolist() == [1045, 3600]


def test_the_queue_length_at_every_arrival_includes_drops(queue_log) -> None:
    times, backlog = backlog_series(queue_log)
    np.testing.assert_array_equal(times, [1000, 1010, 1020, 1030, 1040, 1045, 3000, 3010, 3500])
    np.testing.assert_array_equal(backlog, [0, 1, 2, 3, 4, 5, 0, 1, 0])
    times, backlog = backlog_series(queue_log, 0.001, 0.002)
    np.testing.assert_array_equal(backlog, [0, 1, 2, 3, 4, 5])


def test_statistics_over_a_window(queue_log) -> None:
    # All nine: sorted 0 0 0 1 1 2 3 4 5; median the 5th (1); p5 at rank 0.4 (0); p95 at
    # rank 7.6, between 4 and 5 (4.6).
    s = backlog_stats(queue_log)
    assert (s.samples, s.median, s.p5, s.max) == (9, 1.0, 0.0, 5)
    assert s.p95 == pytest.approx(4.6)
    # [1 ms, 2 ms): 0..5, median 2.5, p5 at rank 0.25, p95 at rank 4.75.
    w = backlog_stats(queue_log, 0.001, 0.002)
    assert (w.samples, w.median, w.max) == (6, 2.5, 5)
    assert (w.p5, w.p95) == pytest.approx((0.25, 4.75))
    with pytest.raises(QueueLogError, match="no queue samples"):
        queue_stats(np.zeros(0))


def test_marks_and_drops_by_arrival(queue_log) -> None:
    assert mark_count(queue_log) == 2
    assert mark_count(queue_log, 0.00104) == 1
    assert mark_count(queue_log, None, 0.00103) == 0
    assert drop_count(queue_log) == 2
    assert drop_count(queue_log, 0.002) == 1


def test_backlog_at_chosen_times_as_a_poll_reads_it(queue_log) -> None:
    # Arrived by t minus departed by t (scheduled departures 1100, 1220, 1340, 1460, 1580).
    at = backlog_at(queue_log, np.array([999, 1000, 1015, 1100, 1500, 1581, 5000]))
    np.testing.assert_array_equal(at, [0, 1, 2, 4, 1, 0, 0])


def test_departure_gaps_while_backlogged(queue_log) -> None:
    # Backlogged full-size packets: the 2nd to 5th (the first found the queue empty, the
    # small ones are not full-size). Real gaps 125, 115, 255, 1; scheduled 120 each.
    gaps = departure_gaps(queue_log)
    np.testing.assert_array_equal(gaps.actual_us, [125, 115, 255, 1])
    np.testing.assert_array_equal(gaps.scheduled_us, [120, 120, 120, 120])
    ideal = ideal_gap_us(100.0)
    assert ideal == pytest.approx(120.32)
    assert gaps.fraction_within(ideal) == 0.5  # 125 and 115 are within ±12.03 µs
    assert gaps.fraction_within(ideal, tolerance=0.01) == 0.0
    everything = departure_gaps(queue_log, size=None)
    # ... and the small pair:
    np.testing.assert_array_equal(everything.actual_us, [125, 115, 255, 1, 0])
    middle = departure_gaps(queue_log, 0.00102, 0.00104)
    np.testing.assert_array_equal(middle.actual_us, [115, 255])
    assert np.isnan(departure_gaps(queue_log, 1.0).fraction_within(ideal))


def test_a_trace_link_has_no_fixed_rate() -> None:
    q = parse_queue_log_text(HEADER.replace("fixed 100 Mbit/s", "traces/x.down") + EVENTS)
    assert q.rate_mbps is None


def test_an_empty_log_parses() -> None:
    q = parse_queue_log_text(HEADER)
    assert q.arrival_us.size == 0 and q.drop_arrival_us.size == 0
    assert departure_gaps(q).actual_us.size == 0


def test_an_unterminated_last_line_is_dropped_with_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        q = parse_queue_log_text(HEADER + EVENTS + "- 4000 0 15", "x.log")
    assert q.arrival_us.size == 7
    assert "x.log:22: ignoring the unterminated last line" in caplog.text


@pytest.mark.parametrize("line, words", [
    ("- 1000 0 1504 2 2 1100 2100", "x.log:13: .* is not a queue-log line"),
    ("d 1000 0 1504 2 2", "x.log:13: .* is not a queue-log line"),
    ("+ 1000 0 1504 2", "x.log:13: .* is not a queue-log line"),
    ("-1000 0 1504 2 2 1100 2100 2105", "x.log:13: .* is not a queue-log line"),
    ("d 1000 -1 1504 2", "x.log:13: .* every field must be a non-negative integer"),
    ("d 1000 0 1504 2.0", "x.log:13: .* every field must be a non-negative integer"),
    ("d 1000  0 1504", "x.log:13: .* every field must be a non-negative integer"),
    ("- 1000 0 1504 2 4 1100 2100 2105", "x.log:13: an ECN field above 3"),
    ("D 1000 0 1504 7 2000", "x.log:13: an ECN field above 3"),
])
def test_a_malformed_line_names_file_and_line(line: str, words: str) -> None:
    with pytest.raises(QueueLogError, match=words):
        parse_queue_log_text(HEADER + line + "\n", "x.log")


def test_the_base_timestamp_is_required() -> None:
    with pytest.raises(QueueLogError, match="base timestamp"):
        parse_queue_log_text(HEADER.replace("# base timestamp: 5000\n", "") + EVENTS, "x.log")
