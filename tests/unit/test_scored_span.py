"""The paper's scoring: a run's first part skipped, the rest scored (analysis/metrics.py), and
a quick run's stretch (analysis/stretch.py)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis.mahimahi_log import parse_log_bytes
from analysis.metrics import MetricsError, link_metrics
from analysis.stretch import representative_offset_ms


def _log() -> bytes:
    lines = ["# base timestamp: 0"]
    lines += [f"{t} # 1504" for t in range(0, 2001)]
    # A packet arrives at 100 ms and waits 1 s; another arrives at 1500 ms and waits 1 ms.
    lines += ["100 + 1500", "1100 - 1500 1000", "1500 + 1500", "1501 - 1500 1"]
    events = sorted(lines[1:], key=lambda line: int(line.split()[0]))
    return ("\n".join([lines[0], *events]) + "\n").encode()


def test_skipping_the_first_second_by_hand() -> None:
    log = parse_log_bytes(_log())
    whole = link_metrics(log, fixed_delay_ms=20)
    scored = link_metrics(log, fixed_delay_ms=20, from_ms=1000)
    # Sampled from 1000 ms on: at ms t the next arrival is at 1500 and waits 1 ms, so the
    # signal delay is 1 + (1500 - t) for t in 1000..1500: 501 values 1..501, element
    # int(0.95 * 501) = 475 of them sorted is 476.
    assert scored.p95_signal_delay_ms == 476 and scored.p95_e2e_delay_ms == 496
    assert (scored.signal_delay_first_ms, scored.signal_delay_last_ms) == (1000, 1500)
    # Both packets left after 1000 ms; the scored second ends with the last event (2000 ms).
    assert scored.duration_s == 1.0 and scored.throughput_mbps == pytest.approx(8 * 3000 / 1e6)
    assert scored.capacity_mbps == pytest.approx(8 * 1504 * 1001 / 1e6)
    # Without the skip the 1-s wait of the first packet is in the window.
    assert whole.signal_delay_first_ms == 100 and whole.p95_signal_delay_ms == 1330


def test_nothing_to_score_after_the_end() -> None:
    with pytest.raises(MetricsError, match="nothing to score"):
        link_metrics(parse_log_bytes(_log()), from_ms=5000)


def test_a_quick_stretch_avoids_the_unrepresentative_parts() -> None:
    """One opportunity a ms for 400 s, but three a ms from 150 to 210 s and nothing from 300
    to 340 s: the stretch's scored part (after its warm-up) is like most of the trace."""
    one: np.ndarray = np.arange(0, 400_000)
    one = one[(one < 300_000) | (one >= 340_000)]
    fast = np.repeat(np.arange(150_000, 210_000), 2)  # two more in each ms of that minute
    times = np.sort(np.concatenate([one, fast]))
    offset = representative_offset_ms(times, times, warmup_ms=10_000, scored_ms=20_000)
    start, end = offset + 10_000, offset + 30_000
    assert offset >= 60_000 and offset % 10_000 == 0
    assert end <= 150_000 or start >= 210_000
    assert end <= 300_000 or start >= 340_000
    assert representative_offset_ms(times, times, 10_000, 20_000) == offset  # deterministic


def test_traces_shorter_than_a_stretch_start_at_zero() -> None:
    assert representative_offset_ms(np.arange(1, 1000), np.arange(1, 1000), 20_000, 40_000) == 0
