"""The congestion-control resolver: providers, forcing, errors, shared eBPF registrations.

The resolver is driven through a fake machine (kernel list, modprobe, bpftool,
processes); tests/integration/test_cc_registration.py registers the real eBPF
objects (root and a built native/).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pytest

from core.paths import ProjectPaths
from schemes.tcp import TCP_VARIANTS
from kernel.congestion_control import (CcUnavailable, CommandResult, CongestionControlResolver,
                                       SystemLayer)

REPO_ROOT = Path(__file__).resolve().parents[2]
BTF_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "btf"


@dataclass
class FakeMachine:
    """What several processes share: the kernel's lists and the process table."""
    available: list[str] = field(default_factory=lambda: ["reno", "cubic", "bbr"])
    installable_modules: set[str] = field(default_factory=set)
    loaded_modules: set[str] = field(default_factory=set)
    struct_ops: dict[int, str] = field(default_factory=dict)
    # Unregistered maps that sockets still use: listed by bpftool, not in `available`.
    lingering: dict[int, str] = field(default_factory=dict)
    linger_on_unregister: bool = False
    next_id: int = 40
    processes: dict[int, str] = field(default_factory=dict)  # pid -> start time
    register_failure: str | None = None
    register_delay_s: float = 0.0
    commands: list[tuple[str, ...]] = field(default_factory=list)
    # What `bpftool btf dump file /sys/kernel/btf/vmlinux format raw` prints.
    btf_raw: str = field(default_factory=lambda: (BTF_FIXTURES / "cong_control_args4.raw")
                         .read_text())


class FakeSystem(SystemLayer):
    """One process's view of a FakeMachine."""

    def __init__(self, machine: FakeMachine, pid: int, euid: int = 0,
                 btf: bool = True, bpftool: bool = True) -> None:
        self.machine, self._pid, self._euid = machine, pid, euid
        self._btf, self._bpftool = btf, bpftool
        machine.processes.setdefault(pid, f"start-{pid}")

    def run(self, argv: Sequence[str]) -> CommandResult:
        m = self.machine
        argv = tuple(argv)
        m.commands.append(argv)
        if argv[0] == "modprobe":
            module = argv[-1]
            if module in m.installable_modules:
                m.loaded_modules.add(module)
                m.available.append(module.removeprefix("tcp_"))
                return CommandResult(argv, 0, "", "")
            return CommandResult(argv, 1, "", f"modprobe: FATAL: Module {module} not found "
                                 "in directory /lib/modules/6.18.0")
        if argv[0] == "modinfo":
            ok = argv[-1] in m.installable_modules
            return CommandResult(argv, 0 if ok else 1, "", "" if ok else "not found")
        if argv[:4] == ("bpftool", "btf", "dump", "file"):
            return CommandResult(argv, 0, m.btf_raw, "")
        if argv[:3] == ("bpftool", "-j", "struct_ops"):
            listing = [{"id": i, "name": n, "kernel_struct_ops": "tcp_congestion_ops"}
                       for i, n in sorted({**m.struct_ops, **m.lingering}.items())]
            return CommandResult(argv, 0, json.dumps(listing), "")
        if argv[:3] == ("bpftool", "struct_ops", "register"):
            time.sleep(m.register_delay_s)
            if m.register_failure is not None:
                return CommandResult(argv, 255, "", m.register_failure)
            name = "bpf_" + Path(argv[3]).name.split(".")[0]
            if name in m.available:
                return CommandResult(argv, 255, "", "libbpf: map 'x': failed: -17")
            m.struct_ops[m.next_id] = name
            m.available.append(name)
            m.next_id += 1
            return CommandResult(argv, 0, f"Registered tcp_congestion_ops {name} id "
                                 f"{m.next_id - 1}", "")
        if argv[:4] == ("bpftool", "struct_ops", "unregister", "id"):
            if int(argv[4]) in m.lingering:
                return CommandResult(argv, 255, "", "Error: failed to delete struct_ops "
                                     "map: Operation now in progress")
            name = m.struct_ops.pop(int(argv[4]), "")
            if not name:
                return CommandResult(argv, 255, "", "Error: can't get map by id")
            m.available.remove(name)
            if m.linger_on_unregister:
                m.lingering[int(argv[4])] = name
            return CommandResult(argv, 0, f"Unregistered tcp_congestion_ops {name}", "")
        raise AssertionError(f"unexpected command {argv}")

    def kernel_available(self) -> list[str]:
        return list(self.machine.available)

    def module_loaded(self, module: str) -> bool:
        return module in self.machine.loaded_modules

    def module_installed(self, module: str) -> bool:
        return module in self.machine.installable_modules

    def which(self, program: str) -> str | None:
        return f"/usr/sbin/{program}" if (program != "bpftool" or self._bpftool) else None

    def euid(self) -> int:
        return self._euid

    def btf_present(self) -> bool:
        return self._btf

    def pid(self) -> int:
        return self._pid

    def process_start_time(self, pid: int) -> str | None:
        return self.machine.processes.get(pid)


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    src, obj = tmp_path / "src", tmp_path / "obj"
    src.mkdir()
    obj.mkdir()
    for variant in ("vegas", "bic", "hybla", "dctcp"):
        (src / f"{variant}.bpf.c").write_text(f"/* {variant} source */\n")
        (obj / f"{variant}.bpf.o").write_bytes(b"\x7fELF")
    return {"src": src, "obj": obj, "state": tmp_path / "state"}


