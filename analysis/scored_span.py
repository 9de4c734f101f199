"""Which milliseconds of a run are scored: the rules, and each rule's metrics.

A full run plays whole traces (core/run_span.py); what of it is scored is a choice of the
analysis, so the same logs can be scored again under another rule without a rerun:

- `shorter-trace` (the Sprout experiments' default): from the warm-up to the end of the
  shorter trace of the pair. On AT&T LTE the downlink trace ends at 786.1 s while the uplink
  trace runs to 1,012 s; the paper's Cellsim (2012) played each trace once, so past 786 s
  neither direction had feedback, and the paper's points fit a span that ends there.
- `whole-run`: from the warm-up to the end of the run (its last logged event).
- `last-delivery`: from the warm-up to the direction's own last delivery, as the paper's
  scorer (keithw/sprout `src/examples/scorer`) ends each scheme's score.

metrics.json holds the `whole-run` metrics at its top level (and `reverse`), and for a full
run each other rule's under `scored_spans` (`scored_spans[rule]`, with its own `reverse`), so
choosing a rule only reads what is there. A run with a duration (a quick stretch) is scored
whole under every rule: its stretch lies inside both traces.
"""
from __future__ import annotations

from typing import Any, Mapping

from analysis.mahimahi_log import LinkLog
from analysis.metrics import MetricsError, link_metrics

SHORTER_TRACE, WHOLE_RUN, LAST_DELIVERY = "shorter-trace", "whole-run", "last-delivery"
RULES = (SHORTER_TRACE, WHOLE_RUN, LAST_DELIVERY)
SPANS_KEY = "scored_spans"
REVERSE = "reverse"  # the key of the other direction's metrics in a two-way run
ERROR = "error"  # in a rule's block: why that rule gives no metrics

DESCRIPTION = {
    SHORTER_TRACE: "scored to the end of the shorter trace of the pair",
    WHOLE_RUN: "scored to the end of the run",
    LAST_DELIVERY: "each direction scored to its own last delivery (the paper's scorer)",
}


def until_ms(rule: str, span: Mapping[str, Any], log: LinkLog) -> int | None:
    """Where scoring stops (exclusive, ms of the run's clock) under `rule` for a full run
    whose meta.json `span` is given; None: at the end of the log."""
    if rule == WHOLE_RUN:
        return None
    if rule == SHORTER_TRACE:
        shorter = min(int(span["data_period_ms"]), int(span["ack_period_ms"]))
        return shorter if shorter < int(span["span_ms"]) else None
    if rule == LAST_DELIVERY:
        if log.departure_time.size == 0:
            return None  # nothing delivered: link_metrics says so
        return int(log.departure_time.max()) + 1
    raise ValueError(f"scored span {rule!r}: expected one of {', '.join(RULES)}")


def span_blocks(logs: Mapping[str, LinkLog], span: Mapping[str, Any], fixed_delay_ms: float,
                from_ms: int) -> dict[str, dict[str, Any]]:
    """metrics.json's `scored_spans`: every rule but `whole-run`, for the data direction
    (`logs["data"]`) and, when given, the reverse one (`logs["reverse"]`)."""
    blocks: dict[str, dict[str, Any]] = {}
    for rule in RULES:
        if rule == WHOLE_RUN:
            continue
        block: dict[str, Any] = {}
        for key, log in logs.items():
            end = until_ms(rule, span, log)
            try:
                values = dict(link_metrics(log, fixed_delay_ms, from_ms, end).to_dict(),
                              scored_until_ms=end)
            except MetricsError as e:  # this rule leaves nothing to score; the run stands
                values = {ERROR: str(e), "scored_until_ms": end}
            if key == REVERSE:
                block[REVERSE] = values
            else:
                block.update(values)
        blocks[rule] = block
    return blocks


def direction_metrics(metrics: Mapping[str, Any], rule: str, reverse: bool = False
                      ) -> Mapping[str, Any]:
    """One direction's link metrics under `rule`, from a run's metrics.json: the rule's
    block when the run has one, else the top level (a quick run, or `whole-run`)."""
    if rule not in RULES:
        raise ValueError(f"scored span {rule!r}: expected one of {', '.join(RULES)}")
    block = (metrics.get(SPANS_KEY) or {}).get(rule) if rule != WHOLE_RUN else None
    source = block if block is not None else metrics
    chosen = source[REVERSE] if reverse else source
    if ERROR in chosen:
        raise MetricsError(f"{DESCRIPTION[rule]}: {chosen[ERROR]}")
    return chosen
