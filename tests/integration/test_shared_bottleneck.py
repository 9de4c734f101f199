"""The shared bottleneck on real networks: N senders through a Linux bridge into one
netrepro-link port (runkinds/shared_bottleneck/network.py), and the dctcp experiment on it.

1. The network: three senders send bursts of full-size UDP datagrams at once, far faster
   than the port's 100 Mbit/s, cycling through ECT(0), Not-ECT, ECT(1) and CE (each
   sender starting at a different codepoint), each datagram carrying its sender, its
   number and the codepoint it was sent with. The port's queue is ecn:k=5,packets=40 with
   its per-packet log; tcpdump captures what reaches the receiver. The log's sent lines and
   the capture are in the port's FIFO order, so line i is captured packet i: exactly the
   ECT packets that found more than K waiting arrive CE, every header checksum is valid,
   drops happen only at N, every sender got through the bridge, nothing else crossed the
   port. Teardown leaves no
   interface of the run in the root namespace.
2. A short DCTCP run (N = 2, 6 s) leaves its artifacts: the queue log, each flow's
   folder with iperf3's reports and alpha, both flows verified with ECN, marks and no drop.
3. `--queue red`: where the kernel has no RED the run fails naming the qdisc and the fix;
   where it has it, meta.json says RED marked.
4. `./repro run dctcp --quick` writes its figures, summary.csv and claims, and
   `./repro verify dctcp` prints the claims.
"""
from __future__ import annotations

import csv
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dpkt
import numpy as np

from analysis.queue_log import CE, ECT0, ECT1, NOT_ECT, parse_queue_log
from app.executor import execute
from core.active_runs import ActiveRun
from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.traces import TraceSet
from experiments.dctcp.queue import DctcpQueue
from kernel.packet_capture import PacketCapture
from kernel.segments import gso_max_segs
from runkinds.shared_bottleneck.network import (RECEIVER_IP, BottleneckConfig,
                                                SharedBottleneck, sender_ip)
from topologies.guarded_network import new_prefix

REPRO = str(Path(__file__).resolve().parents[2] / "repro")
K, N = 5, 40
SENDERS = 3
PORT = 5998
BURSTS, BURST = 10, 40  # per sender; three senders' bursts at once overflow 40 packets
GAP_S = 0.03
START_AFTER_S = 1.0  # time for the three interpreters to start
SENDER_TIMEOUT_S = 30.0
CODEPOINTS = (ECT0, NOT_ECT, ECT1, CE)

SENDER = """
import socket, struct, sys, time
dst, port, me, bursts, burst, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
codes = [int(c) for c in sys.argv[7].split(",")]
start = float(sys.argv[8])  # the same wall-clock moment for every sender
socks = {}
for c in set(codes):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, c)
    socks[c] = s
pad = bytes(1472 - 6)
seq = 0
for b in range(bursts):
    time.sleep(max(0.0, start + b * gap - time.time()))
    for i in range(burst):
        c = codes[(seq + me) % len(codes)]
        socks[c].sendto(struct.pack("!BIB", me, seq, c) + pad, (dst, port))
        seq += 1
print(seq)
"""


