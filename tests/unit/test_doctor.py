"""The doctor names each failure and its fix, and fails only on what is required."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.commands import doctor
from app.commands import doctor_namespaces as namespace_checks
from core.paths import ProjectPaths
from core.traces import TraceSet
from runkinds.registry import KINDS
from runkinds.switched_path import doctor as switched_path_doctor


def _fake_run(returncode: int, stdout: str = "", stderr: str = ""):
    def run(args, timeout=10):
        return subprocess.CompletedProcess(args, returncode, stdout, stderr)
    return run


def test_ovs_down_is_reported_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(switched_path_doctor.shutil, "which", lambda cmd: f"/usr/bin/{cmd}")
    monkeypatch.setattr(switched_path_doctor, "_run",
                        _fake_run(1, stderr="database connection failed"))
    check = switched_path_doctor.check_ovs()
    assert not check.ok and not check.required
    assert "not running" in check.detail and "start-ovs.sh" in check.fix
    assert check.line().startswith("[warn] Open vSwitch")


def test_ovs_running_reports_its_datapath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(switched_path_doctor.shutil, "which", lambda cmd: f"/usr/bin/{cmd}")
    monkeypatch.setattr(switched_path_doctor, "_run", _fake_run(0, stdout="ovs_version"))
    check = switched_path_doctor.check_ovs()
    assert check.ok and "datapath" in check.detail


def test_the_switched_path_kind_asks_the_doctor_for_its_switch_and_controllers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(switched_path_doctor, "_run", _fake_run(1, stderr="no"))
    names = [c.name for c in KINDS["openflow-switch"].doctor_checks(ProjectPaths())]
    assert names == ["Open vSwitch", "OpenFlow controller pox", "OpenFlow controller os-ken"]
    assert all(not c.required for c in KINDS["openflow-switch"].doctor_checks(ProjectPaths()))


def test_not_root_is_a_required_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.os, "geteuid", lambda: 1000)
    [check] = doctor.check_root()
    assert not check.ok and check.required and "sudo" in check.fix
    assert check.line().startswith("[FAIL] root")


def test_missing_python_module_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_run", _fake_run(1, stderr="ModuleNotFoundError"))
    checks = {c.name: c for c in doctor.check_python()}
    assert not checks["python mininet"].ok and checks["python mininet"].required
    assert "cannot import mininet" in checks["python mininet"].detail
    assert "python os_ken" not in checks  # the switched path's check (its controller)


def test_a_papers_own_module_is_checked_and_names_the_paper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The contest's server needs aiohttp; missing, it is a warning naming the paper and its
    command, not a failure of the suite."""
    monkeypatch.setattr(doctor, "_run", _fake_run(1, stderr="ModuleNotFoundError"))
    traces = TraceSet([], Path("/nonexistent"), manifest={})
    checks = {c.name: c for c in doctor.check_experiment_modules(traces)}
    aiohttp = checks["python aiohttp"]
    assert not aiohttp.ok and not aiohttp.required
    assert aiohttp.detail == "cannot import aiohttp (contest: repro contest serve)"
    assert "python aiohttp" not in {c.name for c in doctor.check_python()}


def test_exit_status_follows_required_checks(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    failing = doctor.Check("thing", False, "broken", "fix it")
    optional = doctor.Check("extra", False, "absent", "add it", required=False)
    for group in ("check_root", "check_python", "check_commands", "check_kernel"):
        monkeypatch.setattr(doctor, group, lambda: [])
    monkeypatch.setattr(doctor, "check_native", lambda paths: [optional])
    monkeypatch.setattr(doctor, "check_congestion_controls", lambda paths: [])
    monkeypatch.setattr(doctor, "check_experiment_kernels", lambda paths, traces: [])
    monkeypatch.setattr(doctor, "check_experiment_modules", lambda traces: [])
    monkeypatch.setattr(doctor, "check_traces", lambda traces, names: [])
    monkeypatch.setattr(doctor, "required_traces", lambda traces: set())
    monkeypatch.setattr(doctor, "check_kinds_and_schemes", lambda paths: [])
    monkeypatch.setattr(namespace_checks, "check_namespaces", lambda paths: [])
    assert doctor.run_doctor(None, None) == 0  # type: ignore[arg-type]
    monkeypatch.setattr(doctor, "check_native", lambda paths: [failing, optional])
    assert doctor.run_doctor(None, None) == 1  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "[FAIL] thing: broken" in out and "fix: fix it" in out
