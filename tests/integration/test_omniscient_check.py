"""The omniscient reference checked against a real run of a saturating sender.

A fixed window of 1000 datagrams keeps the bottleneck queue full, so every
delivery opportunity of the trace carries a 1500-byte packet (1504 bytes on
the log's basis, exactly one opportunity): the run should deliver what the
omniscient protocol delivers over the same span, with more delay.
"""
from __future__ import annotations

import pytest

from experiments.sprout.self_inflicted import OmniscientReferences
from app.executor import execute
from core.runspec import RunSpec, make_params

TRACE = "Verizon-LTE-short"
SECONDS = 20.0


def test_saturating_sender_reaches_the_omniscient_throughput(paths, traces, store) -> None:
    spec = RunSpec(experiment="itest", scheme="fixed-window", data_trace=f"{TRACE}.down",
                   ack_trace=f"{TRACE}.up", delay_ms=20, duration_s=SECONDS,
                   params=make_params(window=1000))
    outcome = execute(spec, store, paths, traces)
    assert outcome.ok, outcome.reason
    m = outcome.metrics
    assert m is not None
    reference = OmniscientReferences(traces).for_run(spec)
    assert reference.duration_ms == SECONDS * 1000 and reference.looped
    # The same opportunities are counted on both sides (the log's window is its own
    # first-to-last event, a few ms away from [0, 20 s)).
    assert m["capacity_mbps"] == pytest.approx(reference.throughput_mbps, rel=0.02)
    assert m["throughput_mbps"] >= 0.99 * reference.throughput_mbps
    assert m["utilization"] >= 0.99
    # Nothing beats the omniscient delay; a standing queue of ~1000 packets is far above it.
    assert reference.p95_e2e_delay_ms <= m["p95_e2e_delay_ms"]
    assert OmniscientReferences(traces).self_inflicted_ms(spec, m) > 0
