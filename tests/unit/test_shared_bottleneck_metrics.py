"""A shared-bottleneck run's metrics (runkinds/shared_bottleneck/metrics.py) from hand-made
artifacts: a queue log written by a FIFO served every 120 µs, each flow's iperf3 report and
alpha samples, and the meta.json facts the run kind records."""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from analysis.dctcp_alpha import flow_alpha_mean
from analysis.queue_log import parse_queue_log_text
from runkinds.shared_bottleneck.metrics import (RunShape, SharedBottleneckError,
                                                iperf_goodput_mbps, jain_index,
                                                link_utilization, longest_gap_to, port_throughput,
                                                queue_metrics,
                                                scored_window, shared_bottleneck_metrics)
from core.runspec import RunSpec, make_params
from kernel.dctcp_alpha import ALPHA_COLUMNS
from runkinds.shared_bottleneck.red import RedMarking, red_counters

BASE_MS = 1_000_000
SERVICE_US = 120  # one full packet at 100 Mbit/s, floor-rounded as the schedule does
HEADER = """# netrepro-link queue log
# queue: ecn [k=20, packets=425]
# trace: fixed 100 Mbit/s
# base timestamp: {base}
"""


def shape(k: int | None = 20) -> RunShape:
    return RunShape(flows=2, rate_mbps=100.0, rtt_ms=1, buffer_packets=425, k=k,
                    marking="emulator" if k else "none", duration_s=20.0, warmup_s=2.0)


def fifo_log(arrivals_us: list[int], ecn_in: int = 2, k: int = 20) -> str:
    """A queue log of a FIFO that sends a full packet every SERVICE_US: each packet's backlog
    is the earlier packets not yet departed, and ECT packets above K leave marked."""
    lines: list[str] = []
    waiting: deque[int] = deque()  # departures still to come, in order (FIFO)
    free = 0
    for arrival in arrivals_us:
        while waiting and waiting[0] <= arrival:
            waiting.popleft()
        backlog = len(waiting)
        departure = max(arrival, free) + SERVICE_US
        free = departure
        waiting.append(departure)
        out = 3 if ecn_in in (1, 2) and backlog > k else ecn_in
        lines.append(f"- {arrival} {backlog} 1504 {ecn_in} {out} {departure} {departure} "
                     f"{departure + 5}")
    return HEADER.format(base=BASE_MS) + "\n".join(lines) + "\n"


def test_the_scored_window_is_when_every_flow_ran_less_the_warm_up() -> None:
    starts = [BASE_MS / 1000 + 1.0, BASE_MS / 1000 + 1.5]
    assert scored_window(starts, BASE_MS, shape()) == pytest.approx((3.5, 21.0))
    late = [BASE_MS / 1000 + 1.0, BASE_MS / 1000 + 19.5]
    with pytest.raises(SharedBottleneckError, match="no scored window"):
        scored_window(late, BASE_MS, shape())


def test_queue_statistics_band_and_peak() -> None:
    times = np.arange(0, 10, 0.001)
    samples = np.array([20] * 9000 + [30] * 1000)
    arrivals = np.array([20] * 50 + [31] * 2)
    m = queue_metrics(times, samples, arrivals, shape(), 0.0, 10.0)
    assert m["queue_median"] == 20 and m["queue_p99"] == 30 and m["queue_p1"] == 20
    assert m["queue_in_k_band"] == pytest.approx(0.9)  # 30 is outside 20 ± 5
    assert m["queue_max"] == 31 and m["queue_amplitude"] == 10
    # Never at 95% of the buffer: the whole window is the gap.
    assert m["queue_gap_to_95pct_buffer_s"] == pytest.approx(10.0)


def test_the_longest_stretch_without_a_full_buffer() -> None:
    times = np.arange(0, 10, 0.001)
    values = np.zeros(times.size)
    values[[1000, 6000]] = 410
    assert longest_gap_to(times, values, 404, 0.0, 10.0) == pytest.approx(5.0)


def test_goodput_counts_payload_behind_52_bytes_of_headers() -> None:
    # 1000 full packets departing back to back: 1000 x 1500 IP bytes in 0.12 s.
    q = parse_queue_log_text(fifo_log([0] * 1000))
    ip, payload = port_throughput(q, 0.0, 0.12 + 1e-4)
    assert ip == pytest.approx(1000 * 1500 * 8 / (0.12 + 1e-4) / 1e6)
    assert payload == pytest.approx(ip * 1448 / 1500)


def test_a_link_that_never_idles_is_fully_utilized() -> None:
    # Back to back for exactly the time 1000 packets of 1504 bytes (the emulator's basis)
    # take: 100%, where IP bytes alone would read 1500/1504.
    q = parse_queue_log_text(fifo_log([0] * 1000))
    seconds = 1000 * SERVICE_US / 1e6
    rate_mbps = 1504 * 8 / SERVICE_US  # the rate that serializes one packet per SERVICE_US
    assert link_utilization(q, 0.0, seconds + 1e-6, rate_mbps) == pytest.approx(1.0, abs=1e-4)
    assert link_utilization(q, 0.0, 2 * seconds, rate_mbps) == pytest.approx(0.5, abs=1e-4)


