"""The controllers' common logic, fed raw frames as a switch's packet-ins would be."""
from __future__ import annotations

import json
import socket
import struct
from pathlib import Path

import pytest

from controllers.drop_log import DropLog, plan_problems
from controllers.drop_plan import DropPlan
from controllers.frames import TCP_ACK, TCP_FIN, TCP_SYN, parse_tcp
from controllers.plan_logic import ControllerConfig, PlanController

SENDER, RECEIVER = 1, 2
MSS = 1448
ISN = 1000


def frame(src: str = "10.0.0.1", dst: str = "10.0.0.2", sport: int = 40000,
          dport: int = 5001, seq: int = 0, flags: int = TCP_ACK, payload: int = 0,
          proto: int = 6, frag: int = 0x4000) -> bytes:
    tcp = struct.pack("!HHIIHHHH", sport, dport, seq, 0, (5 << 12) | flags, 65535, 0, 0)
    total = 20 + len(tcp) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, frag, 64, proto, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp + bytes(payload)


def test_parse_tcp_reads_the_fields_and_skips_what_is_not_tcp() -> None:
    seg = parse_tcp(frame(seq=77, flags=TCP_SYN, payload=10))
    assert seg is not None
    assert (seg.src, seg.dport, seg.seq, seg.payload_len, seg.syn) == ("10.0.0.1", 5001, 77,
                                                                       10, True)
    assert parse_tcp(frame(proto=17)) is None
    assert parse_tcp(frame(frag=0x2000)) is None     # a first fragment
    assert parse_tcp(b"\x00" * 20) is None


def make(tmp_path: Path, plan: str) -> PlanController:
    cfg = ControllerConfig(DropPlan.parse(plan), SENDER, RECEIVER, 5001, tmp_path / "log.jsonl")
    clock = iter(range(1000, 100000))
    return PlanController(cfg, "test", clock=lambda: float(next(clock)))


def data(k: int) -> bytes:
    return frame(seq=ISN + 1 + (k - 1) * MSS, payload=MSS)


def test_the_flow_is_planned_other_traffic_forwarded(tmp_path: Path) -> None:
    ctl = make(tmp_path, "light")
    ctl.on_connect(0xAB)
    ctl.on_ready()
    # reverse direction and other connections pass untouched
    assert ctl.on_packet_in(RECEIVER, frame(src="10.0.0.2", dst="10.0.0.1")).out_port == SENDER
    assert ctl.on_packet_in(SENDER, frame(dport=22, seq=5, payload=100)).out_port == RECEIVER
    assert ctl.on_packet_in(SENDER, frame(seq=ISN, flags=TCP_SYN)).out_port == RECEIVER
    # data before the flow's own SYN on another port does not start it
    outs = [ctl.on_packet_in(SENDER, data(k)) for k in range(1, 8)]
    assert [a.out_port for a in outs] == [None] * 5 + [RECEIVER] * 2
    assert [a.check_after for a in outs] == [None] * 4 + [0.005] * 3
    # a retransmission of segment 1 after the plan: forwarded, not counted
    assert ctl.on_packet_in(SENDER, data(1)).out_port == RECEIVER
    assert ctl.on_timer()        # the fake clock moved a second: the flow has paused
    assert not ctl.on_timer()    # once
    ctl.on_flush_barrier()
    ctl.on_direct_barrier()
    late = ctl.on_packet_in(SENDER, data(8))
    assert late.out_port == RECEIVER and late.check_after is None
    ctl.on_packet_in(SENDER, frame(seq=ISN + 1 + 8 * MSS, flags=TCP_FIN | TCP_ACK))
    ctl.close()
    log = DropLog.read(tmp_path / "log.jsonl")
    assert log.dropped_segments == [1, 2, 3, 4, 5]
    assert [e["rel_seq"] for e in log.drops] == [1 + k * MSS for k in range(5)]
    assert log.first("flow")["sport"] == 40000  # type: ignore[index]
    assert len(log.late_segments) == 2 and log.direct_time is not None
    assert log.first("flow_end")["originals"] == 8  # type: ignore[index]
    assert plan_problems(DropPlan.parse("light"), log) == [
        "2 packets of the flow reached the controller after the direct flow was sent: they "
        "may have been overtaken (reordering)"]
    assert plan_problems(DropPlan.parse("heavy"), log)[0].startswith("dropped segments")


