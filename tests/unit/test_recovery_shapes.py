"""The eBPF recoveries' object is chosen by the kernel's BTF: cong_control's 2 or 4 arguments.

The BTF texts are excerpts of `bpftool btf dump file /sys/kernel/btf/vmlinux
format raw` kept in tests/fixtures/btf/ (Linux 6.18 with 4 arguments, Debian
12's Linux 6.1 with 2, and a made-up fifth argument). The resolver runs on the
fake machine of test_congestion_control.py, whose bpftool prints them.
"""
from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from kernel.cong_control_shape import (BtfShapeError, parse_cong_control_shape, parse_kernel_cc_btf)
from kernel.congestion_control import (RECOVERY_VARIANTS, CcUnavailable, CongestionControlResolver)
from kernel.recovery import RecoveryRequest, provide_recovery
from tests.unit.test_congestion_control import (BTF_FIXTURES, FakeMachine, FakeSystem,
                                                bpftool_calls)

ARGS4 = (BTF_FIXTURES / "cong_control_args4.raw").read_text()
ARGS2 = (BTF_FIXTURES / "cong_control_args2.raw").read_text()
ARGS5 = (BTF_FIXTURES / "cong_control_args5.raw").read_text()


# ------------------------------------------------------------- the BTF text

def test_the_4_argument_member_of_linux_6_10_and_later() -> None:
    kernel = parse_kernel_cc_btf(ARGS4)
    assert kernel.struct_ops
    shape = kernel.shape
    assert shape.args == 4 and shape.cwnd_stamp_writable
    assert shape.signature == "cong_control(struct sock *, u32, int, const struct rate_sample *)"
    assert shape.label == "cong_control with 4 arguments (Linux >= 6.10 shape)"
    assert shape.object_suffix == ".args4"


def test_the_2_argument_member_before_linux_6_10() -> None:
    kernel = parse_kernel_cc_btf(ARGS2)
    assert kernel.struct_ops
    shape = kernel.shape
    assert shape.args == 2 and not shape.cwnd_stamp_writable
    assert shape.signature == "cong_control(struct sock *, const struct rate_sample *)"
    assert shape.label == "cong_control with 2 arguments (Linux < 6.10 shape)"
    assert shape.object_suffix == ".args2"


def test_an_unknown_shape_is_refused_naming_what_was_found() -> None:
    with pytest.raises(BtfShapeError) as e:
        parse_cong_control_shape(ARGS5)
    message = str(e.value)
    assert "cong_control(struct sock *, u32, int, u64, const struct rate_sample *)" in message
    assert "5 argument(s)" in message and "Linux >= 6.10" in message


def test_four_arguments_of_other_types_are_not_the_known_shape() -> None:
    # int in place of u32: same count, different parameters; vlen alone would accept it.
    text = ARGS4.replace("\t'(anon)' type_id=35\n\t'(anon)' type_id=21\n",
                         "\t'(anon)' type_id=21\n\t'(anon)' type_id=1457\n")
    with pytest.raises(BtfShapeError, match=r"cong_control\(struct sock \*, int, struct sock \*"):
        parse_cong_control_shape(text)


def test_a_dump_without_the_struct_says_so() -> None:
    unrelated = "[1] INT 'long unsigned int' size=8 bits_offset=0 nr_bits=64 encoding=(none)\n"
    with pytest.raises(BtfShapeError, match="no struct tcp_congestion_ops"):
        parse_cong_control_shape(unrelated)
    # A forward declaration of the name is not the struct.
    with pytest.raises(BtfShapeError, match="no struct tcp_congestion_ops"):
        parse_cong_control_shape(unrelated + "[2] FWD 'tcp_congestion_ops' fwd_kind=struct\n")


def test_a_member_that_is_no_function_pointer_is_named() -> None:
    text = ARGS4.replace("'cong_control' type_id=14606", "'cong_control' type_id=35")
    with pytest.raises(BtfShapeError, match=r"not a function pointer .*\[35\] is u32"):
        parse_cong_control_shape(text)


def test_a_struct_without_the_member_lists_its_members() -> None:
    text = ARGS4.replace("\t'cong_control' type_id=14606 bits_offset=448\n", "")
    with pytest.raises(BtfShapeError, match="no member cong_control .*undo_cwnd"):
        parse_cong_control_shape(text)


def test_a_kernel_without_struct_ops_is_told_apart() -> None:
    text = "\n".join(line for line in ARGS4.splitlines()
                     if "bpf_struct_ops_tcp_congestion_ops" not in line)
    kernel = parse_kernel_cc_btf(text)
    assert not kernel.struct_ops and kernel.shape.args == 4


# --------------------------------------------------- the resolver's choice

@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    src, obj = tmp_path / "src", tmp_path / "obj"
    src.mkdir()
    obj.mkdir()
    (src / "recovery.bpf.c").write_text("/* recoveries */\n")
    for variant in RECOVERY_VARIANTS:
        for args in (2, 4):
            (obj / f"{variant}.args{args}.bpf.o").write_bytes(b"\x7fELF")
    return {"src": src, "obj": obj, "state": tmp_path / "state"}


