"""The shared bottleneck's hosts with their own round trips, spread starts, and the flows'
window records: planned, checked and read without a network."""
from __future__ import annotations

from pathlib import Path

import pytest

from analysis.summary import invalid_reason
from core.errors import UsageError
from core.runspec import RunSpec, make_params
from runkinds.shared_bottleneck.metrics import window_limit_metrics, window_limits
from runkinds.shared_bottleneck.options import bottleneck_options, layout, start_offsets_s


def spec(flows: int = 8, rtt: int = 100, duration: float = 30.0, **extra: object) -> RunSpec:
    options = dict(topology="shared-bottleneck", flows=flows, rtt_ms=rtt, marking="emulator",
                   warmup_s=5.0, **extra)
    return RunSpec("e", "reno", "rate:50", "rate:50", delay_ms=rtt // 2,
                   queue="droptail:packets=100", duration_s=duration,
                   options=make_params(**options))


def test_flows_spread_over_the_hosts_in_turn_with_their_round_trips() -> None:
    o = bottleneck_options(spec(flows=10, host_rtts="80,93,107,120"))
    lay = layout(o)
    assert lay.hosts == 4 and lay.host_rtts_ms == (80, 93, 107, 120)
    assert lay.host_of_flow == (1, 2, 3, 4, 1, 2, 3, 4, 1, 2)
    # Without host_rtts every flow has a host of its own with the path's round trip.
    assert layout(bottleneck_options(spec(flows=3))).host_of_flow == (1, 2, 3)


@pytest.mark.parametrize("extra, says", [
    (dict(host_rtts="80,93,x"), "whole milliseconds"),
    (dict(host_rtts="80,93,107,120", rtt=90), "not the hosts' mean"),
    (dict(host_rtts="80,93,107,120", flows=2, rtt=100), "at most one host per flow"),
    (dict(start_spread_s=61.0), "start_spread_s"),
    (dict(start_spread_s=20.0, duration=24.0), "spread of their starts"),
    (dict(flows=150), "need host_rtts"),
    (dict(start_interval_s=-1.0), "start_interval_s=-1.0 must be >= 0"),
    (dict(start_interval_s=10.0), "the last flow starting within 60 s"),
    (dict(start_interval_s=2.0, start_spread_s=5.0), "not both"),
    (dict(start_interval_s=3.0, duration=26.0), "spread of their starts"),
    (dict(socket_sample_ms=2), "socket_sample_ms=2"),
    (dict(one_segment_packets="yes"), "one_segment_packets='yes' must be true or false"),
])
def test_bad_layouts_are_refused_naming_the_option(extra: dict, says: str) -> None:
    flows = int(extra.pop("flows", 8))
    rtt = int(extra.pop("rtt", 100))
    duration = float(extra.pop("duration", 30.0))
    with pytest.raises(UsageError, match=says):
        bottleneck_options(spec(flows=flows, rtt=rtt, duration=duration, **extra))


def test_start_offsets_are_seeded_by_seed_and_trial_and_within_the_spread() -> None:
    o = bottleneck_options(spec(flows=20, start_spread_s=5.0, host_rtts="80,93,107,120"))
    first, again = start_offsets_s(o, 1), start_offsets_s(o, 1)
    assert first == again and all(0 <= t <= 5.0 for t in first)
    assert start_offsets_s(o, 2) != first
    assert start_offsets_s(dict(o, seed=7), 1) != first
    assert start_offsets_s(bottleneck_options(spec(flows=3)), 1) == (0.0, 0.0, 0.0)


def test_staggered_starts_are_the_interval_apart_in_flow_order() -> None:
    o = bottleneck_options(spec(flows=5, start_interval_s=2.0))
    assert start_offsets_s(o, 1) == (0.0, 2.0, 4.0, 6.0, 8.0)
    assert start_offsets_s(o, 2) == start_offsets_s(o, 1)  # not drawn: the same every trial
    from runkinds.shared_bottleneck.kind import SharedBottleneckKind
    from core.traces import TraceSet
    planned = SharedBottleneckKind().planned_seconds(spec(flows=5, start_interval_s=2.0),
                                                     TraceSet([], Path("/x"), manifest={}))
    assert planned > 30.0 + 8.0  # the duration, the last flow's start and the margins


def test_each_sender_gets_its_own_delays_each_way() -> None:
    pytest.importorskip("mininet")  # the network builds on it; tests/unit-venv.sh has none
    from runkinds.shared_bottleneck.network import BottleneckConfig
    config = BottleneckConfig(senders=2, rate_mbps=50, data_delay_ms=50, ack_delay_ms=50,
                              queue="droptail:packets=10", span_ms=1000,
                              sender_rtts_ms=(81, 120))
    assert config.delays_ms() == ({"10.0.0.2": 40, "10.0.0.3": 60},
                                  {"10.0.0.2": 41, "10.0.0.3": 60})
    same = BottleneckConfig(senders=2, rate_mbps=50, data_delay_ms=50, ack_delay_ms=50,
                            queue="droptail:packets=10", span_ms=1000)
    assert same.delays_ms() is None
    with pytest.raises(ValueError, match="2 round trips for 3 senders"):
        BottleneckConfig(senders=3, rate_mbps=50, data_delay_ms=50, ack_delay_ms=50,
                         queue="droptail:packets=10", span_ms=1000, sender_rtts_ms=(1, 2))


SS_END = """State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
ESTAB 0 0 10.0.0.2:19001 10.0.0.1:5202
\t reno wscale:7,7 rto:300 rtt:100.2/0.5 mss:1448 cwnd:40 busy:20000ms rwnd_limited:600ms(3.0%)
ESTAB 0 0 10.0.0.2:19002 10.0.0.1:5203
\t reno wscale:7,7 rto:300 rtt:100.2/0.5 mss:1448 cwnd:40 busy:20000ms sndbuf_limited:100ms(0.5%)
ESTAB 0 0 10.0.0.2:41000 10.0.0.1:5203
\t reno wscale:7,7 rto:300 rtt:100.2/0.5 mss:1448 cwnd:10 busy:20ms
"""


def test_window_limits_come_from_each_flows_own_connection(tmp_path: Path) -> None:
    (tmp_path / "ss-end-nr1234501.txt").write_text(SS_END)
    limits = window_limits(tmp_path, [19001, 19002, 19003])
    assert limits[0] == {"rwnd_pct": 3.0, "sndbuf_pct": 0.0, "busy_ms": 20000.0}
    assert limits[1] == {"rwnd_pct": 0.0, "sndbuf_pct": 0.5, "busy_ms": 20000.0}
    assert limits[2] is None  # no record of it: nothing is assumed
    m = window_limit_metrics(limits)
    assert m["window_limited_max_pct"] == 3.0 and m["window_limits_recorded"] == 2
    assert "1 of 3 flows window-limited: flow 1 by the receiver's window 3.0%" in \
        m["window_limited"]
    assert invalid_reason(m) == m["window_limited"]
    fine = window_limit_metrics(limits[1:])
    assert fine["window_limited"] is None and invalid_reason(fine) == ""
    assert window_limit_metrics([None])["window_limited_max_pct"] is None
