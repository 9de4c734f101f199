"""CoDel queue specs: the forms netrepro-link accepts, with CoDel's defaults."""
from __future__ import annotations

import pytest

from core.queue_spec import QueueSpecError, parse_queue


def test_plain_codel_takes_the_defaults() -> None:
    q = parse_queue("codel")
    assert (q.kind, q.target_ms, q.interval_ms) == ("codel", 5, 100)
    assert q.packets is None and q.bytes is None
    assert q.describe() == "CoDel, target 5 ms, interval 100 ms"


@pytest.mark.parametrize("text, target, interval", [
    ("codel:target=10,interval=200", 10, 200),
    ("codel:interval=200,target=10", 10, 200),
    ("codel:target=20", 20, 100),
    ("codel:interval=50", 5, 50),
])
def test_codel_parameters(text: str, target: int, interval: int) -> None:
    q = parse_queue(text)
    assert (q.kind, q.target_ms, q.interval_ms) == ("codel", target, interval)


@pytest.mark.parametrize("text, words", [
    ("codel:", "use infinite"),
    ("codel:target=0", "target must be a positive integer"),
    ("codel:target=1.5", "target must be a positive integer"),
    ("codel:target=-5", "target must be a positive integer"),
    ("codel:interval=", "interval must be a positive integer"),
    ("codel:target=5,target=6", "repeated parameter 'target'"),
    ("codel:packets=100", "unknown or repeated parameter 'packets'"),
    ("codel:target=5,", "unknown or repeated parameter ''"),
    ("codel:target=100,interval=100", "must be below its interval"),
    ("codel:target=200", "must be below its interval"),
    ("codel5", "use infinite"),
    ("droptail:target=5", "unknown or repeated parameter 'target'"),
])
def test_bad_codel_specs_name_the_problem(text: str, words: str) -> None:
    with pytest.raises(QueueSpecError, match=words.replace("(", r"\(")) as info:
        parse_queue(text)
    assert repr(text) in str(info.value)
