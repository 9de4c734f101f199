"""Behavioural evidence for DCTCP: its window follows alpha under marks, Reno without them.

Real Mininet networks, the trace link at a fixed 12 Mbit/s (one packet per ~1 ms, so a
packet of queue is a ms of delay), 5 ms each way (base RTT ~11 ms, a bandwidth-delay
product of ~11 packets), drop-tail 200 packets. DCTCP is forced to netrepro's eBPF
implementation: it is the code under test. Every threshold comes from the algorithm (the
comments say how), never from an earlier run. A run whose emulator was late is made again
before it is judged (tests/integration/helpers/timely.py).

The emulator has no ECN-marking queue yet, so the marked runs model one in front of it:
tests/integration/helpers/ce_marker.bpf.c on the sender's egress keeps the backlog of a
12 Mbit/s link and sets CE on ECN-capable data packets that find more than K = 20
packets ahead of them (DCTCP's rule on the instantaneous queue). The same claims against
the emulator's own `ecn:` queue run once the queue spec accepts it.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from analysis.dctcp_alpha import (ALPHA_UNITS, alpha_bounds_at, cwr_reductions, ewma_step,
                                  read_alpha)
from analysis.tcp_probe import read_probe
from app.executor import RunOutcome, execute
from core.paths import REPO_ROOT, ProjectPaths
from core.queue_spec import QueueSpecError, parse_queue
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from kernel import dctcp as dctcp_module
from kernel.dctcp_alpha import SOURCE_MAP
from core.tcp_probe_format import CA_LOSS, CA_RECOVERY
from tests.integration.helpers import ce_marker
from tests.integration.helpers.timely import timely

RATE_MBPS = 12
RATE = f"rate:{RATE_MBPS}"
DELAY_MS = 5
BUFFER = 200
SECONDS = 12.0
K = 20
N_FLOWS = 1
IPERF_PORT = 5201
KERNEL_NAME = "bpf_dctcp"
EMULATOR_ECN_QUEUE = f"ecn:k={K},packets={BUFFER}"

Run = Callable[..., RunOutcome]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """run(variant, marking, queue=...): one run per combination, shared by the tests.

    marking: "none", or "tc-model" (the CE marker on the sender's egress)."""
    traces = TraceSet.for_project(REPO_ROOT)
    done: dict[tuple[str, str, str], RunOutcome] = {}
    marker = ce_marker.build(tmp_path_factory.mktemp("ce-marker"), RATE_MBPS, K, IPERF_PORT)

    def _run(variant: str, marking: str, queue: str = f"droptail:packets={BUFFER}",
             params: dict[str, Any] | None = None) -> RunOutcome:
        key = (variant, marking, queue)
        if key not in done:
            # Each marking gets its own results folder: the specs are otherwise identical.
            paths = ProjectPaths(results_override=tmp_path_factory.mktemp(f"dctcp-{marking}"))
            spec = RunSpec(experiment="dctcp-behaviour", scheme=variant, data_trace=RATE,
                           ack_trace=RATE, delay_ms=DELAY_MS, queue=queue,
                           duration_s=SECONDS, params=make_params(**(params or {})))
            store = ExperimentStore(paths.results_dir / "dctcp-behaviour")
            what = f"{variant}, marking {marking}, {queue}"
            if marking == "tc-model":
                with pytest.MonkeyPatch.context() as patch, \
                        ce_marker.marking_paths(patch, marker, K):
                    done[key] = timely(lambda: execute(spec, store, paths, traces), what)
            else:
                done[key] = timely(lambda: execute(spec, store, paths, traces), what)
        outcome = done[key]
        assert outcome.ok, f"{variant}, marking {marking}, {queue}: {outcome.reason}"
        assert outcome.metrics is not None
        assert outcome.metrics["tcp_probe_status"] == "recorded", outcome.metrics
        return outcome

    return _run


def _dctcp(run: Run, marking: str, queue: str | None = None) -> RunOutcome:
    if queue is None:
        return run("dctcp", marking, params={"cc_impl": "ebpf"})
    return run("dctcp", marking, queue=queue, params={"cc_impl": "ebpf"})


def _facts(outcome: RunOutcome) -> dict[str, Any]:
    meta = json.loads((outcome.path / "meta.json").read_text())
    facts: dict[str, Any] = meta["verification"]["dctcp"]
    return facts


# ------------------------------------------------------------- what served, and ECN

@pytest.mark.parametrize("marking", ["none", "tc-model"])
def test_both_ends_run_bpf_dctcp_with_ecn(run: Run, marking: str) -> None:
    outcome = _dctcp(run, marking)
    m = outcome.metrics
    assert m is not None
    source = REPO_ROOT / "native" / "bpf" / "dctcp.bpf.c"
    assert (m["cc_requested"], m["cc_provider"], m["cc_used"], m["cc_source_sha256"]) == \
        ("dctcp", "ebpf", KERNEL_NAME, hashlib.sha256(source.read_bytes()).hexdigest())
    facts = _facts(outcome)
    # Both hosts' routes name the control, in their own namespaces; ECN is not set anywhere.
    assert all(f"congctl {KERNEL_NAME}" in facts["routes"][side]
               for side in ("sender", "receiver")), facts["routes"]
    assert all(facts["ecn_settings"][side]["tcp_ecn"].isdigit()
               for side in ("sender", "receiver")), facts["ecn_settings"]
    assert facts["sender_socket"]["cc"] == facts["receiver_socket"]["cc"] == KERNEL_NAME
    assert facts["sender_socket"]["ecn"] and facts["receiver_socket"]["ecn"], facts
    # The receiver saw ECN-capable data: nothing on the path cleared the field.
    assert facts["receiver_socket"]["ecnseen"], facts
    alpha = facts["alpha"]
    assert (alpha["status"], alpha["source"]) == ("recorded", SOURCE_MAP), alpha
    # Sampled every 50 ms over a 12 s run: far more than 100 samples if the sampler kept up.
    assert alpha["samples"] >= 100, alpha
    assert m["window_valid"] is True, m["window_flows"]


def test_a_receiver_without_dctcp_makes_the_run_invalid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without DCTCP on the receiver's side Linux refuses ECN for DCTCP's ECT SYN; the
    sender then falls back to Reno, and the run must say why it is invalid."""
    real = dctcp_module.route_with_congctl

    def sender_only(host: Any, peer_ip: str, cc: str) -> str:
        return real(host, peer_ip, cc) if host.name.endswith("s") else "(not set)"

    monkeypatch.setattr(dctcp_module, "route_with_congctl", sender_only)
    paths = ProjectPaths(results_override=tmp_path / "results")
    spec = RunSpec(experiment="dctcp-behaviour", scheme="dctcp", data_trace=RATE,
                   ack_trace=RATE, delay_ms=DELAY_MS, queue=f"droptail:packets={BUFFER}",
                   duration_s=4, params=make_params(cc_impl="ebpf"))
    outcome = execute(spec, ExperimentStore(paths.results_dir / "dctcp-behaviour"), paths,
                      TraceSet.for_project(REPO_ROOT))
    assert not outcome.ok
    assert "ECN was not negotiated" in outcome.reason, outcome.reason
    assert f"{KERNEL_NAME} without it runs as reno" in outcome.reason, outcome.reason


# ------------------------------------------------------------------ without marks

def test_without_marks_dctcp_grows_and_halves_like_reno(run: Run) -> None:
    dctcp, reno = _dctcp(run, "none"), run("reno", "none")
    d, r = dctcp.metrics, reno.metrics
    assert d is not None and r is not None
    facts = _facts(dctcp)
    sender, receiver = facts["alpha"]["sender_entry"], facts["alpha"]["receiver_entry"]
    # No mark anywhere: the emulator's drop-tail queue never sets CE.
    assert sender["delivered_ce"] == 0 and receiver["ce_changes"] == 0, facts["alpha"]
    assert d["ecn_reductions"] == 0, d
    # Each window without marks decays alpha by g (at least 1/1024) from its initial 1:
    # after n windows it is exactly the rule applied n times.
    expected = ALPHA_UNITS
    for _ in range(sender["updates"]):
        expected = ewma_step(expected, 1, 0)
    assert sender["alpha"] == expected, sender
    # Losses halve (drop-tail overflow at ~211 packets): ssthresh = floor(cwnd / 2), so the
    # ratio lies in (1/2 - 1/cwnd, 1/2]; the slow-start overshoot can lose more than once.
    assert d["ssthresh_ratio_at_loss"] is not None, d
    assert 0.5 - 1 / 100 < d["ssthresh_ratio_at_loss"] <= 0.5, d
    assert sender["losses"] >= 1, sender
    # Avoidance growth is Reno's own code (tcp_reno_cong_avoid): one packet per RTT for both,
    # measured the same way on the same path. 20% allows for the measurement's own spread
    # (srtt standing in for the RTT of each step).
    assert d["ca_growth_pkts_per_rtt"] is not None and r["ca_growth_pkts_per_rtt"] is not None
    ratio = d["ca_growth_pkts_per_rtt"] / r["ca_growth_pkts_per_rtt"]
    assert 0.8 <= ratio <= 1.25, (d["ca_growth_pkts_per_rtt"], r["ca_growth_pkts_per_rtt"])


# ---------------------------------------------------------------------- under marks

def test_the_receiver_echoes_exactly_the_marked_packets(run: Run) -> None:
    outcome = _dctcp(run, "tc-model")
    counts = json.loads((outcome.path / ce_marker.COUNTS_FILE).read_text())
    sender = _facts(outcome)["alpha"]["sender_entry"]
    receiver = _facts(outcome)["alpha"]["receiver_entry"]
    assert counts["marked"] > 0 and counts["not_ect"] == 0, counts
    assert receiver["ce_changes"] > 0, receiver
    # The receiver's state machine ACKs at once on every change of CE state, so each ACK's
    # ECE covers only packets of one state, and delivered_ce counts exactly the CE packets
    # delivered. It is read at the last alpha update (up to one window stale), and up to a
    # window of marked packets was still in flight when the sender stopped: two windows.
    probe = read_probe(outcome.path)
    assert probe is not None
    slack = 2 * int(probe.snd_cwnd.max())
    assert abs(sender["delivered_ce"] - counts["marked"]) <= slack, (sender, counts, slack)


def _check_alpha_rule(outcome: RunOutcome) -> None:
    trace = read_alpha(outcome.path)
    assert trace is not None
    alpha = np.round(trace.alpha * ALPHA_UNITS).astype(np.int64)
    one_update = np.flatnonzero(np.diff(trace.updates) == 1)
    checked = 0
    for i in one_update:
        delivered = int(trace.delivered[i + 1] - trace.delivered[i])
        marked = int(trace.delivered_ce[i + 1] - trace.delivered_ce[i])
        assert alpha[i + 1] == ewma_step(int(alpha[i]), delivered, marked), \
            (trace.time_s[i], alpha[i], alpha[i + 1], delivered, marked)
        checked += marked > 0
    # Sampled every 50 ms while windows last ~30 ms: many sample pairs span exactly one
    # window, and with the queue kept near K a good share of windows carry marks.
    assert checked >= 10, f"only {checked} marked windows were seen alone between samples"


def _check_reductions_follow_alpha(outcome: RunOutcome) -> list[float]:
    probe, trace = read_probe(outcome.path), read_alpha(outcome.path)
    assert probe is not None and trace is not None
    reductions = cwr_reductions(probe)
    # DCTCP's sawtooth (paper section 3.3) repeats every ~sqrt((C RTT + K) / 2N) RTTs,
    # ~4 RTTs of ~30 ms here: hundreds of reductions in 12 s; ten is a floor.
    assert len(reductions) >= 10, reductions
    ratios = []
    for r in reductions:
        bounds = alpha_bounds_at(trace, r.time_s)
        if bounds is None:
            continue
        low, high = r.alpha_range()
        # ssthresh = cwnd - (cwnd alpha) >> 11 for some alpha the sampler's bracket allows.
        assert low < bounds[1] + 1 and high > bounds[0] - 1, (r, r.alpha_range(), bounds)
        ratios.append(r.ssthresh / r.cwnd)
    assert len(ratios) >= 10
    return ratios


def test_alpha_follows_the_dctcp_rule_window_by_window(run: Run) -> None:
    _check_alpha_rule(_dctcp(run, "tc-model"))


def test_each_reduction_cuts_alpha_over_two_of_the_window(run: Run) -> None:
    outcome = _dctcp(run, "tc-model")
    ratios = _check_reductions_follow_alpha(outcome)
    m = outcome.metrics
    assert m is not None
    # Marks cut the window by alpha / 2 <= 1/2: never more than Reno's half. Only windows
    # whose every packet was marked keep alpha at 1 (slow start's overshoot); once the queue
    # swings around K most windows are not all marked, alpha < 1 and cuts are gentler.
    assert all(ratio >= 0.5 for ratio in ratios), ratios
    assert float(np.median(ratios)) > 0.5, ratios
    assert 0 < m["dctcp_alpha_mean"] < 1 and 0 < m["ecn_marked_fraction"] < 1, m


def _check_queue_near_k_without_loss(outcome: RunOutcome) -> None:
    m = outcome.metrics
    assert m is not None
    # The buffer (200) is never reached: no drop, and no loss response while ACKs flow
    # (after the span the link serves nothing, and the sender's timeout is not a loss).
    assert m["dropped_packets"] == 0, m
    probe = read_probe(outcome.path)
    assert probe is not None
    losses = [c for c in probe.state_changes
              if c.ca_state in (CA_RECOVERY, CA_LOSS) and c.time_s <= probe.time_s[-1]]
    assert losses == [], losses
    # DCTCP paper section 3.3 with N flows: the queue peaks at Q_max = K + N and swings by
    # A = sqrt(2 N (C RTT + K)) / 2 below it (C RTT ~ 11 packets). The log counts a packet
    # until the opportunity that carries it (one more) and the marker models the queue
    # from the sender's side (one packet either way): 2 packets of slack each side.
    amplitude = math.sqrt(2 * N_FLOWS * (11 + K)) / 2
    low, high = K + N_FLOWS - amplitude - 2, K + N_FLOWS + 2
    assert low <= m["queue_occupancy_median_pkts"] <= high, (low, high, m)


def test_marks_keep_the_queue_near_k_without_loss(run: Run) -> None:
    _check_queue_near_k_without_loss(_dctcp(run, "tc-model"))


def test_dctcp_under_the_emulators_ecn_queue(run: Run) -> None:
    try:
        parse_queue(EMULATOR_ECN_QUEUE)
    except QueueSpecError as e:
        pytest.skip(f"the emulator does not accept {EMULATOR_ECN_QUEUE!r} yet: {e}")
    outcome = _dctcp(run, "none", queue=EMULATOR_ECN_QUEUE)
    _check_alpha_rule(outcome)
    ratios = _check_reductions_follow_alpha(outcome)
    assert all(ratio >= 0.5 for ratio in ratios), ratios
    _check_queue_near_k_without_loss(outcome)
