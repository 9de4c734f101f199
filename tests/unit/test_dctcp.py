"""DCTCP's run support without a network: ss parsing, the verdicts, alpha's reader and rule."""
from __future__ import annotations

import csv
import re
import socket
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analysis.dctcp_alpha import (Reduction, alpha_bounds_at, cwr_reductions, dctcp_metrics,
                                  ewma_step, read_alpha, windows_to_zero)
from analysis.tcp_probe import ProbeTrace
from core.errors import RunInvalid
from kernel.bpf_map import MapInfo
from kernel.dctcp import DctcpRun, find_socket, parse_ss
from kernel.dctcp_alpha import (ALPHA_COLUMNS, ALPHA_FILE, EXPORT, EXPORT_FIELDS, KEY, AlphaReading,
                                BpfMapAlphaSource, DctcpAlphaSampler, SocketKey, SsAlphaSource,
                                parse_ss_dctcp)
from core.tcp_probe_format import CA_CWR, CA_OPEN

SENDER_SS = """\
State Recv-Q Send-Q  Local Address:Port  Peer Address:PortProcess
ESTAB 0      1735928      10.0.0.1:22458     10.0.0.2:5201 timer:(on,412ms,0)
\t ts sack ecn bpf_dctcp wscale:9,9 rto:412 mss:1448 cwnd:170 bytes_acked:1897141 send 9bps
ESTAB 0      0            10.0.0.1:34026     10.0.0.2:5201
\t ts sack ecn ecnseen bpf_dctcp wscale:9,9 rto:216 mss:1448 cwnd:10 bytes_acked:190
"""
RECEIVER_SS = """\
State Recv-Q Send-Q      Local Address:Port       Peer Address:Port Process
ESTAB 0      0      [::ffff:10.0.0.2]:5201 [::ffff:10.0.0.1]:22458
\t ts sack ecn ecnseen bpf_dctcp wscale:9,9 rto:200 mss:1448 bytes_received:1897000
ESTAB 0      0      [::ffff:10.0.0.2]:5201 [::ffff:10.0.0.1]:34026
\t ts sack reno wscale:9,9 rto:208 mss:1448 bytes_received:189
"""


def test_ss_sockets_are_read_with_their_flags_and_control() -> None:
    sockets = parse_ss(SENDER_SS)
    assert [(s.local_port, s.peer_port, s.cc) for s in sockets] == \
        [(22458, 5201, "bpf_dctcp"), (34026, 5201, "bpf_dctcp")]
    assert sockets[0].flags == {"ts", "sack", "ecn"}
    data = find_socket(RECEIVER_SS, 5201, 22458)
    assert data is not None and data.facts() == {
        "local_port": 5201, "peer_port": 22458, "cc": "bpf_dctcp", "ecn": True,
        "ecnseen": True}
    # Ports unknown: the busiest connection.
    busiest = find_socket(RECEIVER_SS, 5201, None)
    assert busiest is not None and busiest.peer_port == 22458
    assert find_socket(SENDER_SS, 1, 5201) is None


def _run_with(sender: str, receiver: str) -> DctcpRun:
    run = DctcpRun("bpf_dctcp", "ebpf", 5201)
    run.facts = {"ecn_settings": {"sender": {"tcp_ecn": "2"}, "receiver": {"tcp_ecn": "2"}}}
    run.client_port = 22458
    run.ss_sender, run.ss_receiver = sender, receiver
    return run


def test_verify_passes_dctcp_with_ecn_on_both_ends() -> None:
    facts = _run_with(SENDER_SS, RECEIVER_SS).verify("bpf_dctcp")
    assert facts["sender_socket"]["ecn"] and facts["receiver_socket"]["ecnseen"]
    assert facts["receiver_cc_from_iperf3"] == "bpf_dctcp"


@pytest.mark.parametrize("sender, receiver, iperf, reason", [
    (SENDER_SS.replace("ts sack ecn bpf_dctcp", "ts sack reno"), RECEIVER_SS, None,
     "ECN was not negotiated on the data connection"),
    (SENDER_SS, RECEIVER_SS.replace("ecn ecnseen bpf_dctcp", "cubic"), None,
     "ECN was not negotiated"),
    (SENDER_SS, RECEIVER_SS.replace("ecnseen bpf_dctcp", "cubic"), None,
     "the receiver's socket (ss) ran 'cubic'"),
    (SENDER_SS, RECEIVER_SS, "cubic", "the receiver's socket (iperf3) ran 'cubic'"),
    (SENDER_SS, RECEIVER_SS.replace("ecn ecnseen bpf_dctcp", "ecn bpf_dctcp"), None,
     "never saw an ECN-capable packet"),
    (SENDER_SS, "", None, "not in the receiver's `ss -tino` samples"),
])
def test_verify_refuses_what_is_not_dctcp_with_ecn(sender: str, receiver: str,
                                                   iperf: str | None, reason: str) -> None:
    with pytest.raises(RunInvalid, match=re.escape(reason)):
        _run_with(sender, receiver).verify(iperf)