def make(layout: dict[str, Path], machine: FakeMachine, **kw: bool
         ) -> CongestionControlResolver:
    return CongestionControlResolver(state_dir=layout["state"], bpf_dir=layout["obj"],
                                     source_dir=layout["src"],
                                     system=FakeSystem(machine, 1000, **kw))


@pytest.mark.parametrize("btf, args, stamp", [(ARGS4, 4, True), (ARGS2, 2, False)])
def test_the_object_of_the_kernels_shape_is_registered_and_recorded(
        layout: dict[str, Path], btf: str, args: int, stamp: bool) -> None:
    machine = FakeMachine(btf_raw=btf)
    with provide_recovery(make(layout, machine), RecoveryRequest("cubic", "rate-halving")) as s:
        [register] = bpftool_calls(machine, "register")
        assert Path(register[3]).name == f"rh_cubic.args{args}.bpf.o"
        facts = s.facts()
    assert facts["recovery_cong_control_args"] == args
    assert facts["recovery_cwnd_stamp_written"] is stamp
    assert facts["recovery_cong_control"].startswith(f"cong_control with {args} arguments")
    assert facts["recovery_cong_control_signature"].startswith("cong_control(struct sock *")
    assert f"rh_cubic.args{args}.bpf.o" in facts["cc_detail"]


def test_the_version_number_is_never_asked(layout: dict[str, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that calls itself 6.8 but whose BTF has the 4 arguments gets the 4."""
    def refuse(*_: object) -> None:
        raise AssertionError("the kernel's version was read")
    monkeypatch.setattr(platform, "release", refuse)
    monkeypatch.setattr(os, "uname", refuse)
    machine = FakeMachine(btf_raw=ARGS4)
    with provide_recovery(make(layout, machine), RecoveryRequest("reno", "prr-bpf")):
        assert Path(bpftool_calls(machine, "register")[0][3]).name == "prr_reno.args4.bpf.o"


def test_an_unknown_shape_registers_nothing_and_says_what_it_found(
        layout: dict[str, Path]) -> None:
    machine = FakeMachine(btf_raw=ARGS5)
    with pytest.raises(CcUnavailable) as e:
        with provide_recovery(make(layout, machine), RecoveryRequest("cubic", "rfc3517")):
            pass
    assert "cong_control(struct sock *, u32, int, u64, const struct rate_sample *)" in str(e.value)
    assert not bpftool_calls(machine, "register")


def test_the_kernels_btf_is_read_once_per_resolver(layout: dict[str, Path]) -> None:
    machine = FakeMachine(btf_raw=ARGS2)
    resolver = make(layout, machine)
    for request in (RecoveryRequest("cubic", "rfc3517"), RecoveryRequest("reno", "prr-bpf")):
        with provide_recovery(resolver, request):
            pass
    assert len([c for c in machine.commands if c[:3] == ("bpftool", "btf", "dump")]) == 1


def test_a_missing_object_of_the_kernels_shape_is_named(layout: dict[str, Path]) -> None:
    (layout["obj"] / "3517_reno.args2.bpf.o").unlink()
    with pytest.raises(CcUnavailable, match=r"3517_reno\.args2\.bpf\.o not built"):
        with provide_recovery(make(layout, FakeMachine(btf_raw=ARGS2)),
                              RecoveryRequest("reno", "rfc3517")):
            pass


@pytest.mark.parametrize("kw, missing", [({"bpftool": False}, "bpftool is not installed"),
                                         ({"btf": False}, "CONFIG_DEBUG_INFO_BTF")])
def test_without_bpftool_or_btf_the_shape_cannot_be_chosen(
        layout: dict[str, Path], kw: dict[str, bool], missing: str) -> None:
    with pytest.raises(CcUnavailable, match=missing) as e:
        with provide_recovery(make(layout, FakeMachine(), **kw),
                              RecoveryRequest("cubic", "prr-bpf")):
            pass
    assert "cannot choose which build of recovery.bpf.c" in str(e.value)


def test_without_struct_ops_the_recoveries_are_unavailable(layout: dict[str, Path]) -> None:
    text = "\n".join(line for line in ARGS4.splitlines()
                     if "bpf_struct_ops_tcp_congestion_ops" not in line)
    with pytest.raises(CcUnavailable, match="no bpf_struct_ops_tcp_congestion_ops"):
        with provide_recovery(make(layout, FakeMachine(btf_raw=text)),
                              RecoveryRequest("cubic", "prr-bpf")):
            pass


def test_the_kernels_own_prr_needs_no_btf(layout: dict[str, Path]) -> None:
    machine = FakeMachine(btf_raw=ARGS5)
    with provide_recovery(make(layout, machine), RecoveryRequest("cubic", "prr-kernel")) as s:
        assert s.facts()["recovery_cong_control_args"] is None
    assert not [c for c in machine.commands if c[:2] == ("bpftool", "btf")]
