"""ECN threshold marking on a real path: exactly the ECT packets that found more than K
packets waiting arrive CE, and nothing else changes.

sender -- TraceLink (rate:20 both ways, data queue ecn:k=5,packets=40, queue log on) --
receiver. A small UDP sender in the sender's namespace sends bursts of full-size datagrams
(IP length 1500) far faster than 20 Mbit/s, cycling through ECT(0), Not-ECT, ECT(1) and CE
(IP_TOS per socket), each datagram carrying its number and the codepoint it was sent with.
tcpdump on the receiver captures them. The queue log's sent lines and the capture are both
in the link's FIFO order, so line i is captured packet i; for each the test checks, from the
receiver's own bytes, that the ECN field is CE exactly when the sender's codepoint was ECT
and the backlog the packet found was above K (or it was sent CE), that the IP header
checksum is valid, and that the log's ECN_IN is what the sender set. Drops must all be at
overflow (the backlog was N), and the stats must count the same marks and arrivals.

A second test runs the executor twice: a run gets data-queue.log and ack-queue.log only when
its RunSpec asks for them (option `queue_log`), and they account for every packet.
"""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dpkt
import numpy as np
from mininet.net import Mininet

from analysis.queue_log import (CE, ECT0, ECT1, NOT_ECT, departure_gaps, ideal_gap_us,
                                parse_queue_log)
from app.executor import execute
from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from kernel.packet_capture import PacketCapture
from topologies import queue_log as queue_log_files
from topologies.link_side import link_side
from topologies.trace_link import TraceLink
from topologies.guarded_network import new_prefix

K, N = 5, 40
PORT = 5999
BURSTS, BURST = 12, 80
# 20 Mbit/s (600 us a frame): a burst of 80 overflows the 40-packet queue unless the sender
# takes 300 us a datagram on average (at 100 Mbit/s, 60 us: a loaded CI machine's sender once
# spread every burst that thin and nothing overflowed); the 40 accepted drain in 24 ms.
RATE_MBPS = 20
RATE = f"rate:{RATE_MBPS}"
OPPORTUNITY_US = ideal_gap_us(RATE_MBPS)  # 601.6 us
GAP_S = 0.05
SENDER_TIMEOUT_S = 30.0
CODEPOINTS = (ECT0, NOT_ECT, ECT1, CE)  # by datagram number modulo 4

SENDER = """
import socket, struct, sys, time
dst, port, bursts, burst, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), float(sys.argv[5])
codes = [int(c) for c in sys.argv[6].split(",")]
socks = {}
for c in set(codes):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, c)
    socks[c] = s
pad = bytes(1472 - 5)
seq = 0
for b in range(bursts):
    for i in range(burst):
        c = codes[seq % len(codes)]
        socks[c].sendto(struct.pack("!IB", seq, c) + pad, (dst, port))
        seq += 1
    time.sleep(gap)
print(seq)
"""