def test_kernel_dctcp_alpha_is_read_from_ss() -> None:
    line = ("ESTAB 0 0 10.0.0.1:22458 10.0.0.2:5201\n"
            "\t ts sack ecn dctcp wscale:9,9 cwnd:30 dctcp:(ce_state:1,alpha:256,ab_ecn:2896,"
            "ab_tot:43440) delivered:4000 delivered_ce:512 app_limited\n")
    assert parse_ss_dctcp(line, 22458) == {"ce_state": 1, "alpha": 256, "ab_ecn": 2896,
                                           "ab_tot": 43440, "delivered": 4000,
                                           "delivered_ce": 512}
    assert parse_ss_dctcp(line, 1) is None
    source = SsAlphaSource(lambda: line, 22458)
    reading = source.read()
    assert reading is not None and (reading.alpha, reading.delivered_ce) == (0.25, 512)
    assert source.final() == {"sender_ss_dctcp": parse_ss_dctcp(line, 22458)}


# ------------------------------------------------------------------ bpf_dctcp's map

def _export(**values: int) -> bytes:
    fields = {name: 0 for name in EXPORT_FIELDS} | values
    return EXPORT.pack(*(fields[name] for name in EXPORT_FIELDS)) + b"\0" * 4


class FakeMap:
    def __init__(self, entries: dict[bytes, bytes]) -> None:
        self.entries = entries
        self.closed = False

    def lookup(self, key: bytes) -> bytes | None:
        return self.entries.get(key)

    def keys(self) -> Any:
        return iter(list(self.entries))

    def close(self) -> None:
        self.closed = True


def _key(netns: int, local: str, remote: str, lport: int, rport: int) -> bytes:
    return KEY.pack(netns, socket.inet_aton(local), socket.inet_aton(remote), lport, rport)


def test_the_layout_matches_dctcp_bpf_c() -> None:
    # struct dctcp_key: 3 u32 and 2 u16; struct dctcp_export: 3 u64 and 14 u32, padded to 8.
    assert KEY.size == 16 and EXPORT.size == 80 and len(EXPORT_FIELDS) == 17
    source = (Path(__file__).parents[2] / "native" / "bpf" / "dctcp.bpf.c").read_text()
    body = source.split("struct dctcp_export {")[1].split("};")[0]
    declared = [line.split()[1].rstrip(";") for line in body.splitlines()
                if line.strip().startswith("__u")]
    assert tuple(declared) == EXPORT_FIELDS


def test_the_map_source_reads_the_newest_entry_of_the_run() -> None:
    sender = SocketKey(7, "10.0.0.1", "10.0.0.2", 22458, 5201)
    receiver = SocketKey(8, "10.0.0.2", "10.0.0.1", 5201, 22458)
    stale = FakeMap({_key(7, "10.0.0.1", "10.0.0.2", 22458, 5201): _export(init_ns=5, alpha=1)})
    live = FakeMap({
        _key(7, "10.0.0.1", "10.0.0.2", 22458, 5201): _export(
            init_ns=200, alpha=256, updates=9, delivered=100, delivered_ce=12, reductions=3,
            losses=1, update_ns=2_500_000_000),
        _key(8, "10.0.0.2", "10.0.0.1", 5201, 22458): _export(init_ns=201, ce_changes=4)})
    maps = {1: stale, 2: live}
    source = BpfMapAlphaSource(
        sender, receiver, since_ns=100,
        maps=lambda: [MapInfo(i, "dctcp_alpha", "lru_hash", 16, 80) for i in maps],
        opener=lambda info: maps[info.map_id])  # type: ignore[arg-type,return-value]
    reading = source.read()
    assert reading is not None
    assert (reading.alpha, reading.updates, reading.delivered_ce, reading.losses,
            reading.last_update_s) == (0.25, 9, 12, 1, 2.5)
    final = source.final()
    assert final["receiver_entry"]["ce_changes"] == 4
    assert stale.closed and live.closed
    # Port unknown: the keys are searched.
    anyport = BpfMapAlphaSource(SocketKey(7, "10.0.0.1", "10.0.0.2", None, 5201), None, 100,
                                maps=lambda: [MapInfo(2, "dctcp_alpha", "lru_hash", 16, 80)],
                                opener=lambda info: live)  # type: ignore[arg-type,return-value]
    found = anyport.read()
    assert found is not None and found.alpha == 0.25


