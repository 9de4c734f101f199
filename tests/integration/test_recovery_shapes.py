"""The recoveries' two cong_control shapes on the running kernel (root, a built native/).

1. The kernel's BTF names one shape; that build of every recovery passes the
   verifier and the other build is refused by it, so the shapes really differ
   and choosing by BTF matters. Loading happens on a private bpffs and
   registers nothing (tests/integration/helpers/bpf_objects.py).
2. The 2-argument shape cannot be loaded on a kernel of the 4-argument shape,
   so its way of deriving the kernel's ACK flag (rc_flag_from_changes in
   native/bpf/recovery.bpf.c) is checked here through flag_check.bpf.o: rate
   halving on Reno with the kernel's flag, which also derives the flag as the
   2-argument shape does and counts the ACKs on which any decision the
   recoveries take from it (grow or not, rate halving's progress, PRR's extra
   segment, the ACK number) would differ. Each scenario runs one transfer over
   tests/integration/helpers/loss_path.py and must see no difference.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core.paths import ProjectPaths
from kernel.cong_control_shape import CongControlShape
from kernel.congestion_control import CongestionControlResolver
from tests.integration.helpers.bpf_objects import ScratchRegistration, verifier_load
from tests.integration.helpers.loss_path import SERVER_PORT, LossPath, loss_path

pytestmark = pytest.mark.integration

RECOVERY_OBJECTS = [f"{r}_{b}" for r in ("rh", "3517", "prr") for b in ("reno", "cubic")]
FLAG_CHECK_NAME = "bpf_flag_check"  # native/bpf/CMakeLists.txt; no run uses it
TRANSFER_BYTES = 300_000  # 208 segments of 1448 bytes
LAST_ORIGINAL = -(-TRANSFER_BYTES // 1448)
# rc_flag_check.mismatches[k] in native/bpf/recovery.bpf.c
CHECKS = ("ack", "may_raise", "data_acked", "forward_progress", "rh_progress", "prr_safe")


def _bpf_dir() -> Path:
    if os.geteuid() != 0:
        pytest.fail("loading eBPF needs root")
    for tool in ("bpftool", "unshare", "tc"):
        if shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin") is None:
            pytest.fail(f"{tool} is not installed")
    return ProjectPaths().build_dir / "bpf"


@pytest.fixture(scope="module")
def kernel_shape() -> CongControlShape:
    resolver = CongestionControlResolver.for_project(ProjectPaths())
    return resolver.kernel_cc_btf().shape


@pytest.mark.parametrize("name", RECOVERY_OBJECTS)
def test_the_verifier_takes_the_kernels_shape_and_refuses_the_other(
        kernel_shape: CongControlShape, name: str) -> None:
    bpf = _bpf_dir()
    other = 2 if kernel_shape.args == 4 else 4
    matching = verifier_load(bpf / f"{name}.args{kernel_shape.args}.bpf.o")
    refused = verifier_load(bpf / f"{name}.args{other}.bpf.o")
    assert matching.accepted, f"{name}.args{kernel_shape.args} was refused:\n{matching.log}"
    assert not refused.accepted, f"{name}.args{other} passed the verifier on a kernel whose " \
        f"BTF has {kernel_shape.signature}"
    assert "-- BEGIN PROG LOAD LOG --" in refused.log, \
        f"{name}.args{other} failed before the verifier:\n{refused.log}"
    if other == 2:
        # The 2-argument program reads its rate sample where the kernel passes the ACK number.
        assert "prog 'rc_cong_control': BPF program load failed" in refused.log, refused.log
        assert "invalid mem access 'scalar'" in refused.log, refused.log
    verdict = next((line for line in refused.log.splitlines()
                    if "invalid" in line or "no write support" in line or "doesn't have"
                    in line), "")
    print(f"{name}: args{kernel_shape.args} accepted, args{other} refused ({verdict.strip()})")


@dataclass(frozen=True)
class Scenario:
    drops: list[int]  # original data segments the dropper drops
    sysctls: dict[str, str] = field(default_factory=dict)  # the sender's, over loss_path's
    # Every data segment reaches the receiver several times (a tc mirred loop on its
    # ingress, which mirred's nesting limit ends): DSACKs, which the kernel finds dubious
    # (more DSACKed segments than it retransmitted) and does not flag.
    duplicate: bool = False
    recovery: bool = True  # the sender must enter CWR or Recovery


SCENARIOS = {
    "single loss": Scenario([11]),
    "burst loss": Scenario(list(range(11, 26))),
    "single loss without SACK": Scenario([11], {"net.ipv4.tcp_sack": "0"}),
    "tail loss, retransmission timeout": Scenario(
        list(range(LAST_ORIGINAL - 2, LAST_ORIGINAL + 1)), recovery=False),
    "every segment duplicated": Scenario([], duplicate=True, recovery=False),
}


def _duplicate_data(path: LossPath) -> None:
    # Ahead of the dropper (pref 1), and terminal: the dropper no longer sees the data.
    subprocess.run(["tc", "-n", path.receiver_ns, "filter", "add", "dev", path.receiver_dev,
                    "ingress", "pref", "1", "protocol", "ip", "u32", "match", "ip", "dport",
                    str(SERVER_PORT), "0xffff", "action", "mirred", "ingress", "mirror", "dev",
                    path.receiver_dev], check=True, capture_output=True, text=True, timeout=30)


def _flag_check(scenario: Scenario, tag: str) -> dict[str, Any]:
    bpf = _bpf_dir()
    registration = ScratchRegistration.register(bpf / "flag_check.bpf.o", FLAG_CHECK_NAME)
    try:
        with loss_path(bpf / "segment_dropper.bpf.o", tag=tag,
                       sender_sysctls=scenario.sysctls) as path:
            path.dropper.attach(SERVER_PORT, scenario.drops)
            if scenario.duplicate:
                _duplicate_data(path)
            used = path.run_transfer(FLAG_CHECK_NAME, 41000 + int(tag), TRANSFER_BYTES)
            stats = path.dropper.stats()
        assert used == FLAG_CHECK_NAME
        assert stats.dropped == len(scenario.drops), stats
        return registration.bss("rc_flag_check")
    finally:
        registration.unregister()


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_2_argument_flag_agrees_with_the_kernels(name: str) -> None:
    scenario = SCENARIOS[name]
    counts = _flag_check(scenario, tag=str(list(SCENARIOS).index(name) + 1))
    mismatches = dict(zip(CHECKS, counts["mismatches"]))
    print(f"{name}: {counts['acks']} ACKs to cong_control, {counts['in_reduction']} in "
          f"CWR/Recovery, {counts['una_advanced']} advancing snd_una, "
          f"{counts['dsack_dups_grew']} with DSACKed segments, {counts['dsacking']} of them "
          f"flagged; differences {mismatches}")
    assert counts["acks"] > 50
    if scenario.recovery:
        assert counts["in_reduction"] > 0, "the loss never put the sender in Recovery"
    if scenario.duplicate:
        assert counts["dsack_dups_grew"] > 0, "no DSACK came back"
    assert not any(mismatches.values()), \
        (f"{name}: the derived flag differs from the kernel's: {mismatches}; first: "
         f"kernel flag {counts['first_flag']:#x}, derived {counts['first_derived']:#x}, "
         f"checks {counts['first_kinds']:#x}")
