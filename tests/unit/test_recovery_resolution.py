"""Fast-recovery requests onto congestion controls, and their eBPF registration (fake machine)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from core.runspec import RunSpec
from kernel.congestion_control import (RECOVERY_VARIANTS, CcUnavailable, CongestionControlResolver)
from kernel.recovery import (RecoveryMismatch, RecoveryRequest, provide_recovery)
from schemes.registry import SchemeParameterError, accepted_params, make_scheme
from tests.unit.test_congestion_control import FakeMachine, FakeSystem, bpftool_calls


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    src, obj = tmp_path / "src", tmp_path / "obj"
    src.mkdir()
    obj.mkdir()
    (src / "recovery.bpf.c").write_text("/* recoveries */\n")
    for variant in RECOVERY_VARIANTS:
        for args in (2, 4):  # both cong_control shapes; the fake kernel's BTF has 4
            (obj / f"{variant}.args{args}.bpf.o").write_bytes(b"\x7fELF")
    return {"src": src, "obj": obj, "state": tmp_path / "state"}


def make(layout: dict[str, Path], machine: FakeMachine) -> CongestionControlResolver:
    return CongestionControlResolver(state_dir=layout["state"], bpf_dir=layout["obj"],
                                     source_dir=layout["src"], system=FakeSystem(machine, 1000))


@pytest.mark.parametrize("cc, recovery, kernel_name, impl", [
    ("cubic", "prr-kernel", "cubic", "kernel"),
    ("reno", "prr-kernel", "reno", "kernel"),
    ("cubic", "rate-halving", "bpf_rh_cubic", "ebpf"),
    ("reno", "rate-halving", "bpf_rh_reno", "ebpf"),
    ("cubic", "rfc3517", "bpf_3517_cubic", "ebpf"),
    ("reno", "rfc3517", "bpf_3517_reno", "ebpf"),
    ("cubic", "prr-bpf", "bpf_prr_cubic", "ebpf"),
    ("reno", "prr-bpf", "bpf_prr_reno", "ebpf"),
])
def test_each_request_names_its_congestion_control(cc: str, recovery: str, kernel_name: str,
                                                   impl: str) -> None:
    request = RecoveryRequest(cc, recovery)
    assert request.kernel_name == kernel_name and request.impl == impl
    assert len(kernel_name) <= 15  # TCP_CA_NAME_MAX with its NUL


@pytest.mark.parametrize("cc, recovery", [("bbr", "rate-halving"), ("cubic", "fack"),
                                          ("cubic", "")])
def test_unknown_base_or_recovery_is_refused(cc: str, recovery: str) -> None:
    with pytest.raises(ValueError):
        RecoveryRequest(cc, recovery)


def test_ebpf_recovery_is_registered_with_the_shared_source_hash(
        layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with provide_recovery(make(layout, machine), RecoveryRequest("cubic", "rate-halving")) as s:
        assert s.kernel_name == "bpf_rh_cubic" and "bpf_rh_cubic" in machine.available
        facts = s.facts()
        assert facts["cc_provider"] == "ebpf" and facts["recovery"] == "rate-halving"
        assert facts["cc_source_sha256"] == hashlib.sha256(
            (layout["src"] / "recovery.bpf.c").read_bytes()).hexdigest()
        assert bpftool_calls(machine, "register")[0][3].endswith("rh_cubic.args4.bpf.o")
        s.check_socket("bpf_rh_cubic", "getsockopt")
        with pytest.raises(RecoveryMismatch, match="reported 'cubic'"):
            s.check_socket("cubic", "getsockopt")
    assert "bpf_rh_cubic" not in machine.available


def test_kernel_prr_uses_the_plain_builtin_cc_and_never_ebpf(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with provide_recovery(make(layout, machine), RecoveryRequest("reno", "prr-kernel")) as s:
        assert s.kernel_name == "reno" and s.resolution.provider == "builtin"
        assert s.facts()["recovery_impl"] == "kernel"
        with pytest.raises(RecoveryMismatch):
            s.check_socket("bpf_prr_reno", "ss")
    assert not bpftool_calls(machine, "register")


def test_recovery_variant_never_looks_for_a_kernel_module(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with make(layout, machine).resolve("prr_cubic") as r:
        assert r.kernel_name == "bpf_prr_cubic" and r.provider == "ebpf"
    assert not [c for c in machine.commands if c[0] == "modprobe"]


def test_recovery_variant_with_impl_kernel_says_why(layout: dict[str, Path]) -> None:
    with pytest.raises(CcUnavailable, match="kernel has no code of that name"):
        with make(layout, FakeMachine()).resolve("3517_reno", impl="kernel"):
            pass


def test_missing_recovery_object_names_the_build(layout: dict[str, Path]) -> None:
    (layout["obj"] / "prr_reno.args4.bpf.o").unlink()
    with pytest.raises(CcUnavailable, match="prr_reno.args4.bpf.o not built"):
        with provide_recovery(make(layout, FakeMachine()), RecoveryRequest("reno", "prr-bpf")):
            pass


def test_verifier_rejection_of_a_recovery_carries_its_log(layout: dict[str, Path]) -> None:
    machine = FakeMachine(register_failure="-- BEGIN PROG LOAD LOG --\nR1 invalid mem access\n"
                          "-- END PROG LOAD LOG --\nlibbpf: failed to load object")
    with pytest.raises(CcUnavailable) as e:
        with provide_recovery(make(layout, machine), RecoveryRequest("cubic", "rfc3517")):
            pass
    assert "bpftool struct_ops register" in str(e.value)
    assert "R1 invalid mem access" in str(e.value)
    assert not (layout["state"] / "bpf_3517_cubic").exists()


def test_registration_of_a_killed_run_is_cleaned(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    killed = CongestionControlResolver(state_dir=layout["state"], bpf_dir=layout["obj"],
                                       source_dir=layout["src"],
                                       system=FakeSystem(machine, 2000))
    held = killed.resolve("rh_reno")
    held.__enter__()  # the run dies inside its with-block: never released
    del machine.processes[2000]
    assert "bpf_rh_reno" in machine.available
    report = make(layout, machine).cleanup_stale()
    assert len(report) == 1 and "unregistered bpf_rh_reno" in report[0]
    assert "bpf_rh_reno" not in machine.available


def test_registry_takes_a_recovery_for_reno_and_cubic_only() -> None:
    assert "recovery" in accepted_params("cubic") and "recovery" in accepted_params("reno")
    assert "recovery" not in accepted_params("bbr")


def test_registry_refuses_recovery_with_cc_impl(tmp_path: Path) -> None:
    from core.paths import ProjectPaths
    spec = RunSpec(experiment="x", scheme="cubic", data_trace="t", ack_trace="t",
                   params=(("cc_impl", "kernel"), ("recovery", "rfc3517")))
    with pytest.raises(SchemeParameterError, match="drop --cc-impl"):
        make_scheme(spec, ProjectPaths())


def test_registry_refuses_an_unknown_recovery() -> None:
    from core.paths import ProjectPaths
    spec = RunSpec(experiment="x", scheme="cubic", data_trace="t", ack_trace="t",
                   params=(("recovery", "fack"),))
    with pytest.raises(SchemeParameterError,
                       match="--recovery: 'fack' is not one of prr-kernel"):
        make_scheme(spec, ProjectPaths())


def test_tcp_scheme_with_a_recovery_records_it(layout: dict[str, Path]) -> None:
    from contextlib import ExitStack

    from schemes.tcp import TcpScheme
    machine = FakeMachine()
    scheme = TcpScheme("cubic", make(layout, machine),
                       recovery=RecoveryRequest("cubic", "prr-bpf"))
    with ExitStack() as stack:
        facts = scheme.prepare(stack)
        assert facts["recovery"] == "prr-bpf" and facts["cc_kernel_name"] == "bpf_prr_cubic"
        assert facts["recovery_impl"].startswith("ebpf") and facts["cc_provider"] == "ebpf"
        assert scheme.resolution is not None and scheme.resolution.kernel_name == "bpf_prr_cubic"
        assert scheme.describe()["recovery"] == "prr-bpf"
        assert scheme.describe()["cc_impl"] == "ebpf"
    assert "bpf_prr_cubic" not in machine.available


def test_registry_builds_a_tcp_scheme_for_a_recovery() -> None:
    from core.paths import ProjectPaths
    from schemes.tcp import TcpScheme
    spec = RunSpec(experiment="x", scheme="reno", data_trace="t", ack_trace="t",
                   params=(("recovery", "rate-halving"),))
    scheme = make_scheme(spec, ProjectPaths())
    assert isinstance(scheme, TcpScheme)
    assert scheme.recovery == RecoveryRequest("reno", "rate-halving")