def test_the_switch_over_waits_for_a_pause_in_the_flow(tmp_path: Path) -> None:
    now = [100.0]
    cfg = ControllerConfig(DropPlan.parse("2"), SENDER, RECEIVER, 5001, tmp_path / "l.jsonl",
                           quiet_s=0.010)
    ctl = PlanController(cfg, "test", clock=lambda: now[0])
    ctl.on_connect(1)
    ctl.on_packet_in(SENDER, frame(seq=ISN, flags=TCP_SYN))
    assert ctl.on_packet_in(SENDER, data(1)).check_after is None
    assert ctl.on_packet_in(SENDER, data(2)).check_after == 0.010   # plan done
    now[0] += 0.006
    assert ctl.on_packet_in(SENDER, data(3)).check_after == 0.010   # the burst goes on
    now[0] += 0.006
    assert not ctl.on_timer()        # 6 ms since segment 3: not yet a pause
    now[0] += 0.005
    assert ctl.on_timer()            # 11 ms: switch over
    ctl.on_flush_barrier()
    ctl.on_direct_barrier()
    ctl.close()
    log = DropLog.read(tmp_path / "l.jsonl")
    assert log.first("quiet")["gap_s"] == pytest.approx(0.011)  # type: ignore[index]
    assert plan_problems(DropPlan.parse("2"), log) == []


def test_the_log_explains_a_plan_the_flow_was_too_short_for(tmp_path: Path) -> None:
    ctl = make(tmp_path, "3,30")
    ctl.on_connect(1)
    ctl.on_packet_in(SENDER, frame(seq=ISN, flags=TCP_SYN))
    for k in range(1, 6):
        ctl.on_packet_in(SENDER, data(k))
    ctl.on_packet_in(SENDER, frame(seq=ISN + 1 + 5 * MSS, flags=TCP_FIN | TCP_ACK))
    ctl.close()
    problems = plan_problems(DropPlan.parse("3,30"), DropLog.read(tmp_path / "log.jsonl"))
    assert problems == ["dropped segments [3], planned [3, 30]: the flow ended after 5 "
                        "original segments, the plan names up to 30"]


def test_problems_name_each_missing_stage(tmp_path: Path) -> None:
    plan = DropPlan.parse("light")
    assert "never started" in plan_problems(plan, DropLog.read(tmp_path / "none.jsonl"))[0]
    ctl = make(tmp_path, "light")
    assert "never connected" in plan_problems(plan, DropLog.read(ctl.config.log_path))[0]
    ctl.on_connect(1)
    ctl.on_packet_in(SENDER, frame(dport=80, seq=ISN, flags=TCP_SYN))
    assert "never saw the flow's handshake (TCP to port 5001" in \
        plan_problems(plan, DropLog.read(ctl.config.log_path))[0]
    ctl.on_packet_in(SENDER, frame(seq=ISN, flags=TCP_SYN))
    for k in range(1, 6):
        ctl.on_packet_in(SENDER, data(k))
    assert plan_problems(plan, DropLog.read(ctl.config.log_path)) == \
        ["the direct flow was never installed after the plan"]


def test_a_truncated_last_line_ends_the_log(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"t": 1, "event": "start", "tcp_port": 1}) + "\n{\"t\": 2, \"ev")
    assert len(DropLog.read(path).events) == 1


def test_config_round_trip(tmp_path: Path) -> None:
    cfg = ControllerConfig(DropPlan.parse("base"), 1, 2, 5001, tmp_path / "x.jsonl")
    cfg.write(tmp_path / "c.json")
    assert ControllerConfig.read(tmp_path / "c.json") == cfg


@pytest.mark.parametrize("port", [SENDER, RECEIVER, 7])
def test_ports(tmp_path: Path, port: int) -> None:
    ctl = make(tmp_path, "light")
    assert ctl.other_port(port) == {SENDER: RECEIVER, RECEIVER: SENDER}.get(port)
