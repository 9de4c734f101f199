"""Real runs over a trace link: delivered bytes, metrics, the verified congestion control."""
from __future__ import annotations

import json
from pathlib import Path

from analysis.tcp_probe import read_probe
from app.executor import execute
from core.runspec import RunSpec, make_params
from kernel import tcp_buffers

# One opportunity per ms, 1504 bytes each: 1504 * 8 * 1000 / 1e6 Mbit/s.
FIXED_CAPACITY_MBPS = 12.032


def _spec(trace, scheme: str, seconds: float, queue: str = "infinite", **params) -> RunSpec:
    return RunSpec(experiment="itest", scheme=scheme, data_trace=str(trace),
                   ack_trace=str(trace), delay_ms=20, duration_s=seconds, queue=queue,
                   params=make_params(**params))


def test_fixed_window_fills_a_fixed_trace(paths, traces, store, fixed_trace) -> None:
    outcome = execute(_spec(fixed_trace, "fixed-window", 6, window=100), store, paths, traces)
    assert outcome.ok, outcome.reason
    m = outcome.metrics
    assert m is not None
    assert abs(m["capacity_mbps"] - FIXED_CAPACITY_MBPS) / FIXED_CAPACITY_MBPS < 0.01
    # 100 datagrams in flight against a ~41-packet bandwidth-delay product keep the
    # queue busy: nearly every opportunity carries a packet.
    assert m["utilization"] > 0.95
    # The standing queue is the window minus the BDP: about 59 packets, i.e. ~59 ms.
    assert 45 < m["p95_queue_delay_ms"] < 75
    assert m["p95_e2e_delay_ms"] == m["p95_signal_delay_ms"] + 20
    meta = json.loads((outcome.path / "meta.json").read_text())
    received = meta["verification"]["receiver"]["datagrams_received"]
    sent = meta["link"]["a2b"]["sent"]
    # The emulator stops before the receiver: all it put on the wire arrived.
    assert received == sent
    # Logged departures leave the queue, then wait 20 ms: at most ~20 were still delayed.
    assert m["departed_packets"] - 25 <= sent <= m["departed_packets"]
    assert m["lateness_p99_us"] is not None
    # The ends' own timing: every datagram the receiver got was answered and timed; every
    # ACK that opened the window timed to its datagram (all but those at the end).
    answered = meta["verification"]["receiver"]["host_timing"]["arrival_to_send_us"]
    assert answered["count"] == received
    reacted = meta["verification"]["sender"]["host_timing"]["arrival_to_send_us"]
    acks = meta["verification"]["sender"]["acks_received"]
    assert acks - 2 <= reacted["count"] <= acks
    assert m["host_reaction_p99_us"] is not None and m["host_timing_ok"] is not None


def test_cubic_over_a_fixed_trace_is_verified(paths, traces, store, fixed_trace) -> None:
    outcome = execute(_spec(fixed_trace, "cubic", 8), store, paths, traces)
    assert outcome.ok, outcome.reason
    m = outcome.metrics
    assert m is not None
    assert m["cc_requested"] == "cubic" and m["cc_used"] == "cubic"
    assert m["cc_provider"] == "builtin"
    assert 0.7 * FIXED_CAPACITY_MBPS < m["throughput_mbps"] <= FIXED_CAPACITY_MBPS * 1.001
    # Each host's kernel timed every segment it took in: the ACKs at the sender, the data
    # (about one packet per ms of the 8 s) at the receiver.
    stack = json.loads((outcome.path / "meta.json").read_text())[
        "verification"]["tcp_probe"]["stack_delay"]
    assert stack["status"] == "recorded", stack
    assert stack["sender"]["stack_delay_us"]["count"] > 1000
    assert stack["receiver"]["stack_delay_us"]["count"] > 5000
    assert m["host_reaction_p99_us"] is not None and m["host_timing_ok"] is not None


def test_bursty_trace_capacity_matches_the_trace(paths, traces, store, bursty_trace) -> None:
    outcome = execute(_spec(bursty_trace, "fixed-window", 5, window=60), store, paths, traces)
    assert outcome.ok, outcome.reason
    m = outcome.metrics
    assert m is not None
    # 21 opportunities (ten at 5, ten at 50, one at 100) of 1504 bytes per 100 ms.
    expected = 21 * 1504 * 8 / 0.1 / 1e6
    assert abs(m["capacity_mbps"] - expected) / expected < 0.03
    assert m["throughput_mbps"] <= m["capacity_mbps"] * 1.001
    assert m["utilization"] > 0.9
    # Bursts every 50/50 ms: a packet may wait for the next burst.
    assert m["p95_queue_delay_ms"] >= 40


def test_codel_drops_at_dequeue_are_logged_and_counted(paths, traces, store, fixed_trace) -> None:
    # 100 datagrams in flight against a ~41-packet bandwidth-delay product: a standing queue
    # of ~59 ms that a fixed window never drains, so CoDel (target 5 ms) starts dropping one
    # interval (100 ms) after it formed and keeps dropping.
    outcome = execute(_spec(fixed_trace, "fixed-window", 6, queue="codel", window=100),
                      store, paths, traces)
    assert outcome.ok, outcome.reason
    m = outcome.metrics
    assert m is not None
    log_lines = (outcome.path / "data.log").read_text().splitlines()
    header = [line for line in log_lines if line.startswith("# queue:")]
    assert header == ["# queue: codel [target=5 ms, interval=100 ms]"]
    events = [line.split() for line in log_lines if not line.startswith("#")]
    drops = [e for e in events if e[1] == "d"]
    assert drops and all(d[2:] == ["1", "1504"] for d in drops)
    a2b = json.loads((outcome.path / "meta.json").read_text())["link"]["a2b"]
    assert a2b["drops"] == a2b["dequeue_drops"] == len(drops) == m["dropped_packets"]
    first_arrival = min(int(line.split()[0]) for line in log_lines
                        if " + " in line and not line.startswith("#"))
    # The queue needs > 5 ms to form, then one interval passes before the first drop.
    assert int(drops[0][0]) - first_arrival >= 100
    assert m["loss"] > 0


def test_hosts_run_with_the_requested_tcp_buffer_profile(
        paths, traces, store, fixed_trace) -> None:
    machine = Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()
    spec = _spec(fixed_trace, "cubic", 8)
    spec = RunSpec.from_dict({**spec.to_dict(),
                              "options": {tcp_buffers.OPTION: tcp_buffers.LINUX_3_2}})
    outcome = execute(spec, store, paths, traces)
    assert outcome.ok, outcome.reason
    meta = json.loads((outcome.path / "meta.json").read_text())
    assert meta["tcp_buffer_profile"] == tcp_buffers.LINUX_3_2
    wanted = tcp_buffers.PROFILES[tcp_buffers.LINUX_3_2]
    for host, values in meta["tcp_buffers"].items():
        assert {k: values[k] for k in wanted} == wanted, host
    # Set in the hosts' namespaces only: the machine keeps its own.
    assert Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split() == machine
    # The receive maximum bounds what the receiver advertises.
    probe = read_probe(outcome.path)
    assert probe is not None
    assert 0 < probe.snd_wnd.max() <= 4194304
