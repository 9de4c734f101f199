"""One captured transfer through a SwitchedPath, and what the captures say was lost."""
from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dpkt

from controllers.drop_plan import FlowTracker, DropPlan
from schemes.transfer import ENDPOINT, PYTHON
from runkinds.switched_path.network import SwitchedPath
from runkinds.trace_path.network import RECEIVER_IP

# The sender's own port: fixed, as each transfer runs in its own network.
CLIENT_PORT = 20000


@dataclass
class Capture:
    process: subprocess.Popen[bytes]
    path: Path


def start_capture(host: Any, intf: str, path: Path, port: int) -> Capture:
    err = path.with_suffix(".stderr")
    proc = host.popen(["tcpdump", "-i", intf, "-n", "-U", "--immediate-mode", "-s", "128",
                       "-w", str(path), "tcp", "port", str(port)],
                      stdout=subprocess.DEVNULL, stderr=open(err, "wb"))
    deadline = time.monotonic() + 10
    while "listening on" not in (err.read_text() if err.exists() else ""):
        assert proc.poll() is None, err.read_text()
        assert time.monotonic() < deadline, "tcpdump never started"
        time.sleep(0.05)
    return Capture(proc, path)


def stop_capture(cap: Capture) -> None:
    time.sleep(0.3)
    cap.process.send_signal(signal.SIGINT)
    cap.process.wait(timeout=10)


def transfer(path: SwitchedPath, out: Path, nbytes: int, port: int, cc: str = "cubic",
             timeout_s: float = 60.0) -> dict[str, Any]:
    """Receiver and sender (schemes/transfer_endpoint.py, the PRR experiment's own) in their
    hosts; returns the sender's JSON result, checked: the congestion control read back from
    the socket is `cc` and the receiver's reply after the last byte came back. Both ends are
    killed if anything fails on the way (a dead controller, a timeout)."""
    py = [PYTHON, str(ENDPOINT)]
    listening = out / "receiver.stdout"
    with open(listening, "wb") as stdout:
        recv = path.receiver.popen(py + ["receiver", "--port", str(port), "--bytes",
                                         str(nbytes), "--out", str(out / "recv.json")],
                                   stdout=stdout)
    procs = [recv]
    try:
        deadline = time.monotonic() + 10
        while "listening" not in listening.read_text(errors="replace"):
            assert recv.poll() is None, "receiver exited"
            assert time.monotonic() < deadline, "receiver never listened"
            time.sleep(0.05)
        send = path.sender.popen(py + ["sender", "--dst", RECEIVER_IP, "--port", str(port),
                                       "--cport", str(CLIENT_PORT), "--bytes", str(nbytes),
                                       "--cc", cc, "--out", str(out / "send.json")])
        procs.append(send)
        deadline = time.monotonic() + timeout_s
        while send.poll() is None:
            path.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"transfer not done after {timeout_s} s")
            time.sleep(0.1)
        recv.wait(timeout=10)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert send.returncode == 0, (out / "send.json").read_text()
    result: dict[str, Any] = json.loads((out / "send.json").read_text())
    assert result["cc_read"] == cc and result["cc_read_at_end"] == cc, result
    assert result["reply"] == "k", result
    return result


def data_segments(pcap: Path, src: str) -> list[tuple[int, int, int]]:
    """(seq, payload length, tcp flags) of every segment from `src`, in capture order."""
    found = []
    with open(pcap, "rb") as f:
        for _ts, buf in dpkt.pcap.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            if ip.src != bytes(map(int, src.split("."))):
                continue
            tcp = ip.data
            payload = ip.len - ip.hl * 4 - tcp.off * 4
            found.append((tcp.seq, payload, tcp.flags))
    return found


def lost_originals(sender_pcap: Path, receiver_pcap: Path, src: str) -> tuple[list[int], int]:
    """Original segment numbers (as the plan counts them, from the sender's capture) that
    never reached the receiver's capture in any transmission count, and how many retransmitted
    transmissions were lost (should be 0)."""
    sent = data_segments(sender_pcap, src)
    got = Counter((seq, n) for seq, n, _ in data_segments(receiver_pcap, src) if n > 0)
    tracker = FlowTracker(DropPlan("none", (10**9,)))
    numbers: dict[tuple[int, int], int] = {}
    sent_count: Counter[tuple[int, int]] = Counter()
    for seq, n, flags in sent:
        d = tracker.on_segment(seq, n, syn=bool(flags & dpkt.tcp.TH_SYN),
                               fin=bool(flags & dpkt.tcp.TH_FIN))
        if n > 0:
            sent_count[(seq, n)] += 1
            if d.original and d.segment is not None:
                numbers[(seq, n)] = d.segment
    lost: list[int] = []
    lost_retrans = 0
    for key, count in sent_count.items():
        missing = count - got.get(key, 0)
        if missing <= 0:
            continue
        if key in numbers:
            lost.append(numbers[key])
            missing -= 1
        lost_retrans += missing
    return sorted(lost), lost_retrans


def reordered_originals(sender_pcap: Path, receiver_pcap: Path, src: str) -> list[int]:
    """Original segments that reached the receiver after a higher-numbered original (the
    controller's packet-outs overtaken by the direct path would show here)."""
    sent = data_segments(sender_pcap, src)
    tracker = FlowTracker(DropPlan("none", (10**9,)))
    numbers: dict[tuple[int, int], int] = {}
    times_sent: Counter[tuple[int, int]] = Counter()
    for seq, n, flags in sent:
        d = tracker.on_segment(seq, n, syn=bool(flags & dpkt.tcp.TH_SYN),
                               fin=bool(flags & dpkt.tcp.TH_FIN))
        times_sent[(seq, n)] += 1
        if d.original and d.segment is not None:
            numbers.setdefault((seq, n), d.segment)
    # Only segments sent once: a retransmission arrives late by design.
    numbers = {k: v for k, v in numbers.items() if times_sent[k] == 1}
    seen: set[tuple[int, int]] = set()
    highest = 0
    late: list[int] = []
    for seq, n, _flags in data_segments(receiver_pcap, src):
        key = (seq, n)
        if n == 0 or key in seen or key not in numbers:
            continue
        seen.add(key)
        number = numbers[key]
        if number < highest:
            late.append(number)
        highest = max(highest, number)
    return late


def run_one(path: SwitchedPath, out: Path, nbytes: int = 65536, port: int = 5001,
            flow_port: int | None = None) -> dict[str, Any]:
    """Pings before, one captured transfer to `flow_port` (default: the plan's port), pings
    after; what the captures and the controller's log say."""
    flow_port = flow_port or port
    src = "10.0.0.1"
    before = path.ping_rtts(10)
    cs = start_capture(path.sender, str(path.sender.defaultIntf()), out / "sender.pcap",
                       flow_port)
    cr = start_capture(path.receiver, str(path.receiver.defaultIntf()),
                       out / "receiver.pcap", flow_port)
    result = transfer(path, out, nbytes, flow_port)
    stop_capture(cs)
    stop_capture(cr)
    after = path.ping_rtts(10)
    lost, lost_retrans = lost_originals(out / "sender.pcap", out / "receiver.pcap", src)
    received = json.loads((out / "recv.json").read_text())["bytes"]
    return {"transfer": result, "received": received, "lost": lost,
            "lost_retransmissions": lost_retrans,
            "reordered": reordered_originals(out / "sender.pcap", out / "receiver.pcap", src),
            "log_dropped": path.drop_log().dropped_segments,
            "late_segments": len(path.drop_log().late_segments),
            "problems": path.plan_problems(), "ping_before": before, "ping_after": after,
            "describe": path.describe()}
