"""Finished runs as throughput vs self-inflicted delay: one row per run (the CSV),
one point per scheme (or per scheme setting) with its mean and spread over trials.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from analysis.fidelity import worst_lateness_p99_us
from analysis.omniscient import self_inflicted_delay_ms
from analysis.scheme_labels import scheme_label
from analysis.scored_span import WHOLE_RUN, direction_metrics
from experiments.sprout.self_inflicted import OmniscientReferences
from analysis.summary import RunRecord
from core.run_span import OFFSET_S, WARMUP_S, both_directions

# The logs' resolution: a self-inflicted delay below 1 ms is drawn, and divided
# by, as 1 ms (a log axis and a ratio both need a positive number).
DELAY_FLOOR_MS = 1.0

Row = Mapping[str, Any]


def run_row(record: RunRecord, refs: OmniscientReferences, reverse: bool = False,
            rule: str = WHOLE_RUN) -> dict[str, Any]:
    """The columns every throughput/self-inflicted-delay summary shares, for one run; with
    `reverse`, for the other direction of a run that loaded both (its `reverse` metrics);
    scored as `rule` says (analysis/scored_span.py), the omniscient protocol on the same ms.
    Raises MetricsError when the rule leaves nothing of that direction to score."""
    outer = record.metrics
    m = direction_metrics(outer, rule, reverse)
    reference = refs.for_run(record.spec, m, record.path, reverse=reverse)
    span = record.meta.get("span") or {}
    from_ms = int(outer.get("scored_from_ms", span.get("warmup_ms", 0)))
    scored_s = float(m["duration_s"]) if m.get("duration_s") is not None else \
        (span["span_ms"] - span.get("warmup_ms", 0)) / 1000.0 if "span_ms" in span else None
    return {
        "scheme": record.spec.scheme,
        "label": scheme_label(record.spec.scheme, [outer.get("cc_provider")]),
        "trial": record.spec.trial,
        "throughput_mbps": m["throughput_mbps"],
        "p95_e2e_delay_ms": m["p95_e2e_delay_ms"],
        "self_inflicted_delay_ms": self_inflicted_delay_ms(float(m["p95_e2e_delay_ms"]), reference),
        "omniscient_p95_e2e_delay_ms": reference.p95_e2e_delay_ms,
        "utilization": m.get("utilization"),
        "capacity_mbps": m.get("capacity_mbps"),
        "provider": outer.get("cc_provider"),
        "cc_used": outer.get("cc_used_reverse" if reverse else "cc_used"),
        "lateness_p99_us": worst_lateness_p99_us(outer),
        "lateness_ok": outer.get("lateness_ok"),
        "cpu_steal_pct": outer.get("cpu_steal_pct"),
        "run": record.path.name,
        "loads": "both directions" if both_directions(record.spec) else "one direction",
        "offset_s": float(record.spec.option(OFFSET_S, 0.0)),
        "warmup_s": float(record.spec.option(WARMUP_S, 0.0)),
        "played_s": span.get("span_ms", 0) / 1000.0 or None,
        "scored_span": rule,
        "scored_from_s": from_ms / 1000.0,
        "scored_until_s": from_ms / 1000.0 + scored_s if scored_s is not None else None,
        "scored_s": scored_s,
        "trace_loops": bool(span.get("ack_loops" if reverse else "data_loops")),
        "trace_play": "once" if span.get("once") else "loop",
    }


@dataclass(frozen=True)
class TradeoffPoint:
    """The mean over trials; `*_sd` is the sample standard deviation (0 for one trial)."""

    scheme: str
    trials: int
    throughput_mbps: float
    throughput_sd: float
    self_inflicted_delay_ms: float
    delay_sd: float
    providers: tuple[str | None, ...] = ()
    late: int = 0  # runs whose emulator was late (p99 lateness above the limit)

    @property
    def label(self) -> str:
        return scheme_label(self.scheme, self.providers)

    @property
    def plotted_delay_ms(self) -> float:
        return max(self.self_inflicted_delay_ms, DELAY_FLOOR_MS)


def _sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def point_of(rows: Iterable[Row]) -> TradeoffPoint:
    """One point from the rows of one scheme (or one setting of it): mean and sd."""
    rows = list(rows)
    if not rows:
        raise ValueError("a point needs at least one finished run")
    schemes = {row["scheme"] for row in rows}
    if len(schemes) != 1:
        raise ValueError(f"rows of several schemes in one point: {sorted(schemes)}")
    thr = [float(row["throughput_mbps"]) for row in rows]
    delay = [float(row["self_inflicted_delay_ms"]) for row in rows]
    return TradeoffPoint(scheme=schemes.pop(), trials=len(rows),
                         throughput_mbps=statistics.fmean(thr), throughput_sd=_sd(thr),
                         self_inflicted_delay_ms=statistics.fmean(delay), delay_sd=_sd(delay),
                         providers=tuple(row.get("provider") for row in rows),
                         late=sum(row.get("lateness_ok") is False for row in rows))


def points_by(rows: Iterable[Row], key: Callable[[Row], Any] = lambda row: row["scheme"]
              ) -> dict[Any, TradeoffPoint]:
    """Rows grouped by `key` (the scheme by default), one point per group, in first-seen order."""
    groups: dict[Any, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return {k: point_of(group) for k, group in groups.items()}