def test_a_map_of_another_layout_is_refused() -> None:
    source = BpfMapAlphaSource(SocketKey(7, "10.0.0.1", "10.0.0.2", 1, 5201), None, 0,
                               maps=lambda: [MapInfo(3, "dctcp_alpha", "lru_hash", 16, 64)])
    from kernel.bpf_map import BpfMapError
    with pytest.raises(BpfMapError, match="built from another dctcp.bpf.c"):
        source.read()


class ListSource:
    name = "fake"
    period_s = 0.01

    def __init__(self) -> None:
        self.n = 0

    def read(self) -> AlphaReading | None:
        self.n += 1
        return None if self.n < 3 else AlphaReading(float(self.n), 0.5, updates=self.n)

    def final(self) -> dict[str, Any]:
        return {"extra": 1}


def test_the_sampler_writes_its_file_and_says_what_it_read(tmp_path: Path) -> None:
    sampler = DctcpAlphaSampler(ListSource(), tmp_path)
    sampler.start()
    deadline = time.monotonic() + 5
    while sampler._samples < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    facts = sampler.stop()
    assert facts["status"] == "recorded" and facts["source"] == "fake" and facts["extra"] == 1
    assert facts["samples"] >= 3 and facts["alpha_mean"] == 0.5
    rows = list(csv.reader(open(tmp_path / ALPHA_FILE)))
    assert tuple(rows[0]) == ALPHA_COLUMNS and len(rows) == facts["samples"] + 1
    trace = read_alpha(tmp_path)
    assert trace is not None and np.isnan(trace.delivered).all()


# -------------------------------------------------------------------- the analysis

def test_the_alpha_rule_is_linux_integer_arithmetic() -> None:
    assert ewma_step(1024, 10, 0) == 960  # - 1024/16
    assert ewma_step(1024, 10, 10) == 1024  # every packet marked: stays at 1
    assert ewma_step(100, 8, 2) == 100 - 6 + (2 << 6) // 8
    assert ewma_step(15, 1, 0) == 0  # below 16, g * alpha rounds to 0: alpha goes
    # 1024 * (15/16)^n falls below 16 after 65 windows; the floors take a few more.
    assert 65 <= windows_to_zero() <= 80


def _probe(rows: list[tuple[float, int, int, int]]) -> ProbeTrace:
    t, cwnd, ssthresh, state = (np.array(c) for c in zip(*rows))
    n = len(rows)
    zeros = np.zeros(n, dtype=np.int64)
    return ProbeTrace(time_s=t.astype(float), snd_cwnd=cwnd, ssthresh=ssthresh,
                      srtt_us=zeros + 10_000, snd_nxt=zeros, snd_una=zeros, snd_wnd=zeros,
                      ca_state=state)


def test_cwr_entries_and_the_alpha_they_imply(tmp_path: Path) -> None:
    probe = _probe([(1.0, 40, 30, CA_OPEN), (1.01, 40, 35, CA_CWR), (1.02, 38, 35, CA_CWR),
                    (1.5, 36, 35, CA_OPEN), (2.0, 40, 30, CA_OPEN), (2.01, 40, 30, CA_CWR)])
    reductions = cwr_reductions(probe)
    assert reductions == [Reduction(1.0, 40, 35), Reduction(2.0, 40, 30)]
    # 40 - (40 alpha) >> 11 = 35 for alpha in [256, 307.2)
    assert reductions[0].alpha_range() == (256.0, 307.2)
    with open(tmp_path / ALPHA_FILE, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(ALPHA_COLUMNS)
        for row in ((0.9, 0.25, 10, 1000, 100, 0, 0, 0.9), (1.1, 0.3, 12, 1100, 130, 1, 0, 1.05),
                    (1.6, 0.2, 20, 2000, 140, 1, 0, 1.55), (2.1, 0.1, 40, 4000, 150, 2, 0, 2.05)):
            writer.writerow(row)
    trace = read_alpha(tmp_path)
    assert trace is not None
    assert alpha_bounds_at(trace, 1.0) == (256 - 2 * 64, 256 + 2 * 64)
    assert alpha_bounds_at(trace, 0.5) is None
    m = dctcp_metrics(tmp_path, probe)
    assert m["ecn_reductions"] == 2 and m["ecn_reduction_ratio_median"] == (35 / 40 + 30 / 40) / 2
    # the second half of the samples' span (from 1.5 s): the last two
    assert m["ecn_marked_fraction"] == pytest.approx((150 - 140) / (4000 - 2000))
    assert m["dctcp_alpha_mean"] == pytest.approx(0.15)


def test_no_alpha_file_gives_none(tmp_path: Path) -> None:
    m = dctcp_metrics(tmp_path, None)
    assert m["dctcp_alpha_mean"] is None and m["ecn_reductions"] is None
    assert struct.calcsize("=I4s4sHH") == KEY.size
