"""The hosts' TCP buffer profile: set in a namespace, checked, read back, part of the id."""
from __future__ import annotations

import shlex

import pytest

from core.traces import TraceSet
from experiments.sprout.fig7 import SproutFig7
from kernel import tcp_buffers


class FakeHost:
    """A host whose /proc/sys/net/ipv4 is a dict; `refuse` keys keep their old value."""

    name = "nr000000s"

    def __init__(self, refuse: tuple[str, ...] = ()) -> None:
        self.values = {"tcp_rmem": "10240 87380 16777216", "tcp_wmem": "10240 87380 16777216",
                       "tcp_adv_win_scale": "1"}
        self.refuse = refuse

    def cmd(self, *args: str) -> str:
        words = shlex.split(" ".join(args))
        if words[0] == "sysctl":
            key, value = words[-1].split("=", 1)
            key = key.removeprefix("net.ipv4.")
            if key not in self.refuse:
                self.values[key] = value
            return ""
        assert words[0] == "cat"
        return self.values[words[1].rsplit("/", 1)[-1]].replace(" ", "\t") + "\n"


def test_linux_3_2_profile_is_set_and_read_back() -> None:
    host = FakeHost()
    tcp_buffers.apply(host, tcp_buffers.LINUX_3_2)
    assert tcp_buffers.read(host) == {"tcp_rmem": "4096 87380 4194304",
                                      "tcp_wmem": "4096 16384 4194304",
                                      "tcp_adv_win_scale": "2"}


def test_the_wide_start_profile_sets_only_the_receive_buffer() -> None:
    host = FakeHost()
    tcp_buffers.apply(host, tcp_buffers.WIDE_START)
    assert tcp_buffers.read(host) == {"tcp_rmem": "4096 33554432 33554432",
                                      "tcp_wmem": "10240 87380 16777216",
                                      "tcp_adv_win_scale": "1"}


def test_the_machine_profile_changes_nothing() -> None:
    host = FakeHost()
    before = dict(host.values)
    tcp_buffers.apply(host, tcp_buffers.MACHINE)
    assert host.values == before


def test_a_value_the_kernel_keeps_unchanged_fails_naming_it() -> None:
    with pytest.raises(tcp_buffers.TcpBuffersError, match="net.ipv4.tcp_wmem reads"):
        tcp_buffers.apply(FakeHost(refuse=("tcp_wmem",)), tcp_buffers.LINUX_3_2)


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(tcp_buffers.TcpBuffersError, match="unknown TCP buffer profile"):
        tcp_buffers.profile_of("linux-2.4")


def test_a_negative_scale_reads_as_a_number() -> None:
    host = FakeHost()
    host.values["tcp_adv_win_scale"] = "-2"
    assert tcp_buffers.read(host)["tcp_adv_win_scale"] == "-2"


def test_sprout_runs_pin_linux_3_2_by_default_and_the_profile_is_in_the_id(
        tmp_path) -> None:
    traces = TraceSet([tmp_path], tmp_path / "cache", manifest={})
    default = SproutFig7(traces).run_spec("cubic", "a.down", "a.up", quick=False, trial=1)
    machine = SproutFig7(traces, {"tcp_buffers": "machine"}).run_spec(
        "cubic", "a.down", "a.up", quick=False, trial=1)
    assert default.option(tcp_buffers.OPTION) == tcp_buffers.LINUX_3_2
    assert machine.option(tcp_buffers.OPTION) == tcp_buffers.MACHINE
    assert default.run_id() != machine.run_id()
