"""`repro doctor`'s per-experiment kernel lines, on the fake machine of test_congestion_control."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.commands.doctor_kernel import Capability, experiment_capabilities, kernel_needs
from core.runspec import RunSpec, make_params
from kernel.congestion_control import RECOVERY_VARIANTS, CongestionControlResolver
from tests.unit.test_congestion_control import BTF_FIXTURES, FakeMachine, FakeSystem

ARGS2 = (BTF_FIXTURES / "cong_control_args2.raw").read_text()
ARGS4 = (BTF_FIXTURES / "cong_control_args4.raw").read_text()
RECOVERIES = ("prr-kernel", "rate-halving", "rfc3517", "prr-bpf")


@dataclass
class FakeExperiment:
    name: str
    specs: list[RunSpec]

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return self.specs


def _spec(scheme: str, **options: Any) -> RunSpec:
    return RunSpec(experiment="x", scheme=scheme, data_trace="rate:10", ack_trace="rate:10",
                   options=make_params(**options))


PRR = FakeExperiment("prr-fig2", [_spec("cubic", recovery=r) for r in RECOVERIES])
SPROUT = FakeExperiment("sprout-fig7", [_spec(s) for s in ("sprout", "cubic", "cubic-codel",
                                                           "bbr", "vegas", "hybla")])
CONTEST = FakeExperiment("contest", [_spec("fixed-window")])


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    src, obj = tmp_path / "src", tmp_path / "obj"
    src.mkdir()
    obj.mkdir()
    (src / "recovery.bpf.c").write_text("/* recoveries */\n")
    (src / "vegas.bpf.c").write_text("/* vegas */\n")
    (obj / "vegas.bpf.o").write_bytes(b"\x7fELF")  # hybla is not built
    for variant in RECOVERY_VARIANTS:
        for args in (2, 4):
            (obj / f"{variant}.args{args}.bpf.o").write_bytes(b"\x7fELF")
    return {"src": src, "obj": obj, "state": tmp_path / "state"}


def _capabilities(layout: dict[str, Path], machine: FakeMachine, *experiments: Any,
                  **kw: Any) -> dict[str, Capability]:
    resolver = CongestionControlResolver(state_dir=layout["state"], bpf_dir=layout["obj"],
                                         source_dir=layout["src"],
                                         system=FakeSystem(machine, 1000, **kw))
    return {c.experiment: c for c in experiment_capabilities(experiments, resolver)}


def test_needs_come_from_the_matrix() -> None:
    needs = kernel_needs(PRR.specs + SPROUT.specs + CONTEST.specs)
    assert needs.tcp == {"cubic", "bbr", "vegas", "hybla"}  # cubic-codel is cubic
    assert needs.recoveries == {("cubic", r) for r in RECOVERIES}


@pytest.mark.parametrize("btf, words", [
    (ARGS4, "cong_control with 4 arguments (Linux >= 6.10 shape), eBPF struct_ops"),
    (ARGS2, "cong_control with 2 arguments (Linux < 6.10 shape), eBPF struct_ops")])
def test_prr_names_the_shape_of_this_kernel(layout: dict[str, Path], btf: str,
                                            words: str) -> None:
    prr = _capabilities(layout, FakeMachine(btf_raw=btf), PRR)["prr-fig2"]
    assert prr.ok, prr
    assert "TCP cubic: built in" in prr.detail
    assert f"recoveries prr-bpf, rate-halving, rfc3517: {words}" in prr.detail
    assert "prr-kernel: the kernel's own PRR" in prr.detail


@pytest.mark.parametrize("kw, missing", [
    ({"bpftool": False}, "bpftool is not installed"),
    ({"btf": False}, "without CONFIG_DEBUG_INFO_BTF"),
    ({"euid": 1000}, "needs root")])
def test_prr_names_the_missing_piece(layout: dict[str, Path], kw: dict[str, Any],
                                     missing: str) -> None:
    prr = _capabilities(layout, FakeMachine(), PRR, **kw)["prr-fig2"]
    assert not prr.ok and missing in prr.detail and prr.fix


def test_without_struct_ops_nothing_comes_from_ebpf(layout: dict[str, Path]) -> None:
    btf = "\n".join(line for line in ARGS4.splitlines()
                    if "bpf_struct_ops_tcp_congestion_ops" not in line)
    found = _capabilities(layout, FakeMachine(btf_raw=btf), PRR, SPROUT)
    prr, sprout = found["prr-fig2"], found["sprout-fig7"]
    assert not prr.ok and "cannot register a TCP congestion control from eBPF" in prr.detail
    assert not sprout.ok and "TCP vegas unavailable (eBPF: the kernel's BTF has no " \
        "bpf_struct_ops_tcp_congestion_ops" in sprout.detail


def test_prr_on_an_unknown_shape(layout: dict[str, Path]) -> None:
    btf = (BTF_FIXTURES / "cong_control_args5.raw").read_text()
    prr = _capabilities(layout, FakeMachine(btf_raw=btf), PRR)["prr-fig2"]
    assert not prr.ok and "u64" in prr.detail and "match neither shape" in prr.detail


def test_sprout_lists_each_variants_provider_and_why_not(layout: dict[str, Path]) -> None:
    machine = FakeMachine(installable_modules={"tcp_bbr"}, available=["reno", "cubic"])
    sprout = _capabilities(layout, machine, SPROUT)["sprout-fig7"]
    assert not sprout.ok
    assert "TCP cubic: built in" in sprout.detail
    assert "TCP bbr: kernel module" in sprout.detail
    assert "TCP vegas: eBPF struct_ops" in sprout.detail
    assert "TCP hybla unavailable (" in sprout.detail and "hybla.bpf.o not built" in sprout.detail
    assert "tcp_hybla" in sprout.fix


def test_datagram_experiments_need_nothing_of_tcp(layout: dict[str, Path]) -> None:
    contest = _capabilities(layout, FakeMachine(), CONTEST)["contest"]
    assert contest.ok and "needs nothing" in contest.detail


def test_an_experiment_that_cannot_plan_does_not_hide_the_others(
        layout: dict[str, Path]) -> None:
    class Broken(FakeExperiment):
        def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
            raise RuntimeError("no controller installed")
    found = _capabilities(layout, FakeMachine(), Broken("broken", []), CONTEST)
    assert not found["broken"].ok and "no controller installed" in found["broken"].detail
    assert found["contest"].ok
