"""Whether the emulator delivered on time in a run: its p99 lateness in both directions, and
the share of its backlogged departure gaps within 10% of their schedule.

A run whose emulator was late (the machine stalled it, or too many runs
shared the CPUs) still finished, and its numbers are kept, but they are not
a faithful measurement of the scheme: figures draw such points hollow,
summaries say how many there are, and `./repro run --redo-late` reruns them.
The lateness limit is the one `./repro bench concurrency` holds every level to.
The gaps are Mininet-HiFi's measure of a link's precision (the emulator counts them over the
whole run, in each direction's stats as `departure_gaps`): a run whose link kept fewer than
95% of them within 10% is late too, however small its p99 lateness, because at 100 Mbit/s a
12-us error in one departure is already outside 10% of its 120-us gap.
"""
from __future__ import annotations

from typing import Any, Mapping

MAX_LATENESS_P99_US = 2000
MIN_GAPS_WITHIN_10PCT = 0.95
# Below this many backlogged gaps a direction's share says little (a link that never queued).
MIN_GAPS_COUNTED = 100
LATE_RULE = (f"p99 lateness above {MAX_LATENESS_P99_US / 1000:g} ms, or under "
             f"{100 * MIN_GAPS_WITHIN_10PCT:g}% of backlogged departure gaps within 10% of "
             "schedule")


def lateness_p99_us(link_stats: Mapping[str, Any] | None) -> int | None:
    """The worse of the two directions' p99 lateness, None when the stats lack it."""
    values = [((link_stats or {}).get(d) or {}).get("lateness_us", {}).get("p99")
              for d in ("a2b", "b2a")]
    known = [int(v) for v in values if v is not None]
    return max(known) if known else None


def worst_lateness_p99_us(metrics: Mapping[str, Any]) -> int | None:
    """The worse direction's p99 lateness from a run's metrics (data and ACK), None when
    neither is known."""
    known = [int(metrics[k]) for k in ("lateness_p99_us", "ack_lateness_p99_us")
             if metrics.get(k) is not None]
    return max(known) if known else None


def gaps_within_10pct(link_stats: Mapping[str, Any] | None) -> float | None:
    """The worse direction's share of backlogged departure gaps within 10% of schedule, from
    the emulator's own count; None when no direction counted enough gaps (or the stats
    predate the count)."""
    known = []
    for d in ("a2b", "b2a"):
        gaps = ((link_stats or {}).get(d) or {}).get("departure_gaps") or {}
        counted = int(gaps.get("backlogged") or 0)
        if gaps.get("fraction") is not None and counted >= MIN_GAPS_COUNTED:
            known.append(float(gaps["fraction"]))
    return min(known) if known else None


def late_reason(metrics: Mapping[str, Any]) -> str:
    """Why a run's metrics say its emulator was late ('' when they do not)."""
    if not emulator_late(metrics):
        return ""
    p99 = worst_lateness_p99_us(metrics)
    if p99 is not None and p99 > MAX_LATENESS_P99_US:
        return f"p99 lateness {p99 / 1000:.1f} ms, over {MAX_LATENESS_P99_US / 1000:g} ms"
    gaps = metrics.get("emulator_gaps_within_10pct")
    if gaps is not None and gaps < MIN_GAPS_WITHIN_10PCT:
        return (f"{100 * gaps:.1f}% of backlogged departure gaps within 10% of schedule, under "
                f"{100 * MIN_GAPS_WITHIN_10PCT:g}%")
    return LATE_RULE


def emulator_late(metrics: Mapping[str, Any]) -> bool:
    """Whether a run's metrics say its emulator was late (unknown is not late)."""
    return metrics.get("lateness_ok") is False


def lateness_ok(link_stats: Mapping[str, Any] | None) -> bool | None:
    """True when both directions' p99 lateness is within the limit and their departure gaps
    (where counted) were kept; None when the lateness is unknown."""
    worst = lateness_p99_us(link_stats)
    if worst is None:
        return None
    gaps = gaps_within_10pct(link_stats)
    return worst <= MAX_LATENESS_P99_US and (gaps is None or gaps >= MIN_GAPS_WITHIN_10PCT)
