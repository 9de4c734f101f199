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
- `senders-stop`: nothing sent from the end of the shorter trace on, each direction scored
  from the warm-up to its own last delivery of what was sent before, and a direction whose
  own trace ended there delivering nothing after it. This is what the paper's points on
  AT&T LTE imply of its runs (its emulator played each trace once, so the downlink was dead
  after 786.1 s; its senders stopped there while the uplink went on delivering what they had
  queued). In an infinite FIFO queue a packet is never delayed by later ones, so leaving
  out of the log every packet sent after that time gives exactly that run (with CoDel, all
  but the rare drop decided by how little waited behind the head).

metrics.json holds the `whole-run` metrics at its top level (and `reverse`), and for a full
run each other rule's under `scored_spans` (`scored_spans[rule]`, with its own `reverse`), so
choosing a rule only reads what is there. A run with a duration (a quick stretch) is scored
whole under every rule: its stretch lies inside both traces.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from analysis.mahimahi_log import LinkLog
from analysis.metrics import MetricsError, link_metrics

SHORTER_TRACE, WHOLE_RUN, LAST_DELIVERY = "shorter-trace", "whole-run", "last-delivery"
SENDERS_STOP = "senders-stop"
RULES = (SHORTER_TRACE, WHOLE_RUN, LAST_DELIVERY, SENDERS_STOP)
SPANS_KEY = "scored_spans"
REVERSE = "reverse"  # the key of the other direction's metrics in a two-way run
ERROR = "error"  # in a rule's block: why that rule gives no metrics

DESCRIPTION = {
    SHORTER_TRACE: "scored to the end of the shorter trace of the pair",
    WHOLE_RUN: "scored to the end of the run",
    LAST_DELIVERY: "each direction scored to its own last delivery (the paper's scorer)",
    SENDERS_STOP: "nothing sent after the shorter trace's end, each direction scored to its "
                  "own last delivery",
}


def until_ms(rule: str, span: Mapping[str, Any], log: LinkLog) -> int | None:
    """Where scoring stops (exclusive, ms of the run's clock) under `rule` for a full run
    whose meta.json `span` is given; None: at the end of the log."""
    if rule == WHOLE_RUN:
        return None
    if rule == SHORTER_TRACE:
        return shorter_trace_end(span)
    if rule in (LAST_DELIVERY, SENDERS_STOP):
        if log.departure_time.size == 0:
            return None  # nothing delivered: link_metrics says so
        return int(log.departure_time.max()) + 1
    raise ValueError(f"scored span {rule!r}: expected one of {', '.join(RULES)}")


def shorter_trace_end(span: Mapping[str, Any]) -> int | None:
    """Where the shorter trace of a full run's pair ends (ms of the run), or None when it
    ends with the run."""
    shorter = min(int(span["data_period_ms"]), int(span["ack_period_ms"]))
    return shorter if shorter < int(span["span_ms"]) else None


def sent_before(log: LinkLog, stop_ms: int, served_until_ms: int | None = None) -> LinkLog:
    """The log of the same link had nothing been sent from `stop_ms` on (and, with
    `served_until_ms`, nothing served from then on): packets that reached the queue before
    it and left before the end of service, and opportunities up to the last of them."""
    served = np.iinfo(np.int64).max if served_until_ms is None else served_until_ms
    kept = ((log.departure_time - log.departure_delay) < stop_ms) & \
        (log.departure_time < served)
    last = int(log.departure_time[kept].max()) if kept.any() else min(stop_ms, served)
    opportunities = log.opportunity_time <= last
    arrived, dropped = log.arrival_time < stop_ms, log.drop_time < stop_ms
    return replace(log, arrival_time=log.arrival_time[arrived],
                   arrival_size=log.arrival_size[arrived], drop_time=log.drop_time[dropped],
                   drop_count=log.drop_count[dropped], drop_bytes=log.drop_bytes[dropped],
                   opportunity_time=log.opportunity_time[opportunities],
                   opportunity_bytes=log.opportunity_bytes[opportunities],
                   departure_time=log.departure_time[kept],
                   departure_size=log.departure_size[kept],
                   departure_delay=log.departure_delay[kept], last_event_ms=last)


def rule_log(rule: str, span: Mapping[str, Any], log: LinkLog, own_period_ms: int) -> LinkLog:
    """The log a rule scores: the run's own, or under `senders-stop` what was sent before
    the shorter trace's end (a direction whose own trace is that shorter one serving
    nothing after it: its later opportunities are a replay the paper's emulator never
    played)."""
    if rule != SENDERS_STOP:
        return log
    stop = shorter_trace_end(span)
    if stop is None:
        return log
    return sent_before(log, stop, stop if own_period_ms <= stop else None)


def span_blocks(logs: Mapping[str, LinkLog], span: Mapping[str, Any], fixed_delay_ms: float,
                from_ms: int) -> dict[str, dict[str, Any]]:
    """metrics.json's `scored_spans`: every rule but `whole-run`, for the data direction
    (`logs["data"]`, over the data trace) and, when given, the reverse one
    (`logs["reverse"]`, over the ack trace)."""
    blocks: dict[str, dict[str, Any]] = {}
    periods = {"data": int(span["data_period_ms"]), REVERSE: int(span["ack_period_ms"])}
    for rule in RULES:
        if rule == WHOLE_RUN:
            continue
        block: dict[str, Any] = {}
        for key, run_log in logs.items():
            log = rule_log(rule, span, run_log, periods[key])
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
