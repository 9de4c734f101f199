"""Whether the emulator delivered on time in a run: its p99 lateness in both directions.

A run whose emulator was late (the machine stalled it, or too many runs
shared the CPUs) still finished, and its numbers are kept, but they are not
a faithful measurement of the scheme: figures draw such points hollow,
summaries say how many there are, and `./repro run --redo-late` reruns them.
The limit is the one `./repro bench concurrency` holds every level to.
"""
from __future__ import annotations

from typing import Any, Mapping

MAX_LATENESS_P99_US = 2000


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


def emulator_late(metrics: Mapping[str, Any]) -> bool:
    """Whether a run's metrics say its emulator was late (unknown is not late)."""
    return metrics.get("lateness_ok") is False


def lateness_ok(link_stats: Mapping[str, Any] | None) -> bool | None:
    """True when both directions' p99 lateness is within the limit; None when unknown."""
    worst = lateness_p99_us(link_stats)
    return None if worst is None else worst <= MAX_LATENESS_P99_US
