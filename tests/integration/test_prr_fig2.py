"""prr-fig2 runs through the real executor: OVS under a controller, the transfer, both
captures, tcp_probe, and the verdict that exactly the planned segments were dropped."""
from __future__ import annotations

import json

import pytest

from app.executor import execute
from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.traces import TraceSet
from experiments.prr.fig2 import PrrFig2
from kernel.congestion_control import CongestionControlResolver


@pytest.mark.parametrize("pattern, recovery", [("heavy", "prr-kernel"),
                                               ("light", "rate-halving")])
def test_one_run_drops_exactly_the_plan_and_reads_the_kernel(
        pattern: str, recovery: str, paths: ProjectPaths, traces: TraceSet,
        store: ExperimentStore) -> None:
    spec = PrrFig2(None, dict(pattern=pattern, recovery=recovery)).matrix(quick=True)[0]
    outcome = execute(spec, store, paths, traces)
    assert outcome.ok, outcome.reason
    m = outcome.metrics
    assert m is not None
    planned = {"heavy": [1, 2, 3, 4, 6, 7, 8], "light": [1, 2, 3, 4, 5]}[pattern]
    assert m["drops_as_planned"] is True and m["dropped_segments"] == planned
    assert m["retransmissions"] >= len(planned)
    assert m["mss"] == 1448 and m["original_segments"] == 23  # 32 KB in 1448-byte segments
    assert m["recovery_episodes"] >= 1 and m["ssthresh_entry"] == 7  # Cubic: 0.7 x IW10
    assert 0 < m["transfer_time_s"] < 5
    assert m["window_valid"] is True, m["window_verdict"]
    # prr-fig2's default set-up holds the receiver at 10 segments in these patterns.
    assert spec.option("rwnd") == 10 and m["rwnd_segments_before_recovery"] <= 10
    meta = json.loads((outcome.path / "meta.json").read_text())
    assert meta["verification"]["cc_used"] == meta["provider"]["cc_kernel_name"]
    # An eBPF recovery records the shape of cong_control it was built for: this kernel's.
    shape = CongestionControlResolver.for_project(paths).kernel_cc_btf().shape
    assert meta["provider"]["recovery_cong_control_args"] == (
        None if recovery == "prr-kernel" else shape.args)
    assert meta["captures"]["sender"]["dropped_by_kernel"] == 0
    assert meta["controller"]["dropped_segments"] == planned
    for name in ("sender.pcap", "receiver.pcap", "tcp-probe.csv", "controller-log.jsonl"):
        assert (outcome.path / name).stat().st_size > 0, name


def test_a_plan_beyond_the_flow_fails_with_the_reason(paths: ProjectPaths, traces: TraceSet,
                                                      store: ExperimentStore) -> None:
    spec = PrrFig2(None, dict(pattern="40,41", recovery="prr-kernel")).matrix(quick=True)[0]
    outcome = execute(spec, store, paths, traces)
    assert not outcome.ok
    assert "40" in outcome.reason and "23 original segments" in outcome.reason
