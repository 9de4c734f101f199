"""A PRR run's metrics and verdict from hand-made artifacts; the run's lifecycle choice."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.executor import judge
from runkinds.metrics import derive
from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics
from core.runspec import RunSpec, make_params
from experiments.prr.fig2 import PrrFig2
from core.errors import RunInvalid
from runkinds.registry import SWITCHED_PATH, TRACE_PATH, kind_of
from runkinds.switched_path.options import switched_path_options
from tests.unit.pcap_builder import MSS
from tests.unit.prr_fake_run import write_fake_run


def test_the_numbers_of_one_recovery_episode(tmp_path: Path) -> None:
    meta = write_fake_run(tmp_path)
    run = load_transfer_run(tmp_path, meta)
    assert run.verdict.valid, run.verdict.reason()
    m = transfer_metrics(run, meta)
    # From the first data segment (0.050 s) to the final ACK; the handshake apart.
    assert m["transfer_time_s"] == pytest.approx(0.200)
    assert m["handshake_s"] == pytest.approx(0.050)
    assert m["recovery_episodes"] == 1 and m["timeouts"] == 0
    assert m["recovery_start_s"] == pytest.approx(0.1055)
    assert m["time_in_recovery_s"] == pytest.approx(0.145)
    assert (m["cwnd_entry"], m["ssthresh_entry"]) == (10, 7)
    assert (m["cwnd_exit"], m["ssthresh_exit"]) == (7, 7)
    assert m["retransmissions"] == 2 and m["total_retrans_tcp_info"] == 2
    # In the episode: ACKs at 0.106-0.109, then the two retransmissions and two new
    # segments after the ACK at 0.109, then the final ACK.
    assert (m["recovery_acks"], m["new_in_recovery"], m["acks_before_new"],
            m["max_burst"]) == (5, 2, 4, 4)
    assert m["unsent_at_recovery_bytes"] == 2 * MSS  # segments 11 and 12
    # FACK: the first SACK (segment 4 at 0.103 s) is 3 segments above the ACK of 1: not yet;
    # segment 5's (0.104 s) is 4 above. dupthresh: the third dupACK, 0.105 s. The kernel
    # entered at 0.1055 s.
    assert m["entry_after_fack_ms"] == pytest.approx(1.5)
    assert m["entry_after_dupthresh_ms"] == pytest.approx(0.5)
    assert (m["acks_after_fack"], m["acks_after_dupthresh"]) == (1, 0)
    assert m["dropped_segments"] == [2, 3] and m["drops_as_planned"] is True
    assert m["mss"] == MSS
    assert m["path_delay_max_ms"] == pytest.approx(0.0)  # the test's captures share times


def test_probe_times_move_onto_the_capture_clock(tmp_path: Path) -> None:
    run = load_transfer_run(tmp_path, write_fake_run(tmp_path))
    assert run.probe_times()[0] == pytest.approx(0.100)


def test_a_run_with_other_drops_is_invalid(tmp_path: Path) -> None:
    spec = PrrFig2(None).matrix(quick=True)[0]
    meta = write_fake_run(tmp_path, spec, receiver_loses={"o2"}, controller_log=[2])
    with pytest.raises(RunInvalid, match="planned segments 3 were not dropped"):
        judge(spec, derive(tmp_path, spec, meta), meta)
    meta = write_fake_run(tmp_path, spec)
    judge(spec, derive(tmp_path, spec, meta), meta)
    assert kind_of(spec).metrics(tmp_path, spec, meta)["drops_as_planned"] is True
    meta["controller"]["plan_problems"] = ["the direct flow was never installed after the plan"]
    with pytest.raises(RunInvalid, match="controller: the direct flow was never installed"):
        judge(spec, derive(tmp_path, spec, meta), meta)
    with pytest.raises(RunInvalid, match="could not be derived: pcap unreadable"):
        judge(spec, None, meta, "pcap unreadable")


def test_the_topology_option_chooses_how_a_run_is_measured() -> None:
    prr = PrrFig2(None).matrix(quick=True)[0]
    assert kind_of(prr) is SWITCHED_PATH
    assert SWITCHED_PATH.planned_seconds(prr, None) > 0  # type: ignore[arg-type]
    trace = RunSpec("x", "cubic", "rate:10", "rate:10", duration_s=5.0)
    assert kind_of(trace) is TRACE_PATH
    odd = RunSpec("x", "cubic", "rate:10", "rate:10", options=make_params(topology="ring"))
    with pytest.raises(ValueError, match="unknown topology 'ring'"):
        kind_of(odd)


def test_a_prr_spec_whose_path_disagrees_with_its_options_is_refused() -> None:
    spec = PrrFig2(None, dict(bottleneck=100)).matrix(quick=True)[0]
    assert switched_path_options(spec)["bottleneck"] == 100
    bad = replace(spec, delay_ms=5, params=())
    with pytest.raises(ValueError, match="disagrees with its options"):
        switched_path_options(bad)


def test_legacy_triggers_count_dupacks_from_the_handshake(tmp_path: Path) -> None:
    """Heavy-like: the first segments lost, so the very first ACKs are duplicates."""
    from runkinds.switched_path.transfer_run import legacy_triggers
    from runkinds.switched_path.tcp_pcap import read_flow
    from tests.unit.pcap_builder import loss_run
    c = loss_run({1, 2, 3, 4, 6, 7, 8})
    flow = read_flow(c.write(tmp_path / "s.pcap"))
    fack, dup = legacy_triggers(flow)
    # SACKs for segments 5 (0.104 s), 9 (0.108 s) and 10 (0.109 s), all acking nothing:
    # FACK at the first (5 segments above the ACK), dupthresh at the third.
    assert fack == pytest.approx(0.104) and dup == pytest.approx(0.109)