def make(layout: dict[str, Path], machine: FakeMachine, pid: int = 1000,
         **kw: Any) -> CongestionControlResolver:
    return CongestionControlResolver(state_dir=layout["state"], bpf_dir=layout["obj"],
                                     source_dir=layout["src"],
                                     system=FakeSystem(machine, pid, **kw))


def dead_holders_record(layout: dict[str, Path], kernel_name: str, state: str,
                        struct_ops_id: int | None) -> Path:
    """The record a killed run leaves: its state, and one holder whose process is gone."""
    record_dir = layout["state"] / kernel_name
    (record_dir / "holders").mkdir(parents=True)
    (record_dir / "record.json").write_text(json.dumps({
        "kernel_name": kernel_name, "state": state, "struct_ops_id": struct_ops_id,
        "source_sha256": "0" * 64, "object_path": "x"}))
    (record_dir / "holders" / "6001").write_text(json.dumps({"start_time": "s", "count": 1}))
    return record_dir


def bpftool_calls(machine: FakeMachine, verb: str) -> list[tuple[str, ...]]:
    return [c for c in machine.commands if c[:3] == ("bpftool", "struct_ops", verb)]


# ------------------------------------------------------------- kernel providers

def test_builtin_is_used_without_modprobe(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with make(layout, machine).resolve("cubic") as r:
        assert (r.requested, r.kernel_name, r.provider, r.source_sha256) == \
            ("cubic", "cubic", "builtin", None)
    assert machine.commands == []


def test_already_loaded_module_is_reported_as_module(layout: dict[str, Path]) -> None:
    machine = FakeMachine(available=["reno", "cubic", "htcp"], loaded_modules={"tcp_htcp"})
    with make(layout, machine).resolve("htcp") as r:
        assert r.provider == "module"


def test_module_is_loaded_with_modprobe_without_quiet(layout: dict[str, Path]) -> None:
    machine = FakeMachine(installable_modules={"tcp_vegas"})
    with make(layout, machine).resolve("vegas") as r:
        assert (r.kernel_name, r.provider) == ("vegas", "module")
    assert machine.commands == [("modprobe", "tcp_vegas")]
    assert bpftool_calls(machine, "register") == []


def test_failed_modprobe_shows_its_own_error(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with pytest.raises(CcUnavailable) as e:
        with make(layout, machine).resolve("vegas", impl="kernel"):
            pass
    assert "modprobe: FATAL: Module tcp_vegas not found" in str(e.value)
    assert "load the kernel module tcp_vegas" in str(e.value)
    assert bpftool_calls(machine, "register") == []


# --------------------------------------------------------------- eBPF provider

def test_ebpf_serves_what_the_kernel_lacks(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    expected_hash = hashlib.sha256(b"/* vegas source */\n").hexdigest()
    with make(layout, machine).resolve("vegas") as r:
        assert (r.requested, r.kernel_name, r.provider) == ("vegas", "bpf_vegas", "ebpf")
        assert r.source_sha256 == expected_hash
        assert "Module tcp_vegas not found" in r.detail  # why the module did not serve
        assert "bpf_vegas" in machine.available
        assert bpftool_calls(machine, "register") == [
            ("bpftool", "struct_ops", "register", str(layout["obj"] / "vegas.bpf.o"))]
    assert bpftool_calls(machine, "unregister") == [
        ("bpftool", "struct_ops", "unregister", "id", "40")]
    assert "bpf_vegas" not in machine.available
    assert not (layout["state"] / "bpf_vegas").exists()


def test_ebpf_is_unregistered_when_the_run_fails(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with pytest.raises(RuntimeError, match="run failed"):
        with make(layout, machine).resolve("bic"):
            raise RuntimeError("run failed")
    assert machine.struct_ops == {}


def test_impl_ebpf_skips_the_kernel(layout: dict[str, Path]) -> None:
    machine = FakeMachine(installable_modules={"tcp_hybla"})
    with make(layout, machine).resolve("hybla", impl="ebpf") as r:
        assert r.provider == "ebpf"
    assert not any(c[0] == "modprobe" for c in machine.commands)


def test_bpf_prefixed_request_means_ebpf(layout: dict[str, Path]) -> None:
    machine = FakeMachine(installable_modules={"tcp_vegas"})
    with make(layout, machine).resolve("bpf_vegas") as r:
        assert (r.requested, r.kernel_name, r.provider) == ("bpf_vegas", "bpf_vegas", "ebpf")
    with pytest.raises(CcUnavailable, match="impl='kernel'"):
        with make(layout, machine).resolve("bpf_vegas", impl="kernel"):
            pass


def test_impl_kernel_never_uses_ebpf(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with pytest.raises(CcUnavailable, match="allow netrepro's eBPF version"):
        with make(layout, machine).resolve("vegas", impl="kernel"):
            pass
    assert bpftool_calls(machine, "register") == []


def test_impl_ebpf_for_a_variant_we_do_not_implement(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with pytest.raises(CcUnavailable, match="no eBPF implementation of cubic"):
        with make(layout, machine).resolve("cubic", impl="ebpf"):
            pass


def test_bad_impl_is_a_programming_error(layout: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="impl must be one of"):
        with make(layout, FakeMachine()).resolve("cubic", impl="module"):
            pass


def test_unknown_name_lists_what_exists(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with pytest.raises(CcUnavailable) as e:
        with make(layout, machine).resolve("westwood"):
            pass
    message = str(e.value)
    assert "The kernel offers: reno cubic bbr." in message
    assert "vegas (ready), bic (ready), hybla (ready)" in message
    assert "Module tcp_westwood not found" in message
    assert "load the kernel module tcp_westwood" in message


def test_missing_object_says_how_to_build_it(layout: dict[str, Path]) -> None:
    (layout["obj"] / "vegas.bpf.o").unlink()
    with pytest.raises(CcUnavailable) as e:
        with make(layout, FakeMachine()).resolve("vegas"):
            pass
    assert f"build native/ so {layout['obj'] / 'vegas.bpf.o'} exists" in str(e.value)
    assert "load the kernel module tcp_vegas" in str(e.value)


def test_object_older_than_its_source_is_refused(layout: dict[str, Path]) -> None:
    obj = layout["obj"] / "hybla.bpf.o"
    os.utime(obj, (time.time() - 100, time.time() - 100))
    with pytest.raises(CcUnavailable, match="older than its source"):
        with make(layout, FakeMachine()).resolve("hybla", impl="ebpf"):
            pass


@pytest.mark.parametrize("kwargs, expected", [
    ({"euid": 1000}, "needs root (effective uid is 1000)"),
    ({"btf": False}, "/sys/kernel/btf/vmlinux is missing"),
    ({"bpftool": False}, "bpftool is not installed"),
])
def test_bpf_prerequisites_are_named(layout: dict[str, Path], kwargs: dict[str, object],
                                     expected: str) -> None:
    machine = FakeMachine()
    with pytest.raises(CcUnavailable, match=expected.replace("(", r"\(").replace(")", r"\)")):
        with make(layout, machine, **kwargs).resolve("vegas"):  # type: ignore[arg-type]
            pass
    assert bpftool_calls(machine, "register") == []


def test_verifier_rejection_carries_bpftool_output(layout: dict[str, Path]) -> None:
    machine = FakeMachine(register_failure=(
        "libbpf: prog 'vegas_cong_avoid': BPF program load failed: Permission denied\n"
        "-- BEGIN PROG LOAD LOG --\nR1 invalid mem access 'scalar'\n-- END PROG LOAD LOG --"))
    with pytest.raises(CcUnavailable) as e:
        with make(layout, machine).resolve("vegas"):
            pass
    assert "R1 invalid mem access 'scalar'" in str(e.value)
    assert not (layout["state"] / "bpf_vegas").exists()  # no record of a failed attempt


def test_foreign_registration_is_neither_used_nor_removed(layout: dict[str, Path]) -> None:
    machine = FakeMachine(available=["reno", "cubic", "bpf_vegas"], struct_ops={7: "bpf_vegas"})
    resolver = make(layout, machine)
    with pytest.raises(CcUnavailable, match="has no record of it"):
        with resolver.resolve("vegas"):
            pass
    assert resolver.cleanup_stale() == []
    assert machine.struct_ops == {7: "bpf_vegas"}
    assert bpftool_calls(machine, "unregister") == []


# ----------------------------------------------- sharing between processes

def test_last_of_two_holders_unregisters(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    first, second = make(layout, machine, pid=1001), make(layout, machine, pid=1002)
    a = first.resolve("vegas")
    b = second.resolve("vegas")
    ra, rb = a.__enter__(), b.__enter__()
    assert ra.kernel_name == rb.kernel_name == "bpf_vegas"
    assert len(bpftool_calls(machine, "register")) == 1
    a.__exit__(None, None, None)
    assert machine.struct_ops == {40: "bpf_vegas"}  # the second holder still runs
    b.__exit__(None, None, None)
    assert machine.struct_ops == {}
    assert len(bpftool_calls(machine, "unregister")) == 1


def test_two_runs_starting_at_once_register_once(layout: dict[str, Path]) -> None:
    # Two processes (threads with their own resolver, lock file handle and PID) reach
    # resolve() together; the flock'ed state must let exactly one register.
    # bpftool takes a while to register, so a missing lock would let both register.
    machine = FakeMachine(register_delay_s=0.2)
    start, holding = threading.Barrier(2), threading.Barrier(2)
    seen: dict[int, str] = {}
    errors: list[BaseException] = []

    def run(pid: int) -> None:
        try:
            resolver = make(layout, machine, pid=pid)
            start.wait(timeout=10)
            with resolver.resolve("vegas") as r:
                seen[pid] = r.kernel_name
                holding.wait(timeout=10)  # both hold it at the same time
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            holding.abort()

    threads = [threading.Thread(target=run, args=(pid,)) for pid in (7001, 7002)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    assert seen == {7001: "bpf_vegas", 7002: "bpf_vegas"}
    assert len(bpftool_calls(machine, "register")) == 1
    assert len(bpftool_calls(machine, "unregister")) == 1
    assert machine.struct_ops == {}
    assert not (layout["state"] / "bpf_vegas").exists()


def test_one_process_may_hold_twice(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    resolver = make(layout, machine)
    with resolver.resolve("bic"):
        with resolver.resolve("bic"):
            pass
        assert machine.struct_ops == {40: "bpf_bic"}
    assert machine.struct_ops == {}


def test_stale_registration_of_a_dead_pid_is_cleaned(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    crashed = make(layout, machine, pid=2001).resolve("hybla")
    crashed.__enter__()  # never exited: the process is killed
    del machine.processes[2001]
    report = make(layout, machine, pid=2002).cleanup_stale()
    assert report == ["unregistered bpf_hybla (id 40); its 1 holder(s) had exited"]
    assert machine.struct_ops == {}
    assert not (layout["state"] / "bpf_hybla").exists()


def test_reused_pid_does_not_keep_a_registration_alive(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    # Keep the context manager referenced: collecting it would run its exit.
    crashed = make(layout, machine, pid=3001).resolve("vegas")
    crashed.__enter__()
    machine.processes[3001] = "a later process with the same pid"
    assert make(layout, machine, pid=3002).cleanup_stale() == [
        "unregistered bpf_vegas (id 40); its 1 holder(s) had exited"]
    assert machine.struct_ops == {}


def test_next_resolve_cleans_stale_and_registers_afresh(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    crashed = make(layout, machine, pid=4001).resolve("vegas")
    crashed.__enter__()
    del machine.processes[4001]
    with make(layout, machine, pid=4002).resolve("vegas") as r:
        assert machine.struct_ops == {41: "bpf_vegas"}
        assert "(id 41)" in r.detail
    assert bpftool_calls(machine, "unregister") == [
        ("bpftool", "struct_ops", "unregister", "id", "40"),
        ("bpftool", "struct_ops", "unregister", "id", "41")]


def test_live_holder_keeps_it_through_cleanup(layout: dict[str, Path]) -> None:
    machine = FakeMachine()
    with make(layout, machine, pid=5001).resolve("vegas"):
        assert make(layout, machine, pid=5002).cleanup_stale() == []
        assert machine.struct_ops == {40: "bpf_vegas"}


def test_crash_between_register_and_record_is_cleaned_by_name(layout: dict[str, Path]) -> None:
    machine = FakeMachine(struct_ops={12: "bpf_bic"}, available=["reno", "bpf_bic"])
    record_dir = dead_holders_record(layout, "bpf_bic", "registering", None)
    assert make(layout, machine, pid=6002).cleanup_stale() == [
        "unregistered bpf_bic (id 12); its 1 holder(s) had exited"]
    assert machine.struct_ops == {}
    assert not record_dir.exists()


def test_a_lingering_map_of_an_earlier_run_does_not_block_the_next(layout: dict[str, Path]) \
        -> None:
    # The first run's sockets outlive it (orphans of its torn-down namespace), so its
    # unregistered map stays in bpftool's list under the same name for a while.
    machine = FakeMachine(linger_on_unregister=True)
    with make(layout, machine, pid=7001).resolve("vegas"):
        pass
    assert machine.lingering == {40: "bpf_vegas"} and "bpf_vegas" not in machine.available
    with make(layout, machine, pid=7002).resolve("vegas") as r:
        assert r.kernel_name == "bpf_vegas" and machine.struct_ops == {41: "bpf_vegas"}
        record = json.loads((layout["state"] / "bpf_vegas" / "record.json").read_text())
        assert record["struct_ops_id"] == 41
    assert bpftool_calls(machine, "unregister")[-1] == (
        "bpftool", "struct_ops", "unregister", "id", "41")
    assert machine.struct_ops == {}


def test_a_record_whose_map_only_lingers_is_cleaned_without_unregistering(
        layout: dict[str, Path]) -> None:
    machine = FakeMachine(lingering={12: "bpf_bic"})
    record_dir = dead_holders_record(layout, "bpf_bic", "registered", 12)
    assert make(layout, machine, pid=6002).cleanup_stale() == [
        "bpf_bic was no longer registered; its 1 holder(s) had exited"]
    assert bpftool_calls(machine, "unregister") == []
    assert not record_dir.exists()


def test_crash_while_registering_beside_a_lingering_map_unregisters_the_live_one(
        layout: dict[str, Path]) -> None:
    machine = FakeMachine(struct_ops={13: "bpf_bic"}, lingering={12: "bpf_bic"},
                          available=["reno", "bpf_bic"])
    record_dir = dead_holders_record(layout, "bpf_bic", "registering", None)
    assert make(layout, machine, pid=6002).cleanup_stale() == [
        "unregistered bpf_bic (id 13); its 1 holder(s) had exited"]
    assert machine.struct_ops == {} and "bpf_bic" not in machine.available
    assert not record_dir.exists()


# ------------------------------------------------- records shared across checkouts

def _checkout(tmp_path: Path, name: str, source: str, machine: FakeMachine,
              pid: int) -> CongestionControlResolver:
    """The resolver of a checkout of its own (sources, objects) on the machine's shared /run,
    run by process `pid`."""
    paths = ProjectPaths(root=tmp_path / name, machine_state_override=tmp_path / "run")
    src, obj = paths.root / "native" / "bpf", paths.build_dir / "bpf"
    src.mkdir(parents=True)
    obj.mkdir(parents=True)
    (src / "vegas.bpf.c").write_text(source)
    (obj / "vegas.bpf.o").write_bytes(b"\x7fELF")
    resolver = CongestionControlResolver.for_project(paths)
    resolver.system = FakeSystem(machine, pid)
    return resolver


def test_every_checkout_reads_the_same_registration_records(tmp_path: Path) -> None:
    a = ProjectPaths(root=tmp_path / "a", machine_state_override=None)
    b = ProjectPaths(root=tmp_path / "b", machine_state_override=None)
    assert a.cc_state_dir == b.cc_state_dir == Path("/run/netrepro/cc")
    assert a.legacy_cc_state_dir != b.legacy_cc_state_dir


def test_a_registration_of_another_checkout_is_shared_and_says_whose(tmp_path: Path) -> None:
    machine = FakeMachine()
    first = _checkout(tmp_path, "a", "/* vegas, one version */\n", machine, 2001)
    second = _checkout(tmp_path, "b", "/* vegas, another version */\n", machine, 2002)
    with first.resolve("vegas") as ra:
        with second.resolve("vegas") as rb:
            # One registration: the second checkout's run uses it rather than refusing it...
            assert len(bpftool_calls(machine, "register")) == 1
            assert rb.kernel_name == "bpf_vegas"
            # ...and records the source that really serves it, the first checkout's.
            assert rb.source_sha256 == ra.source_sha256 == \
                hashlib.sha256(b"/* vegas, one version */\n").hexdigest()
            assert "registered from an earlier source" in rb.detail
        assert machine.struct_ops == {40: "bpf_vegas"}  # the first checkout's run holds it
    assert machine.struct_ops == {}


def test_clean_in_another_checkout_removes_a_killed_runs_registration(
        tmp_path: Path) -> None:
    machine = FakeMachine()
    killed = _checkout(tmp_path, "a", "/* vegas */\n", machine, 3001)
    # Kept referenced (collecting it would run its exit): the process was killed instead.
    held = killed.resolve("vegas")
    held.__enter__()
    del machine.processes[3001]
    other = _checkout(tmp_path, "b", "/* vegas */\n", machine, 3002)
    assert other.cleanup_stale() == ["unregistered bpf_vegas (id 40); its 1 holder(s) had "
                                     "exited"]
    assert machine.struct_ops == {}


def test_available_variants_reports_the_provider_per_variant(layout: dict[str, Path]) -> None:
    (layout["obj"] / "bic.bpf.o").unlink()
    machine = FakeMachine(installable_modules={"tcp_hybla"})
    assert make(layout, machine).available_variants(TCP_VARIANTS) == {
        "reno": "builtin", "cubic": "builtin", "bbr": "builtin",
        "vegas": "ebpf", "bic": None, "hybla": "module", "dctcp": "ebpf"}
    assert bpftool_calls(machine, "register") == [] and \
        not any(c[0] == "modprobe" for c in machine.commands)
