"""TraceLink's per-host delays: the maps it accepts, each refusal naming the value, and the
emulator flags they become (native/link/README.md, "A delay per far host")."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from topologies.link_side import LinkSide
from topologies.trace_link_options import (MAX_PEER_DELAYS, TraceLinkOptionError,
                                           check_peer_delays, peer_delay_args)


def test_a_map_is_kept_as_given() -> None:
    delays = {"10.0.0.1": 80, "10.0.0.2": 93, "192.168.7.254": 0, "10.0.0.4": 999_999_999}
    assert check_peer_delays("data_delays_ms", delays) == delays
    assert list(check_peer_delays("data_delays_ms", delays)) == list(delays)  # order kept
    assert check_peer_delays("ack_delays_ms", None) == {}
    assert check_peer_delays("ack_delays_ms", {}) == {}


def test_the_most_addresses_the_emulator_takes_are_accepted() -> None:
    delays = {f"10.1.{i // 256}.{i % 256}": 5 for i in range(MAX_PEER_DELAYS)}
    assert len(check_peer_delays("data_delays_ms", delays)) == 256


@pytest.mark.parametrize("value, message", [
    ([("10.0.0.1", 40)], r"data_delays_ms=\[\('10.0.0.1', 40\)\] must map IPv4 addresses to "
                         r"whole milliseconds, e.g. data_delays_ms=\{'10.0.0.2': 40\}"),
    ("10.0.0.1=40", r"data_delays_ms='10.0.0.1=40' must map IPv4 addresses"),
    ({"10.0.0.256": 40}, r"data_delays_ms: '10.0.0.256' is not an IPv4 address"),
    ({"10.1": 40}, r"'10.1' is not an IPv4 address"),
    ({"010.0.0.1": 40}, r"'010.0.0.1' is not an IPv4 address"),
    ({" 10.0.0.1": 40}, r"' 10.0.0.1' is not an IPv4 address"),
    ({"10.0.0.1/24": 40}, r"'10.0.0.1/24' is not an IPv4 address"),
    ({"::1": 40}, r"'::1' is not an IPv4 address"),
    ({"host1": 40}, r"'host1' is not an IPv4 address"),
    ({167772161: 40}, r"167772161 is not an IPv4 address"),
    ({"10.0.0.1": -1}, r"data_delays_ms: the delay of 10.0.0.1 \(-1\) must be a whole number "
                       r"of ms in 0..999999999"),
    ({"10.0.0.1": 2.5}, r"the delay of 10.0.0.1 \(2.5\) must be a whole number"),
    ({"10.0.0.1": 40.0}, r"the delay of 10.0.0.1 \(40.0\) must be a whole number"),
    ({"10.0.0.1": "40"}, r"the delay of 10.0.0.1 \('40'\) must be a whole number"),
    ({"10.0.0.1": True}, r"the delay of 10.0.0.1 \(True\) must be a whole number"),
    ({"10.0.0.1": 1_000_000_000}, r"\(1000000000\) must be a whole number of ms in 0..999999999"),
    ({f"10.1.{i // 256}.{i % 256}": 5 for i in range(257)},
     r"data_delays_ms lists 257 addresses; the emulator takes at most 256"),
])
def test_bad_maps_are_refused_naming_the_value(value: Any, message: str) -> None:
    with pytest.raises(TraceLinkOptionError, match=message):
        check_peer_delays("data_delays_ms", value)


def test_the_flags_name_the_far_host_both_ways() -> None:
    data = check_peer_delays("data_delays_ms", {"10.0.0.1": 80, "10.0.0.2": 93})
    ack = check_peer_delays("ack_delays_ms", {"10.0.0.2": 0})
    assert peer_delay_args(data, ack) == ["--a2b-delay-by-src", "10.0.0.1=80,10.0.0.2=93",
                                          "--b2a-delay-by-dst", "10.0.0.2=0"]
    assert peer_delay_args(data, {}) == ["--a2b-delay-by-src", "10.0.0.1=80,10.0.0.2=93"]
    assert peer_delay_args({}, ack) == ["--b2a-delay-by-dst", "10.0.0.2=0"]
    assert peer_delay_args({}, {}) == []


def _bare_link(data_loss: float | None = None, **delays: dict[str, int]) -> Any:
    """A TraceLink with what emulator_args() reads and no network (building one needs root)."""
    pytest.importorskip("mininet")  # trace_link builds on it; tests/unit-venv.sh has none
    from topologies.cpu_placement import Placement
    from topologies.trace_link import TraceLink
    link = object.__new__(TraceLink)
    link.emulator = Path("netrepro-link")
    link.left = SimpleNamespace(intf2=SimpleNamespace(name="se-a"))
    link.right = SimpleNamespace(intf1=SimpleNamespace(name="se-b"))
    link.data = link.ack = LinkSide(rate_mbps=100)
    link.data_delay_ms, link.ack_delay_ms = 20, 20
    link.data_delays_ms = check_peer_delays("data_delays_ms", delays.get("data"))
    link.ack_delays_ms = check_peer_delays("ack_delays_ms", delays.get("ack"))
    link.queue = link.ack_queue = "infinite"
    link.log_dir = Path("out")
    link.once, link.span_ms, link.realtime, link.queue_log = False, None, True, False
    link.data_loss, link.ack_loss, link.loss_seed = data_loss, None, 1_000_003
    link.data_path = None
    link.placement = Placement(why_not="not started")
    return link


def test_trace_link_puts_the_flags_beside_the_delays_and_nothing_without_maps() -> None:
    plain = _bare_link().emulator_args()
    assert not any("delay-by" in a for a in plain)
    args = _bare_link(data={"10.0.0.1": 80, "10.0.0.3": 120},
                      ack={"10.0.0.1": 0}).emulator_args()
    at = plain.index("--b2a-delay-ms") + 2
    assert args == plain[:at] + ["--a2b-delay-by-src", "10.0.0.1=80,10.0.0.3=120",
                                 "--b2a-delay-by-dst", "10.0.0.1=0"] + plain[at:]


def test_trace_link_asks_for_loss_with_its_seed_only_when_given() -> None:
    plain = _bare_link().emulator_args()
    assert not any("loss" in a for a in plain)
    args = _bare_link(data_loss=0.01).emulator_args()
    at = args.index("--a2b-loss")
    assert args[at:at + 4] == ["--a2b-loss", "0.01", "--loss-seed", "1000003"]
    assert [a for a in args if a not in args[at:at + 4]] == plain


def test_trace_link_names_a_data_path_only_when_asked() -> None:
    link = _bare_link()
    assert "--data-path" not in link.emulator_args()  # the emulator's default (rings)
    link.data_path = "mmsg"
    args = link.emulator_args()
    at = args.index("--data-path")
    assert args[at:at + 2] == ["--data-path", "mmsg"]


def test_trace_link_names_the_emulators_cpu_only_when_placed() -> None:
    from topologies.cpu_placement import Placement
    link = _bare_link()
    assert "--cpu" not in link.emulator_args()
    link.placement = Placement(emulator_cpu=1, host_rx_cpus=[0])
    args = link.emulator_args()
    assert args[args.index("--cpu"):args.index("--cpu") + 2] == ["--cpu", "1"]
