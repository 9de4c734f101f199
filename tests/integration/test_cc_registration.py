"""Real eBPF registrations of the congestion-control resolver: need root and a built native/.

The resolver's logic is unit-tested against a fake machine in
tests/unit/test_congestion_control.py; these register the real objects.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.paths import ProjectPaths
from kernel.congestion_control import RECOVERY_VARIANTS, CcUnavailable, CongestionControlResolver

REPO_ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------- real registrations

def _real_bpf_dir() -> Path:
    return Path(os.environ.get("NETREPRO_BPF_DIR", REPO_ROOT / "build" / "native" / "bpf"))


def _require_root_and_objects(variant: str = "vegas") -> None:
    if os.geteuid() != 0:
        pytest.skip("registering struct_ops needs root")
    # The recoveries are built once per shape of the kernel's cong_control.
    names = ([f"{variant}.args{n}" for n in (2, 4)] if variant in RECOVERY_VARIANTS
             else [variant])
    for name in names:
        obj = _real_bpf_dir() / f"{name}.bpf.o"
        assert obj.is_file(), (f"{obj} is not built: build native/ "
                               "(or set NETREPRO_BPF_DIR to a build's bpf/ folder)")
    # A run of this project that was killed leaves its registration until the
    # next run or `./repro clean` removes it; do what `./repro clean` does.
    CongestionControlResolver(state_dir=ProjectPaths().cc_state_dir,
                              bpf_dir=_real_bpf_dir()).cleanup_stale()


def _kernel_list() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


@pytest.mark.integration
def test_real_vegas_registers_and_unregisters(tmp_path: Path) -> None:
    _require_root_and_objects()
    assert "bpf_vegas" not in _kernel_list(), "bpf_vegas is already registered by someone"
    resolver = CongestionControlResolver(state_dir=tmp_path / "cc", bpf_dir=_real_bpf_dir())
    with resolver.resolve("vegas", impl="ebpf") as r:
        assert r.kernel_name == "bpf_vegas"
        assert r.source_sha256 == hashlib.sha256(
            (REPO_ROOT / "native" / "bpf" / "vegas.bpf.c").read_bytes()).hexdigest()
        assert "bpf_vegas" in _kernel_list()
    assert "bpf_vegas" not in _kernel_list()


@pytest.mark.integration
@pytest.mark.parametrize("variant", ["vegas", "bic", "hybla", "dctcp", "rh_reno", "rh_cubic",
                                     "3517_reno", "3517_cubic", "prr_reno", "prr_cubic"])
def test_real_variant_passes_the_verifier(tmp_path: Path, variant: str) -> None:
    _require_root_and_objects(variant)
    assert f"bpf_{variant}" not in _kernel_list(), f"bpf_{variant} is already registered"
    resolver = CongestionControlResolver(state_dir=tmp_path / "cc", bpf_dir=_real_bpf_dir())
    with resolver.resolve(variant, impl="ebpf") as r:
        assert r.kernel_name in _kernel_list()
    assert r.kernel_name not in _kernel_list()


_HOLDER = """
import sys
from pathlib import Path
from kernel.congestion_control import CongestionControlResolver
resolver = CongestionControlResolver(state_dir=Path(sys.argv[1]), bpf_dir=Path(sys.argv[2]))
with resolver.resolve("vegas", impl="ebpf"):
    print("holding", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def _start_holder(state: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(state), str(_real_bpf_dir())],
                            cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
    return proc


def _finish_holder(proc: subprocess.Popen[str]) -> None:
    out, _ = proc.communicate("\n", timeout=30)
    assert proc.returncode == 0 and out.strip() == "released"


@pytest.mark.integration
def test_real_two_processes_share_until_the_second_leaves(tmp_path: Path) -> None:
    _require_root_and_objects()
    assert "bpf_vegas" not in _kernel_list(), "bpf_vegas is already registered by someone"
    first = _start_holder(tmp_path / "cc")
    try:
        second = _start_holder(tmp_path / "cc")
        try:
            _finish_holder(first)
            assert "bpf_vegas" in _kernel_list()
        finally:
            _finish_holder(second)
    finally:
        if first.poll() is None:
            first.kill()
    assert "bpf_vegas" not in _kernel_list()


@pytest.mark.integration
def test_real_killed_holder_is_cleaned(tmp_path: Path) -> None:
    _require_root_and_objects()
    assert "bpf_vegas" not in _kernel_list(), "bpf_vegas is already registered by someone"
    holder = _start_holder(tmp_path / "cc")
    holder.kill()
    holder.wait()
    assert "bpf_vegas" in _kernel_list()
    resolver = CongestionControlResolver(state_dir=tmp_path / "cc", bpf_dir=_real_bpf_dir())
    assert len(resolver.cleanup_stale()) == 1
    assert "bpf_vegas" not in _kernel_list()


_HOLDER_ON_SIGNAL = """
import re, sys
from pathlib import Path
from kernel.congestion_control import CongestionControlResolver
resolver = CongestionControlResolver(state_dir=Path(sys.argv[1]), bpf_dir=Path(sys.argv[2]))
print("ready", flush=True)
sys.stdin.readline()
with resolver.resolve("vegas", impl="ebpf") as r:
    print("holding", re.search(r"[(]id ([0-9]+)[)]", r.detail).group(1), flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def _bpf_vegas_ids() -> list[int]:
    shown = subprocess.run(["bpftool", "-j", "struct_ops", "show"], capture_output=True,
                           text=True, check=True).stdout
    return [int(e["id"]) for e in json.loads(shown or "[]") if e.get("name") == "bpf_vegas"]


@pytest.mark.integration
def test_real_two_processes_starting_at_once_share_one_registration(tmp_path: Path) -> None:
    _require_root_and_objects()
    assert "bpf_vegas" not in _kernel_list(), "bpf_vegas is already registered by someone"
    # Maps of an earlier, unregistered bpf_vegas linger while sockets still use them.
    lingering = set(_bpf_vegas_ids())
    procs = [subprocess.Popen([sys.executable, "-c", _HOLDER_ON_SIGNAL, str(tmp_path / "cc"),
                               str(_real_bpf_dir())], cwd=REPO_ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for proc in procs:  # both imported and waiting: the start is then simultaneous
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        ids = set()
        for proc in procs:
            assert proc.stdout is not None
            word, struct_ops_id = proc.stdout.readline().split()
            assert word == "holding"
            ids.add(int(struct_ops_id))
        assert len(ids) == 1 and set(_bpf_vegas_ids()) - lingering == ids, \
            "one registration, shared"
        for proc in procs:
            _finish_holder(proc)
        assert "bpf_vegas" not in _kernel_list(), "the last to leave unregisters"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # A failure above may have killed a holder mid-release: leave nothing registered.
        CongestionControlResolver(state_dir=tmp_path / "cc",
                                  bpf_dir=_real_bpf_dir()).cleanup_stale()


# The verifier refuses writes to tcp_sock fields other than the few it allows
# (snd_cwnd_clamp is read-only to BPF), whatever the kernel version.
_REJECTED_SOURCE = """
#include "tcp_ca_common.h"
char LICENSE[] SEC("license") = "GPL";
SEC("struct_ops")
void BPF_PROG(bad_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
    netrepro_tcp_sk(sk)->snd_cwnd_clamp = 10;
}
SEC("struct_ops")
__u32 BPF_PROG(bad_ssthresh, struct sock *sk) { return tcp_reno_ssthresh(sk); }
SEC("struct_ops")
__u32 BPF_PROG(bad_undo_cwnd, struct sock *sk) { return tcp_reno_undo_cwnd(sk); }
SEC(".struct_ops")
struct tcp_congestion_ops bpf_vegas = {
    .ssthresh = (void *)bad_ssthresh,
    .undo_cwnd = (void *)bad_undo_cwnd,
    .cong_avoid = (void *)bad_cong_avoid,
    .name = "bpf_vegas",
};
"""


@pytest.mark.integration
def test_real_verifier_rejection_shows_the_verifiers_message(tmp_path: Path) -> None:
    _require_root_and_objects()
    assert "bpf_vegas" not in _kernel_list(), "bpf_vegas is already registered by someone"
    vmlinux_h = _real_bpf_dir() / "vmlinux.h"
    assert vmlinux_h.is_file(), f"{vmlinux_h} is generated by the native build"
    src = tmp_path / "vegas.bpf.c"
    src.write_text(_REJECTED_SOURCE)
    subprocess.run(["clang", "-O2", "-g", "-target", "bpf", "-Wall", "-Werror",
                    f"-D__TARGET_ARCH_{_bpf_arch()}", "-I", str(_real_bpf_dir()),
                    "-I", str(REPO_ROOT / "native" / "bpf"), "-c", str(src),
                    "-o", str(tmp_path / "vegas.bpf.o")], check=True)
    resolver = CongestionControlResolver(state_dir=tmp_path / "cc", bpf_dir=tmp_path,
                                         source_dir=tmp_path)
    with pytest.raises(CcUnavailable) as e:
        with resolver.resolve("vegas", impl="ebpf"):
            pass
    message = str(e.value)
    assert "bpftool struct_ops register" in message
    assert "-- BEGIN PROG LOAD LOG --" in message and "no write support to tcp_sock" in message
    assert "bpf_vegas" not in _kernel_list()
    assert not (tmp_path / "cc" / "bpf_vegas").exists()


def _bpf_arch() -> str:
    machine = os.uname().machine
    return {"x86_64": "x86", "aarch64": "arm64"}.get(machine, machine)
