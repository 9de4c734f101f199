"""The socket sampler's pieces without a kernel: the sock_diag request, a hand-built answer
parsed back (tcp_info, the congestion control's name, BBR's own record), the CSV it writes
read back, and BBR's mode from its two gains."""
from __future__ import annotations

import socket
import struct
from pathlib import Path

import numpy as np
import pytest

from analysis.socket_samples import (DRAIN, PROBE_BW, PROBE_RTT, STARTUP, UNKNOWN, bbr_mode,
                                     data_connection, read_samples, window_limits)
from kernel import socket_sampler
from kernel.sock_diag import (EXT, NLMSG_DONE, NLMSG_ERROR, SOCK_DIAG_BY_FAMILY, SockDiagError,
                              dump_request, inflight, parse_messages)
from kernel.socket_samples import FILE, check_interval
from schemes.transfer_endpoint import TCP_INFO_FIELDS


def tcp_info_blob(**values: int) -> bytes:
    """struct tcp_info with the given fields, the rest 0, laid out as the kernel does."""
    out = b""
    for name, code in TCP_INFO_FIELDS:
        size = struct.calcsize(code)
        out += b"\0" * (-len(out) % size)
        out += struct.pack("=" + code, values.get(name, 0))
    return out


def attribute(kind: int, payload: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def diag_message(sport: int, dport: int, src: str, dst: str, state: int,
                 attributes: bytes) -> bytes:
    sockid = struct.pack(">HH16s16s", sport, dport, socket.inet_aton(src).ljust(16, b"\0"),
                         socket.inet_aton(dst).ljust(16, b"\0")) + struct.pack("=III", 0, 7, 0)
    body = struct.pack("=BBBB", socket.AF_INET, state, 0, 0) + sockid + \
        struct.pack("=IIIII", 0, 0, 0, 0, 12345) + attributes
    return struct.pack("=IHHII", 16 + len(body), SOCK_DIAG_BY_FAMILY, 2, 1, 0) + body


def done() -> bytes:
    return struct.pack("=IHHII", 20, NLMSG_DONE, 2, 1, 0) + struct.pack("=i", 0)


def test_the_request_asks_every_tcp_socket_for_its_info() -> None:
    raw = dump_request(seq=9)
    length, kind, flags, seq, _ = struct.unpack_from("=IHHII", raw)
    assert (length, kind, flags, seq) == (len(raw), SOCK_DIAG_BY_FAMILY, 0x301, 9)
    family, protocol, ext, _, states = struct.unpack_from("=BBBBI", raw, 16)
    assert (family, protocol, states) == (socket.AF_INET, socket.IPPROTO_TCP, 0xFFF)
    assert ext == EXT == 0b1110  # INFO, VEGASINFO (BBR answers it), CONG
    assert len(raw) == 16 + 56


def test_an_answer_is_parsed_with_bbrs_own_record() -> None:
    info = tcp_info_blob(state=1, snd_cwnd=66, rtt=41_200, unacked=60, sacked=3, lost=2,
                         retrans=1, delivery_rate=1_240_000, bytes_acked=9_999_999_999,
                         busy_time=5_000_000, rwnd_limited=100_000, app_limited_flags=1)
    bbr = struct.pack("=IIIII", 1_250_000 & 0xFFFFFFFF, 0, 40_100, 320, 512)
    data = diag_message(19000, 5201, "10.0.0.2", "10.0.0.1", 1,
                        attribute(2, info) + attribute(4, b"bbr\0") + attribute(16, bbr)) + \
        diag_message(40000, 5201, "10.0.0.2", "10.0.0.1", 2, attribute(4, b"cubic\0")) + done()
    records, finished = parse_messages(data)
    assert finished
    first, second = records
    assert (first.local, first.local_port, first.remote, first.remote_port) == \
        ("10.0.0.2", 19000, "10.0.0.1", 5201)
    assert first.cc == "bbr" and first.state == 1
    assert first.info["snd_cwnd"] == 66 and first.info["bytes_acked"] == 9_999_999_999
    assert first.bbr == (1_250_000, 40_100, 320, 512)
    assert inflight(first.info) == 60 - 3 - 2 + 1
    assert second.cc == "cubic" and second.bbr is None and second.info == {}
    assert inflight(second.info) is None
    row = socket_sampler.row(12.5, first)
    assert dict(zip(socket_sampler.COLUMNS, row))["inflight"] == 56
    assert dict(zip(socket_sampler.COLUMNS, row))["app_limited"] == 1


def test_a_refusal_or_a_torn_message_is_an_error() -> None:
    error = struct.pack("=IHHII", 20, NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -1)
    with pytest.raises(SockDiagError, match="errno 1"):
        parse_messages(error)
    torn = diag_message(1, 2, "10.0.0.2", "10.0.0.1", 1, b"")[:-10]
    with pytest.raises(SockDiagError, match="runs past"):
        parse_messages(torn)


def write_samples(path: Path, rows: list[dict[str, object]]) -> None:
    lines = [",".join(socket_sampler.COLUMNS)]
    for r in rows:
        lines.append(",".join(str(r.get(c, "")) for c in socket_sampler.COLUMNS))
    path.write_text("\n".join(lines) + "\n")


def test_samples_are_read_back_per_connection(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"time_s": 1.0, "local_port": 19000, "remote_port": 5201, "state": "SYN-SENT",
         "cc": "bbr"},
        {"time_s": 1.01, "local_port": 19000, "remote_port": 5201, "state": "ESTAB",
         "cc": "bbr", "bytes_acked": 1000, "busy_us": 1000, "rwnd_limited_us": 0,
         "sndbuf_limited_us": 0, "bbr_pacing_gain": 739, "bbr_cwnd_gain": 739},
        {"time_s": 1.01, "local_port": 40000, "remote_port": 5201, "state": "ESTAB",
         "cc": "cubic", "bytes_acked": 300},
        {"time_s": 1.02, "local_port": 19000, "remote_port": 5201, "state": "ESTAB",
         "cc": "bbr", "bytes_acked": 9000, "busy_us": 4000, "rwnd_limited_us": 200,
         "sndbuf_limited_us": 40, "bbr_pacing_gain": 88, "bbr_cwnd_gain": 739},
    ]
    write_samples(tmp_path / FILE, rows)
    found = read_samples(tmp_path / FILE)
    assert set(found) == {(19000, 5201), (40000, 5201)}
    c = found[(19000, 5201)]
    assert len(c) == 3 and c.cc == "bbr"
    assert list(c.state) == ["SYN-SENT", "ESTAB", "ESTAB"]
    assert np.isnan(c["bytes_acked"][0]) and c["bytes_acked"][2] == 9000
    modes = bbr_mode(c["bbr_pacing_gain"], c["bbr_cwnd_gain"])
    assert list(modes) == [UNKNOWN, STARTUP, DRAIN]
    assert window_limits(c) == {"rwnd_pct": 5.0, "sndbuf_pct": 1.0, "busy_ms": 4.0}
    assert data_connection(tmp_path, 19000) is not None
    busiest = data_connection(tmp_path, None)
    assert busiest is not None and busiest.local_port == 19000
    assert data_connection(tmp_path, 12345) is None
    assert data_connection(tmp_path / "nowhere", None) is None


def test_bbrs_modes_follow_its_gains() -> None:
    pacing = np.array([739, 88, 320, 192, 256, 256, 256, np.nan, 500])
    cwnd = np.array([739, 739, 512, 512, 512, 256, 739, np.nan, 512])
    assert list(bbr_mode(pacing, cwnd)) == [STARTUP, DRAIN, PROBE_BW, PROBE_BW, PROBE_BW,
                                            PROBE_RTT, UNKNOWN, UNKNOWN, UNKNOWN]


def test_the_interval_is_checked() -> None:
    assert check_interval(10) == 10
    for bad in (0, 4, 1001, 10.0, True, "10"):
        with pytest.raises(ValueError, match="socket_sample_ms="):
            check_interval(bad)