def _checksum_ok(ip_header: bytes) -> bool:
    total = sum(struct.unpack(f"!{len(ip_header) // 2}H", ip_header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def _captured(pcap: Path) -> list[dict[str, Any]]:
    """Every IPv4 packet the receiver got from the port: ours with their sender, number and
    the codepoint sent; anything else (`sender` None) with its ECN field as it arrived."""
    out = []
    with open(pcap, "rb") as f:
        for _, frame in dpkt.pcap.Reader(f):
            ip = dpkt.ethernet.Ethernet(frame).data
            if not isinstance(ip, dpkt.ip.IP):
                continue
            packet = {"sender": None, "seq": None, "sent_as": None, "ecn": ip.tos & 3,
                      "len": ip.len, "proto": ip.p, "src": ip.src,
                      "checksum_ok": _checksum_ok(bytes(frame[14:14 + ip.hl * 4]))}
            if isinstance(ip.data, dpkt.udp.UDP) and ip.data.dport == PORT:
                sender, seq, sent_as = struct.unpack("!BIB", bytes(ip.data.data)[:6])
                packet.update(sender=sender, seq=seq, sent_as=sent_as)
            out.append(packet)
    return out


def _root_links(prefix: str) -> list[str]:
    shown = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in shown.splitlines() if prefix in line]


def test_the_port_marks_exactly_the_ect_packets_above_k(tmp_path: Path,
                                                        paths: ProjectPaths) -> None:
    active = ActiveRun(tmp_path / "active", new_prefix())
    config = BottleneckConfig(senders=SENDERS, rate_mbps=100, data_delay_ms=0, ack_delay_ms=1,
                              queue=f"ecn:k={K},packets={N}", span_ms=60_000,
                              one_segment_packets=True)
    script = tmp_path / "ecn_sender.py"
    script.write_text(SENDER)
    pids: list[int] = []
    with SharedBottleneck(config, emulator=paths.native_binary("link", "netrepro-link"),
                          log_dir=tmp_path, active=active) as net:
        assert net.receiver is not None and net.switch is not None
        pids = [h.pid for h in [*net.senders, net.receiver, net.switch]]
        assert set(net.port_states().values()) == {"forwarding"}
        assert [s.IP() for s in net.senders] == [sender_ip(i) for i in (1, 2, 3)]
        # Asked for, TCP at the senders builds one-segment packets (no TSO-sized bursts).
        assert [gso_max_segs(s.cmd("ip", "-d", "link", "show", "dev", s.defaultIntf().name))
                for s in net.senders] == [1, 1, 1]
        assert net.describe()["sender_segments_per_packet"] == 1
        net.start()
        capture = PacketCapture(net.receiver, net.receiver.defaultIntf().name,
                                tmp_path / "receiver.pcap",
                                bpf_filter=f"ip and not src host {RECEIVER_IP}")
        capture.start()
        # Each burst starts at one moment for all three senders: left to their own start
        # times, the bursts could interleave so that the queue never reaches N.
        start = time.time() + START_AFTER_S
        procs = [s.popen([sys.executable, str(script), RECEIVER_IP, str(PORT), str(i),
                          str(BURSTS), str(BURST), str(GAP_S),
                          ",".join(str(c) for c in CODEPOINTS), f"{start:.6f}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for i, s in enumerate(net.senders)]
        sent = 0
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=SENDER_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise AssertionError(f"a UDP sender did not finish in {SENDER_TIMEOUT_S:g} s")
            assert proc.returncode == 0, err.decode(errors="replace")
            sent += int(out.decode().strip())
        time.sleep(0.2)  # the last bursts drain (under 10 ms) and reach the receiver
        facts = capture.stop()
        assert net.link is not None
        assert net.link.stop_emulator() == 0, net.link.stderr_tail()
    active.close()

    # Teardown: nothing of the run is left in the root namespace, and its nodes are gone.
    assert _root_links(active.prefix) == []
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)

    assert sent == SENDERS * BURSTS * BURST
    assert facts["dropped_by_kernel"] == 0, facts
    q = parse_queue_log(tmp_path / "data-queue.log")
    stats = json.loads((tmp_path / "link-stats.json").read_text())["a2b"]
    packets = _captured(tmp_path / "receiver.pcap")
    ours = [p for p in packets if p["sender"] is not None]
    others = [p for p in packets if p["sender"] is None]
    # Nothing but the senders' datagrams crosses the port (the bridge's own IGMP queries
    # did, before multicast snooping was turned off).
    assert others == [], others
    assert len(packets) == q.arrival_us.size == stats["sent"]
    assert len(ours) + int(np.count_nonzero(q.drop_size == 1504)) == sent
    assert {p["sender"] for p in ours} == set(range(SENDERS))
    # Each sender's datagrams keep their order through the bridge and the port.
    for me in range(SENDERS):
        seqs = [p["seq"] for p in ours if p["sender"] == me]
        assert seqs == sorted(seqs)

    marked = unmarked_ect = not_ect_above_k = 0
    for i, p in enumerate(packets):
        backlog, ecn_in, ecn_out = int(q.backlog[i]), int(q.ecn_in[i]), int(q.ecn_out[i])
        assert p["checksum_ok"], p
        assert p["sent_as"] is None or (p["len"] == 1500 and ecn_in == p["sent_as"]), (i, p)
        should_mark = ecn_in in (ECT0, ECT1) and backlog > K
        expected = CE if should_mark or ecn_in == CE else ecn_in
        assert p["ecn"] == expected == ecn_out, (p, backlog)
        marked += should_mark
        unmarked_ect += ecn_in in (ECT0, ECT1) and not should_mark
        not_ect_above_k += ecn_in == NOT_ECT and backlog > K
    assert marked > 0 and unmarked_ect > 0 and not_ect_above_k > 0, \
        (marked, unmarked_ect, not_ect_above_k)
    assert q.drop_arrival_us.size > 0 and {int(b) for b in q.drop_backlog} == {N}
    assert int(q.backlog.max()) <= N - 1
    assert stats["ecn"]["marks"] == marked and stats["drops"] == q.drop_arrival_us.size


def _spec(queue: str = "ecn", flows: int = 2, seconds: float = 6.0) -> Any:
    return DctcpQueue(options={"queue": queue}).run_spec("dctcp", flows, 20, 1, seconds, 1)


def test_a_short_dctcp_run_leaves_its_artifacts(paths: ProjectPaths, traces: TraceSet,
                                                store: ExperimentStore) -> None:
    outcome = execute(_spec(), store, paths, traces)
    assert outcome.ok, outcome.reason
    run = outcome.path
    meta = json.loads((run / "meta.json").read_text())
    metrics = json.loads((run / "metrics.json").read_text())
    for name in ("data-queue.log", "ack-queue.log", "data.log", "link-stats.json"):
        assert (run / name).is_file(), name
    for flow in ("flow-01", "flow-02"):
        for name in ("iperf3-client.stdout", "iperf3-server.stdout", "dctcp-alpha.csv",
                     "ss-ecn-sender.txt", "ss-ecn-receiver.txt"):
            assert (run / flow / name).is_file(), f"{flow}/{name}"
    assert (run / "flow-01" / "tcp-probe.csv").is_file()
    assert meta["marking"]["marked_by"].startswith("netrepro-link")
    assert meta["topology"]["senders"] == 2
    flows = meta["verification"]["flows"]
    assert [f["server_port"] for f in flows] == [5201, 5202]
    for f in flows:
        assert f["cc_used"] in ("dctcp", "bpf_dctcp")
        assert f["dctcp"]["sender_socket"]["ecn"] and f["dctcp"]["receiver_socket"]["ecnseen"]
    assert metrics["marks"] > 0 and metrics["drops"] == 0
    assert metrics["queue_median"] < 60  # a loss-based flow would sit near 425
    assert metrics["goodput_mbps"] > 50 and len(metrics["flow_goodput_mbps"]) == 2
    assert metrics["alpha_flows_sampled"] == 2 and 0 < metrics["alpha_mean"] <= 1


def test_red_marks_where_the_kernel_has_it_and_fails_naming_it_elsewhere(
        paths: ProjectPaths, traces: TraceSet, store: ExperimentStore) -> None:
    outcome = execute(_spec(queue="red"), store, paths, traces)
    if outcome.ok:
        meta = json.loads((outcome.path / "meta.json").read_text())
        assert meta["marking"]["marked_by"] == "tc red (kernel)"
        assert (outcome.path / "red-queue.csv").is_file()
    else:
        assert "no RED qdisc" in outcome.reason and "CONFIG_NET_SCH_RED" in outcome.reason \
            and "--queue ecn" in outcome.reason, outcome.reason
        failed = json.loads((outcome.path / "FAILED.json").read_text())
        assert "RED" in failed["reason"]


def test_the_quick_experiment_end_to_end(tmp_path: Path) -> None:
    env = dict(os.environ, NETREPRO_RESULTS=str(tmp_path / "results"))
    run = subprocess.run([REPRO, "run", "dctcp", "--quick"], capture_output=True, text=True,
                         env=env, timeout=600)
    out = tmp_path / "results" / "dctcp"
    assert "2 ok, 0 failed" in run.stdout, run.stdout + run.stderr
    for name in ("fig1-queue", "fig13-queue-cdf", "alpha-over-time", "throughput-per-flow"):
        for suffix in (".png", ".svg"):
            assert (out / f"{name}{suffix}").is_file(), name + suffix
    with open(out / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["scheme"] for r in rows) == ["dctcp", "reno"]
    assert all(r["study"] == "compare" and r["flows"] == "2" for r in rows)
    claims = (out / "claims.md").read_text()
    assert "dctcp-queue-median" in claims and "tcp-10x-dctcp-reno" in claims
    verify = subprocess.run([REPRO, "verify", "dctcp"], capture_output=True, text=True, env=env,
                            timeout=300)
    assert verify.returncode in (0, 1), verify.stdout + verify.stderr  # 1: a claim fails
    assert "dctcp-queue-median" in verify.stdout and "2 match" in verify.stdout, verify.stdout
    medians = {r["scheme"]: float(r["queue_median"]) for r in rows}
    assert medians["reno"] > 5 * medians["dctcp"], medians  # the figure's effect is there
    assert np.isfinite(list(medians.values())).all()
