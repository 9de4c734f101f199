"""The transfer's verification, TCP_INFO decoding, and tcpdump's counts (no network)."""
from __future__ import annotations

import json
import struct
from types import SimpleNamespace
from pathlib import Path
from typing import Any

import pytest

from core.errors import RunInvalid
from core.endpoints import Endpoints
from kernel.congestion_control import CcResolution
from kernel.packet_capture import CaptureStats, PacketCapture, clock_offset
from kernel.recovery import RecoveryRequest
from schemes.transfer import RECEIVER_JSON, SENDER_JSON, TransferScheme
from schemes.transfer_endpoint import TCP_INFO_FIELDS, decode_tcp_info


def _scheme(tmp_path: Path, kernel_name: str = "bpf_rh_cubic") -> tuple[TransferScheme, Endpoints]:
    scheme = TransferScheme(RecoveryRequest("cubic", "rate-halving"), 32768,
                            resolver=None)  # type: ignore[arg-type]
    scheme.resolution = CcResolution("rh_cubic", kernel_name, "ebpf", "abc", "test")
    ends = Endpoints(sender=None, receiver=None, receiver_ip="10.0.0.2",  # type: ignore
                     out_dir=tmp_path)
    return scheme, ends


def _reports(tmp_path: Path, sender: dict, receiver: dict) -> None:
    base_s = {"cc_read": "bpf_rh_cubic", "cc_read_at_end": "bpf_rh_cubic", "reply": "k",
              "tcp_info": {"snd_cwnd": 7}}
    base_r = {"bytes": 32768, "bytes_after_expected": 0}
    (tmp_path / SENDER_JSON).write_text(json.dumps({**base_s, **sender}))
    (tmp_path / RECEIVER_JSON).write_text(json.dumps({**base_r, **receiver}))


def test_a_good_transfer_verifies(tmp_path: Path) -> None:
    scheme, ends = _scheme(tmp_path)
    _reports(tmp_path, {}, {})
    facts = scheme.verify(ends)
    assert facts["cc_used"] == "bpf_rh_cubic" and facts["recovery"] == "rate-halving"
    assert facts["bytes_received"] == 32768 and facts["tcp_info"] == {"snd_cwnd": 7}


@pytest.mark.parametrize("sender, receiver, message", [
    ({"cc_read": "cubic"}, {}, "asked for bpf_rh_cubic, the socket reported 'cubic'"),
    ({"cc_read_at_end": "reno"}, {}, "the socket reported 'reno'"),
    ({}, {"bytes": 30000}, "read 30000 bytes"),
    ({}, {"bytes_after_expected": 5}, "then 5 more"),
    ({"reply": ""}, {}, "reply after the last byte never reached the sender"),
    ({"error": "ConnectionRefusedError: refused"}, {}, "the transfer sender failed"),
])
def test_a_bad_transfer_is_invalid(tmp_path: Path, sender: dict, receiver: dict,
                                   message: str) -> None:
    scheme, ends = _scheme(tmp_path)
    _reports(tmp_path, sender, receiver)
    with pytest.raises(RunInvalid, match=message):
        scheme.verify(ends)


def test_a_missing_report_is_invalid(tmp_path: Path) -> None:
    scheme, ends = _scheme(tmp_path)
    with pytest.raises(RunInvalid, match="wrote no report"):
        scheme.verify(ends)


def test_tcp_info_decoding_follows_the_kernel_layout() -> None:
    values = {name: i + 1 for i, (name, _) in enumerate(TCP_INFO_FIELDS)}
    raw = b""
    for name, code in TCP_INFO_FIELDS:
        size = struct.calcsize(code)
        raw += b"\0" * ((-len(raw)) % size)  # the kernel's natural alignment
        raw += struct.pack("=" + code, values[name] % 256 if code == "B" else values[name])
    decoded = decode_tcp_info(raw)
    assert decoded["snd_cwnd"] == values["snd_cwnd"]
    assert decoded["total_retrans"] == values["total_retrans"]
    assert decoded["bytes_acked"] == values["bytes_acked"]
    assert decoded["snd_wnd"] == values["snd_wnd"]
    # An older kernel's shorter struct: the fields it has, nothing invented.
    short = decode_tcp_info(raw[:104])
    assert "total_retrans" in short and "pacing_rate" not in short


def test_tcpdump_counts_are_read_from_its_last_words() -> None:
    stats = CaptureStats.parse("tcpdump: listening on x\n55 packets captured\n"
                               "56 packets received by filter\n1 packet dropped by kernel\n")
    assert (stats.captured, stats.received_by_filter, stats.dropped_by_kernel) == (55, 56, 1)
    assert CaptureStats.parse("").captured is None


def test_captures_must_be_pcap_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must end in .pcap"):
        PacketCapture(None, "eth0", tmp_path / "x.cap")  # type: ignore[arg-type]


class _ListeningHost:
    """Records what tcpdump was started with and says it listens."""
    name = "h"

    def __init__(self) -> None:
        self.args: list[str] = []

    def popen(self, args: list[str], stdout: object, stderr: Any) -> Any:
        self.args = args
        stderr.write(b"listening on h-eth0\n")
        stderr.flush()
        return SimpleNamespace(pid=1, poll=lambda: None)


def test_a_capture_is_packet_by_packet_unless_a_timing_measurement_asks(tmp_path: Path) -> None:
    host = _ListeningHost()
    PacketCapture(host, "h-eth0", tmp_path / "a.pcap").start()  # type: ignore[arg-type]
    assert "-U" in host.args and "--immediate-mode" in host.args and "-B" not in host.args
    PacketCapture(host, "h-eth0", tmp_path / "b.pcap",  # type: ignore[arg-type]
                  "tcp dst port 5201", immediate=False, buffer_kib=65536).start()
    assert "-U" not in host.args and "--immediate-mode" not in host.args
    assert host.args[host.args.index("-B") + 1] == "65536"
    assert host.args[-4:] == ["tcp", "dst", "port", "5201"]


def test_the_clock_offset_is_tight() -> None:
    offset = clock_offset()
    assert offset["uncertainty_s"] < 0.01
    assert offset["realtime_minus_monotonic_s"] > 0
