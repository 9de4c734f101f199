"""ECN marking queue specs: the form netrepro-link accepts (ecn:k=K,packets=N), in sync with
native/link/queue_spec.cc (its ecn_queue_test checks the same forms)."""
from __future__ import annotations

import pytest

from core.queue_spec import QueueSpecError, parse_queue


@pytest.mark.parametrize("text, k, packets", [
    ("ecn:k=20,packets=425", 20, 425),
    ("ecn:packets=10,k=3", 3, 10),
    ("ecn:k=1,packets=3", 1, 3),
])
def test_ecn_takes_a_threshold_and_a_buffer(text: str, k: int, packets: int) -> None:
    q = parse_queue(text)
    assert (q.kind, q.mark_threshold, q.packets, q.bytes) == ("ecn", k, packets, None)
    assert q.marks_ecn
    assert q.target_ms is None and q.interval_ms is None


def test_ecn_describes_itself() -> None:
    assert parse_queue("ecn:k=20,packets=425").describe() == \
        "ECN marking above 20 packets, droptail at 425 packets"


def test_other_queues_do_not_mark() -> None:
    for text in ("infinite", "droptail:packets=425", "codel"):
        q = parse_queue(text)
        assert not q.marks_ecn and q.mark_threshold is None


@pytest.mark.parametrize("text, words", [
    ("ecn", "use infinite"),
    ("ecn:", "use infinite"),
    ("ecn:k=20", "needs both k=K"),
    ("ecn:packets=425", "needs both k=K"),
    ("ecn:k=0,packets=10", "k must be a positive integer"),
    ("ecn:k=1.5,packets=9", "k must be a positive integer"),
    ("ecn:k=20,packets=21", "at most packets - 2"),
    ("ecn:k=20,packets=20", "at most packets - 2"),
    ("ecn:k=30,packets=20", "at most packets - 2"),
    ("ecn:k=2,packets=4,bytes=9000", "unknown or repeated parameter 'bytes'"),
    ("ecn:k=2,k=3,packets=9", "repeated parameter 'k'"),
    ("ecn:k=2,packets=9,", "unknown or repeated parameter ''"),
    ("ecn:K=2,packets=9", "unknown or repeated parameter 'K'"),
    ("ecn:threshold=2,packets=9", "unknown or repeated parameter 'threshold'"),
    ("droptail:k=2", "unknown or repeated parameter 'k'"),
])
def test_bad_ecn_specs_name_the_problem(text: str, words: str) -> None:
    with pytest.raises(QueueSpecError, match=words) as info:
        parse_queue(text)
    assert repr(text) in str(info.value)
