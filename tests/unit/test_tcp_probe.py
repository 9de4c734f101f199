"""tcp_probe: parsing trace_pipe lines, the CSV artifacts, and the recorder's bookkeeping.

The recorder tests use a fake tracefs (a plain folder): they check which
instances and records are created and removed, and the messages when tracefs
or the tracepoint is missing; real recordings are in the integration tests.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.tcp_probe import read_probe
from core.tcp_probe_format import (CA_OPEN, CA_RECOVERY, CONG_STATE_FILE, PROBE_COLUMNS, PROBE_FILE,
                                   ProbeCsvWriter, ProbeFormatError, ProbeSample, TraceLineParser)
from kernel import tcp_probe_recorder
from kernel.tcp_probe_recorder import ProbeUnavailable, TcpProbeSetup

PROBE_LINE = (
    "          iperf3-13151   [001] ..s2. 10773.612832: tcp_probe: family=AF_INET "
    "src=10.0.0.1:28647 dest=10.0.0.2:5201 mark=0x0 data_len=0 snd_nxt=0xcbc35dc8 "
    "snd_una=0xcbc2b31e snd_cwnd={cwnd} ssthresh={ssthresh} snd_wnd=43690 srtt=41767 "
    "rcv_wnd=44032 sock_cookie=3e skbaddr=00000000f5e7af57 skaddr=0000000031c41a41")
STATE_LINE = (
    "          <idle>-0       [000] ..s2. 10773.700000: tcp_cong_state_set: family=AF_INET "
    "sport=28647 dport=5201 saddr=10.0.0.1 daddr=10.0.0.2 saddrv6=::ffff:10.0.0.1 "
    "daddrv6=::ffff:10.0.0.2 cong_state={state}")


def test_a_probe_line_gives_every_field() -> None:
    sample = TraceLineParser().feed(PROBE_LINE.format(cwnd=10, ssthresh=2147483647))
    assert isinstance(sample, ProbeSample)
    assert sample.time_s == pytest.approx(10773.612832)
    assert (sample.snd_cwnd, sample.ssthresh, sample.srtt_us) == (10, 2147483647, 41767)
    assert (sample.snd_nxt, sample.snd_una) == (0xCBC35DC8, 0xCBC2B31E)
    assert (sample.snd_wnd, sample.ca_state) == (43690, CA_OPEN)


def test_rows_carry_the_congestion_state_in_force() -> None:
    parser = TraceLineParser()
    before = parser.feed(PROBE_LINE.format(cwnd=100, ssthresh=75))
    change = parser.feed(STATE_LINE.format(state=CA_RECOVERY))
    after = parser.feed(PROBE_LINE.format(cwnd=99, ssthresh=50))
    assert before is not None and change is not None and after is not None
    assert before.ca_state == CA_OPEN and after.ca_state == CA_RECOVERY
    assert change.ca_state == CA_RECOVERY and parser.state_changes == 1


def test_lost_events_headers_and_garbage_are_counted_not_fatal() -> None:
    parser = TraceLineParser()
    assert parser.feed("CPU:1 [LOST 42 EVENTS]") is None
    assert parser.feed("# tracer: nop") is None
    assert parser.feed("something else entirely") is None
    assert parser.feed(PROBE_LINE.format(cwnd="x", ssthresh=1)) is None
    assert parser.lost_events == 42
    assert parser.unparsed_lines == 2
    assert parser.first_unparsed == "something else entirely"


def test_csv_round_trip_with_lines_split_across_chunks(tmp_path: Path) -> None:
    text = "\n".join([PROBE_LINE.format(cwnd=10, ssthresh=2147483647),
                      STATE_LINE.format(state=CA_RECOVERY),
                      PROBE_LINE.format(cwnd=8, ssthresh=5)]) + "\n"
    writer = ProbeCsvWriter(tmp_path)
    for i in range(0, len(text), 37):  # chunks that cut lines anywhere
        writer.feed_text(text[i:i + 37])
    writer.close()
    assert (tmp_path / PROBE_FILE).read_text().splitlines()[0] == ",".join(PROBE_COLUMNS)
    probe = read_probe(tmp_path)
    assert probe is not None and len(probe) == 2
    assert list(probe.snd_cwnd) == [10, 8]
    assert list(probe.ca_state) == [CA_OPEN, CA_RECOVERY]
    assert [c.ca_state for c in probe.state_changes] == [CA_RECOVERY]


def test_a_run_without_a_probe_has_none(tmp_path: Path) -> None:
    assert read_probe(tmp_path) is None


def test_a_csv_with_other_columns_is_an_error(tmp_path: Path) -> None:
    (tmp_path / PROBE_FILE).write_text("time,cwnd\n1,2\n")
    with pytest.raises(ProbeFormatError, match="header"):
        read_probe(tmp_path)


def test_an_empty_recording_reads_as_zero_samples(tmp_path: Path) -> None:
    ProbeCsvWriter(tmp_path).close()
    probe = read_probe(tmp_path)
    assert probe is not None and len(probe) == 0
    assert (tmp_path / CONG_STATE_FILE).exists()


# ------------------------------------------------------- the recorder's setup

def _fake_tracefs(root: Path, events: bool = True) -> Path:
    (root / "instances").mkdir(parents=True)
    (root / "trace_pipe").write_text("")
    if events:
        for event in tcp_probe_recorder.EVENTS:
            (root / "events" / event).mkdir(parents=True)
            (root / "events" / event / "filter").write_text("none\n")
    return root


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)


def test_missing_tracefs_says_how_to_mount_it(tmp_path: Path, as_root: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tcp_probe_recorder, "TRACEFS_MOUNTS", (tmp_path / "nowhere",))
    with pytest.raises(ProbeUnavailable, match="mount -t tracefs"):
        TcpProbeSetup(tmp_path / "state").start(tmp_path, 5201)


def test_missing_tracepoint_is_named(tmp_path: Path, as_root: None) -> None:
    tracefs = _fake_tracefs(tmp_path / "tracing", events=False)
    with pytest.raises(ProbeUnavailable, match="no tcp:tcp_probe tracepoint"):
        TcpProbeSetup(tmp_path / "state", tracefs=tracefs).start(tmp_path, 5201)


def test_not_root_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ProbeUnavailable, match="needs root"):
        TcpProbeSetup(tmp_path / "state", tracefs=tmp_path).tracefs()


def test_a_failed_arm_leaves_no_instance_record_or_artifact(tmp_path: Path,
                                                            as_root: None) -> None:
    # A plain folder is not tracefs: the instance has no control files, so arming fails.
    tracefs = _fake_tracefs(tmp_path / "tracing")
    state, out = tmp_path / "state", tmp_path / "run"
    out.mkdir()
    with pytest.raises(ProbeUnavailable, match="cannot set up tracefs instance"):
        TcpProbeSetup(state, tracefs=tracefs).start(out, 5201, tag="nrabc123")
    assert list((tracefs / "instances").iterdir()) == []
    assert list(state.glob("*.json")) == []
    assert not (out / PROBE_FILE).exists()


def test_ports_in_other_filters_and_live_records_are_avoided(
        tmp_path: Path, as_root: None, monkeypatch: pytest.MonkeyPatch) -> None:
    tracefs = _fake_tracefs(tmp_path / "tracing")
    other = tracefs / "instances" / "someone-else" / "events" / "tcp" / "tcp_probe"
    other.mkdir(parents=True)
    other.joinpath("filter").write_text("sport == 20000 && dport == 5201\n")
    state = tmp_path / "state"
    state.mkdir()
    live = {"instance": "netrepro-nrlive1", "owner": os.getpid(),
            "owner_start": tcp_probe_recorder._process_start_time(os.getpid()),
            "client_port": 20001, "server_port": 5201}
    (state / "netrepro-nrlive1.json").write_text(json.dumps(live))
    # A run uses its port and the next (iperf3 --bidir's reverse stream): 20002 is next to
    # the live 20001's, and taking it would let that run's second stream collide.
    monkeypatch.setattr(tcp_probe_recorder, "CLIENT_PORTS", range(20000, 20004))
    setup = TcpProbeSetup(state, tracefs=tracefs)
    assert setup._free_port(tracefs) == 20003
    monkeypatch.setattr(tcp_probe_recorder, "CLIENT_PORTS", range(20000, 20003))
    with pytest.raises(ProbeUnavailable, match="every client port"):
        setup._free_port(tracefs)


def test_clean_removes_only_instances_of_dead_owners(tmp_path: Path, as_root: None) -> None:
    tracefs = _fake_tracefs(tmp_path / "tracing")
    state = tmp_path / "state"
    state.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    records = {"netrepro-nrdead1": dead.pid, "netrepro-nrlive1": os.getpid()}
    for name, pid in records.items():
        (tracefs / "instances" / name).mkdir()
        (state / f"{name}.json").write_text(json.dumps(
            {"instance": name, "owner": pid,
             "owner_start": tcp_probe_recorder._process_start_time(pid),
             "client_port": 20000 + len(name), "server_port": 5201}))
    (tracefs / "instances" / "not-ours").mkdir()
    report = TcpProbeSetup(state, tracefs=tracefs).cleanup_stale()
    assert len(report) == 1 and "netrepro-nrdead1" in report[0]
    assert sorted(p.name for p in (tracefs / "instances").iterdir()) == \
        ["netrepro-nrlive1", "not-ours"]
    assert [p.name for p in state.glob("*.json")] == ["netrepro-nrlive1.json"]
