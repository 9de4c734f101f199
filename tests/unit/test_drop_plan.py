"""The drop plan: patterns, lists, and which segments of a flow it counts and drops."""
from __future__ import annotations

import pytest

from controllers.drop_plan import PATTERNS, DropPlan, DropPlanError, FlowTracker

MSS = 1448
ISN = 4_294_960_000  # wraps past 2^32 within the first few segments


def originals(tracker: FlowTracker, first: int, count: int) -> list[bool]:
    """Send `count` new MSS segments starting at original number `first`; their drop flags."""
    out = []
    for k in range(first, first + count):
        seq = (ISN + 1 + (k - 1) * MSS) % (1 << 32)
        out.append(tracker.on_segment(seq, MSS).drop)
    return out


@pytest.mark.parametrize("name,segments", [("light", [1, 2, 3, 4, 5]),
                                           ("heavy", [1, 2, 3, 4, 6, 7, 8]),
                                           ("base", [11, 12, 13, 14])])
def test_named_patterns(name: str, segments: list[int]) -> None:
    plan = DropPlan.parse(name)
    assert list(plan.segments) == segments and plan.name == name


def test_user_lists_and_ranges() -> None:
    assert DropPlan.parse("3,1,2").segments == (1, 2, 3)
    plan = DropPlan.parse("1-4,6-8")
    assert plan.segments == PATTERNS["heavy"] and plan.name == "1-4,6-8"
    assert DropPlan.parse("7").describe() == "7"
    assert DropPlan.parse("heavy").describe() == "heavy (1-4,6-8)"


@pytest.mark.parametrize("text", ["", "medium", "0", "1,,2", "4-2", "1-", "-3", "1;2", "20000"])
def test_bad_plans_are_refused_with_the_accepted_forms(text: str) -> None:
    with pytest.raises(DropPlanError, match="light, heavy, base|N-M|1 <= N|not N"):
        DropPlan.parse(text)


def test_counts_from_the_first_data_segment_after_the_handshake() -> None:
    t = FlowTracker(DropPlan.parse("light"))
    assert not t.on_segment(ISN, 0, syn=True).drop
    assert t.on_segment((ISN + 1) % (1 << 32), 0).segment is None   # the handshake's ACK
    assert originals(t, 1, 10) == [True] * 5 + [False] * 5
    assert t.dropped == [1, 2, 3, 4, 5] and t.done and t.missing() == []


def test_retransmissions_are_never_counted_nor_dropped() -> None:
    t = FlowTracker(DropPlan.parse("heavy"))
    t.on_segment(ISN, 0, syn=True)
    assert originals(t, 1, 5) == [True, True, True, True, False]
    # segment 1 retransmitted (same range), then 2 resent as a smaller piece: not originals
    again = t.on_segment((ISN + 1) % (1 << 32), MSS)
    part = t.on_segment((ISN + 1 + MSS) % (1 << 32), 500)
    assert (again.drop, again.original, part.drop, part.original) == (False, False, False, False)
    # the next new segment is number 6, and is dropped as planned
    assert originals(t, 6, 4) == [True, True, True, False]
    assert t.dropped == [1, 2, 3, 4, 6, 7, 8] and t.originals == 9


def test_base_drops_the_first_four_of_the_second_window() -> None:
    t = FlowTracker(DropPlan.parse("base"))
    t.on_segment(ISN, 0, syn=True)
    flags = originals(t, 1, 20)
    assert [i + 1 for i, f in enumerate(flags) if f] == [11, 12, 13, 14]


def test_a_segment_partly_beyond_the_highest_sent_is_original() -> None:
    t = FlowTracker(DropPlan.parse("2"))
    t.on_segment(ISN, 0, syn=True)
    t.on_segment((ISN + 1) % (1 << 32), MSS)
    d = t.on_segment((ISN + 1 + 1000) % (1 << 32), MSS)   # 448 old bytes, 1000 new
    assert d.original and d.segment == 2 and d.drop


def test_nothing_is_counted_without_the_handshake() -> None:
    t = FlowTracker(DropPlan.parse("light"))
    assert [t.on_segment(ISN + k * MSS, MSS).drop for k in range(6)] == [False] * 6
    assert t.originals == 0 and not t.handshake_seen and not t.done


def test_a_plan_beyond_the_flow_stays_undone() -> None:
    t = FlowTracker(DropPlan.parse("3,40"))
    t.on_segment(ISN, 0, syn=True)
    originals(t, 1, 23)
    assert t.dropped == [3] and not t.done and t.missing() == [40]


def test_round_trip_through_a_dict() -> None:
    plan = DropPlan.parse("heavy")
    assert DropPlan.from_dict(plan.to_dict()) == plan
    with pytest.raises(DropPlanError):
        DropPlan.from_dict({"name": "x", "segments": [2, 1]})