def test_fairness_and_iperf_goodput(tmp_path: Path) -> None:
    assert jain_index([10.0, 10.0]) == pytest.approx(1.0)
    assert jain_index([10.0, 0.0]) == pytest.approx(0.5)
    (tmp_path / "iperf3-server.stdout").write_text(json.dumps(
        {"end": {"sum_received": {"bits_per_second": 48e6}}}))
    assert iperf_goodput_mbps(tmp_path) == pytest.approx(48.0)
    assert iperf_goodput_mbps(tmp_path / "nothing") is None


def _alpha_csv(path: Path, rows: list[tuple[float, float]]) -> None:
    lines = [",".join(ALPHA_COLUMNS)] + [f"{t},{a},,,,,," for t, a in rows]
    path.write_text("\n".join(lines) + "\n")


def test_alpha_is_averaged_over_the_window_only(tmp_path: Path) -> None:
    _alpha_csv(tmp_path / "dctcp-alpha.csv", [(1.0, 1.0), (5.0, 0.2), (6.0, 0.4), (30.0, 0.9)])
    assert flow_alpha_mean(tmp_path, 4.0, 20.0) == pytest.approx(0.3)
    assert flow_alpha_mean(tmp_path / "none", 4.0, 20.0) is None


def test_red_settings_and_counters() -> None:
    args = RedMarking(k=20, packets=425).qdisc_args(100)
    values = dict(zip(args[1::2], args[2::2]))
    assert values["min"] == "30000" and values["max"] == "35000"  # Mininet-HiFi's at K = 20
    assert values["limit"] == str(425 * 1514) and values["burst"] == "21"
    assert args[-1] == "ecn"
    shown = json.dumps([{"kind": "htb", "handle": "1:", "qlen": 0},
                        {"kind": "red", "handle": "10:", "qlen": 23, "backlog": 34000,
                         "drops": 2, "xstats": {"marked": 512, "early": 0}}])
    assert red_counters(shown) == {"qlen": 23, "backlog_bytes": 34000, "drops": 2,
                                   "marked": 512}
    assert red_counters(json.dumps([{"kind": "htb"}])) is None


def test_a_whole_run_from_its_artifacts(tmp_path: Path) -> None:
    """Two flows keep 25 packets queued (one arrival per service time after a burst of 25)
    from 0 to 20 s: ECT packets finding more than K = 20 waiting leave marked."""
    burst = [0] * 26
    steady = list(range(SERVICE_US, 20_000_000, SERVICE_US))
    (tmp_path / "data-queue.log").write_text(fifo_log(burst + steady))
    base = BASE_MS / 1000
    flows = []
    for i, goodput in ((1, 48e6), (2, 47e6)):
        folder = tmp_path / f"flow-0{i}"
        folder.mkdir()
        (folder / "iperf3-server.stdout").write_text(json.dumps(
            {"end": {"sum_received": {"bits_per_second": goodput}}}))
        _alpha_csv(folder / "dctcp-alpha.csv", [(base + t, 0.25) for t in range(3, 20)])
        flows.append({"folder": folder.name, "started_s": base + 0.5, "cc_used": "bpf_dctcp"})
    meta = {"flows_started_s": [base + 0.5, base + 0.6],
            "verification": {"cc_requested": "dctcp", "cc_used": "bpf_dctcp",
                             "cc_provider": "ebpf", "flows": flows},
            "link": {"a2b": {"lateness_us": {"p50": 5, "p99": 40, "max": 90}},
                     "b2a": {"lateness_us": {"p99": 30}}}}
    spec = RunSpec(experiment="dctcp", scheme="dctcp", data_trace="rate:100",
                   ack_trace="rate:100", delay_ms=0, queue="ecn:k=20,packets=425",
                   duration_s=15.0,
                   options=make_params(topology="shared-bottleneck", flows=2, rtt_ms=1,
                                       marking="emulator", warmup_s=2.0))
    m = shared_bottleneck_metrics(tmp_path, spec, meta)
    assert (m["scored_from_s"], m["scored_to_s"]) == pytest.approx((2.6, 15.5))
    # Every packet after the burst finds 25 waiting (the 26th in service counts as the head).
    assert m["queue_median"] == 26 and m["queue_p5"] == 26 and m["queue_max"] == 25
    assert m["queue_in_k_band"] == 0.0  # 26 > K + 5
    assert m["marks"] > 0 and m["marked_fraction"] == pytest.approx(1.0) and m["drops"] == 0
    # The fake FIFO serves a packet every 120 us, faster than 100 Mbit/s's 120.32: the link
    # counts 1504 bytes a packet, so a link never idle reads 120.32 / 120, not 1500 / 1504 of it.
    assert m["utilization"] == pytest.approx(120.32 / 120, rel=1e-3)
    assert m["gaps_within_10pct"] == 1.0 and m["gap_p50_us"] == 120
    assert m["flow_goodput_mbps"] == [48.0, 47.0] and m["jain_fairness"] > 0.99
    assert m["alpha_mean"] == pytest.approx(0.25) and m["alpha_flows_sampled"] == 2
    assert m["lateness_ok"] is True and m["cc_used_flows"] == ["bpf_dctcp"]