def _checksum_ok(ip_header: bytes) -> bool:
    total = sum(struct.unpack(f"!{len(ip_header) // 2}H", ip_header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def _captured(pcap: Path) -> list[dict[str, Any]]:
    """Every UDP datagram to PORT: its ECN field, checksum verdict, number and codepoint sent."""
    out = []
    with open(pcap, "rb") as f:
        for _, frame in dpkt.pcap.Reader(f):
            eth = dpkt.ethernet.Ethernet(frame)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.udp.UDP):
                continue
            if ip.data.dport != PORT:
                continue
            header = bytes(frame[14:14 + ip.hl * 4])
            seq, sent_as = struct.unpack("!IB", bytes(ip.data.data)[:5])
            out.append({"seq": seq, "sent_as": sent_as, "ecn": ip.tos & 3, "len": ip.len,
                        "checksum_ok": _checksum_ok(header)})
    return out


def test_exactly_the_ect_packets_above_k_arrive_ce(tmp_path: Path, traces: TraceSet) -> None:
    prefix = new_prefix()
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False)
    capture: PacketCapture | None = None
    try:
        sender = net.addHost(f"{prefix}s", ip="10.78.0.1/24")
        receiver = net.addHost(f"{prefix}r", ip="10.78.0.2/24")
        link = net.addLink(sender, receiver, cls=TraceLink, data=link_side(RATE, traces),
                           ack=link_side(RATE, traces), delay_ms=1,
                           queue=f"ecn:k={K},packets={N}", ack_queue="infinite",
                           queue_log=True, log_dir=tmp_path)
        net.build()
        for host in (sender, receiver):
            host.cmd("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        net.staticArp()
        link.start()
        capture = PacketCapture(receiver, receiver.intfs[0].name, tmp_path / "receiver.pcap",
                                bpf_filter=f"udp dst port {PORT}")
        capture.start()
        script = tmp_path / "ecn_sender.py"
        script.write_text(SENDER)
        proc = sender.popen([sys.executable, str(script), "10.78.0.2", str(PORT), str(BURSTS),
                             str(BURST), str(GAP_S), ",".join(str(c) for c in CODEPOINTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(timeout=SENDER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError(f"the UDP sender did not finish within {SENDER_TIMEOUT_S:g} s")
        assert proc.returncode == 0, err.decode(errors="replace")
        sent = int(out.decode().strip())
        time.sleep(0.2)  # the last burst drains (under 25 ms) and crosses the 1 ms delay
        facts = capture.stop()
        status = link.stop_emulator()
        assert status == 0, link.stderr_tail()
    finally:
        if capture is not None:
            capture.stop()
        net.stop()

    assert sent == BURSTS * BURST
    assert facts["dropped_by_kernel"] == 0, facts
    q = parse_queue_log(tmp_path / "data-queue.log")
    stats = json.loads((tmp_path / "link-stats.json").read_text())["a2b"]
    packets = _captured(tmp_path / "receiver.pcap")

    # Nothing lost unseen: every datagram was sent on (one line each, captured) or dropped.
    assert q.arrival_us.size + q.drop_arrival_us.size == sent
    assert len(packets) == q.arrival_us.size, (len(packets), q.arrival_us.size)
    assert stats["arrivals"] == sent and stats["drops"] == q.drop_arrival_us.size

    # The log's lines are in send order: the same order as the capture (and the sender's,
    # drops taken out, as the link is FIFO).
    seqs = [p["seq"] for p in packets]
    assert seqs == sorted(seqs)
    order = np.argsort(q.sent_us, kind="stable")
    assert np.array_equal(order, np.arange(order.size)), "sent lines out of arrival order"

    marked = unmarked_ect = not_ect_above_k = 0
    for i, p in enumerate(packets):
        backlog, ecn_in, ecn_out = int(q.backlog[i]), int(q.ecn_in[i]), int(q.ecn_out[i])
        assert p["len"] == 1500
        assert p["checksum_ok"], f"datagram {p['seq']}: bad IPv4 header checksum"
        assert ecn_in == p["sent_as"], f"datagram {p['seq']}: log says ECN_IN {ecn_in}"
        should_mark = ecn_in in (ECT0, ECT1) and backlog > K
        expected = CE if should_mark or ecn_in == CE else ecn_in
        assert p["ecn"] == expected, (f"datagram {p['seq']} sent as {ecn_in} found {backlog} "
                                      f"waiting (K={K}) and arrived as {p['ecn']}")
        assert ecn_out == p["ecn"]
        marked += should_mark
        unmarked_ect += ecn_in in (ECT0, ECT1) and not should_mark
        not_ect_above_k += ecn_in == NOT_ECT and backlog > K
    # The test means something only if every case happened.
    assert marked > 0 and unmarked_ect > 0 and not_ect_above_k > 0, \
        (marked, unmarked_ect, not_ect_above_k)

    # The backlog each packet found agrees with the log's own times: the earlier accepted
    # packets that had not yet departed (full-size packets are never in transit).
    accepted_departures = q.departure_us
    for i in range(q.arrival_us.size):
        waiting = int(np.count_nonzero(accepted_departures[:i] > q.arrival_us[i]))
        assert waiting == q.backlog[i], i

    # Drops only at overflow, and never below it.
    assert q.drop_arrival_us.size > 0
    assert {int(b) for b in q.drop_backlog} == {N}
    assert int(q.backlog.max()) <= N - 1
    assert not q.drop_at_dequeue.any()

    ecn = stats["ecn"]
    assert ecn["marks"] == marked
    for key, code in (("arrivals_ect0", ECT0), ("arrivals_not_ect", NOT_ECT),
                      ("arrivals_ect1", ECT1), ("arrivals_ce", CE)):
        assert ecn[key] == sum(1 for s in range(sent) if CODEPOINTS[s % 4] == code), key
    assert ecn["drops_ecn_capable"] + ecn["drops_not_ect"] == stats["drops"]

    # While backlogged, full-size packets are scheduled one opportunity apart:
    # floor(k * 12032 / 20) µs, so 601 or 602 µs. (The real gaps are printed, not judged:
    # they depend on the machine's load.)
    gaps = departure_gaps(q)
    assert gaps.scheduled_us.size > 0
    whole = int(OPPORTUNITY_US)
    assert set(gaps.scheduled_us.tolist()) <= {whole, whole + 1}, set(gaps.scheduled_us.tolist())
    print(f"ecn: {sent} sent, {marked} marked, {unmarked_ect} ECT not marked, "
          f"{not_ect_above_k} Not-ECT above K, {q.drop_arrival_us.size} dropped; "
          f"{gaps.fraction_within(OPPORTUNITY_US):.3f} of {gaps.actual_us.size} backlogged "
          f"gaps within 10% of {OPPORTUNITY_US:g} us")


def _run(paths: ProjectPaths, traces: TraceSet, store: ExperimentStore,
         options: dict[str, Any]) -> Path:
    spec = RunSpec(experiment="itest", scheme="fixed-window", data_trace="rate:100",
                   ack_trace="rate:100", delay_ms=1, duration_s=3,
                   queue=f"ecn:k={K},packets=100", params=make_params(window=100))
    spec = RunSpec.from_dict({**spec.to_dict(), "options": options})
    outcome = execute(spec, store, paths, traces)
    assert outcome.ok, outcome.reason
    return outcome.path


def test_a_run_gets_queue_logs_only_when_it_asks(paths: ProjectPaths, traces: TraceSet,
                                                 store: ExperimentStore) -> None:
    plain = _run(paths, traces, store, {})
    assert not (plain / queue_log_files.DATA_FILE).exists()
    assert not (plain / queue_log_files.ACK_FILE).exists()
    assert (plain / "data.log").exists()

    asked = _run(paths, traces, store, {queue_log_files.OPTION: True})
    meta = json.loads((asked / "meta.json").read_text())
    for name, direction in ((queue_log_files.DATA_FILE, "a2b"),
                            (queue_log_files.ACK_FILE, "b2a")):
        q = parse_queue_log(asked / name)
        link = meta["link"][direction]
        # One line per packet: sent on, or dropped (none still queued once the span ended,
        # beyond what the stats say was left in the queue and the delay line).
        assert q.drop_arrival_us.size == link["drops"]
        left = link["queue_packets_at_end"] + link["delay_line_packets_at_end"]
        assert q.arrival_us.size + q.drop_arrival_us.size + left == link["arrivals"]
        assert q.arrival_us.size == link["sent"]
        assert q.rate_mbps == 100.0
        # The grump endpoints send Not-ECT datagrams: nothing to mark.
        assert not q.marked.any() and link["ecn"]["marks"] == 0
    data = parse_queue_log(asked / queue_log_files.DATA_FILE)
    assert data.header["queue"] == f"ecn [k={K}, packets=100]"
    assert int(data.backlog.max()) > K  # a window of 100 over a ~17-packet path queues
