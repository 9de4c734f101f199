"""The doctor names each failure and its fix, and fails only on what is required."""
from __future__ import annotations

import subprocess

import pytest

from app.commands import doctor
from app.commands import doctor_namespaces as namespace_checks


def _fake_run(returncode: int, stdout: str = "", stderr: str = ""):
    def run(args, timeout=10):
        return subprocess.CompletedProcess(args, returncode, stdout, stderr)
    return run


def test_ovs_down_is_reported_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.shutil, "which", lambda cmd: f"/usr/bin/{cmd}")
    monkeypatch.setattr(doctor, "_run", _fake_run(1, stderr="database connection failed"))
    [check] = doctor.check_ovs()
    assert not check.ok and not check.required
    assert "not running" in check.detail and "start-ovs.sh" in check.fix
    assert check.line().startswith("[warn] Open vSwitch")


def test_ovs_running_reports_its_datapath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.shutil, "which", lambda cmd: f"/usr/bin/{cmd}")
    monkeypatch.setattr(doctor, "_run", _fake_run(0, stdout="ovs_version"))
    [check] = doctor.check_ovs()
    assert check.ok and "datapath" in check.detail


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
    assert not checks["python os_ken"].required  # only the PRR controller needs it


def test_exit_status_follows_required_checks(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    failing = doctor.Check("thing", False, "broken", "fix it")
    optional = doctor.Check("extra", False, "absent", "add it", required=False)
    for group in ("check_root", "check_python", "check_commands", "check_kernel", "check_ovs"):
        monkeypatch.setattr(doctor, group, lambda: [])
    monkeypatch.setattr(doctor, "check_native", lambda paths: [optional])
    monkeypatch.setattr(doctor, "check_congestion_controls", lambda paths: [])
    monkeypatch.setattr(doctor, "check_experiment_kernels", lambda paths, traces: [])
    monkeypatch.setattr(doctor, "check_traces", lambda traces, names: [])
    monkeypatch.setattr(doctor, "required_traces", lambda traces: set())
    monkeypatch.setattr(doctor, "check_contest_box", lambda paths: [])
    monkeypatch.setattr(namespace_checks, "check_namespaces", lambda paths: [])
    assert doctor.run_doctor(None, None) == 0  # type: ignore[arg-type]
    monkeypatch.setattr(doctor, "check_native", lambda paths: [failing, optional])
    assert doctor.run_doctor(None, None) == 1  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "[FAIL] thing: broken" in out and "fix: fix it" in out
