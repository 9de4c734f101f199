"""Faults of the PRR path: each fails the run with its reason, never a loss-free result."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controllers import launcher
from controllers.drop_log import DropLog
from controllers.drop_plan import DropPlan
from controllers.launcher import ControllerError, ControllerUnavailable
from core.active_runs import ActiveRun
from core.paths import ProjectPaths
from tests.integration.helpers.prr_transfer import transfer
from runkinds.switched_path.network import OvsUnavailable, SwitchedPath, SwitchedPathConfig
from topologies.guarded_network import new_prefix


@pytest.fixture
def active(paths: ProjectPaths) -> Iterator[ActiveRun]:
    run = ActiveRun(paths.state_dir / "active", new_prefix())
    yield run
    run.close()


def bridge_exists(name: str) -> bool:
    return subprocess.run(["ovs-vsctl", "br-exists", name]).returncode == 0


def test_pox_asked_for_and_absent_fails_before_anything_is_built(
        tmp_path: Path, active: ActiveRun) -> None:
    bare = ProjectPaths(root=tmp_path / "checkout")
    cfg = SwitchedPathConfig(plan=DropPlan.parse("light"), controller="pox")
    path = SwitchedPath(cfg, log_dir=tmp_path / "run", active=active, paths=bare)
    with pytest.raises(ControllerUnavailable, match="POX was asked for but is not installed"):
        path.__enter__()
    assert not bridge_exists(path.bridge) and path.net is None


def test_ovs_down_names_the_fix(tmp_path: Path, active: ActiveRun,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    # ovs-vsctl finds no database here: what it sees when ovsdb-server is not running.
    monkeypatch.setenv("OVS_RUNDIR", str(tmp_path))
    cfg = SwitchedPathConfig(plan=DropPlan.parse("light"), controller="os-ken")
    fix = "Open vSwitch is not running .* start it with ./setup/start-ovs.sh"
    with pytest.raises(OvsUnavailable, match=fix):
        with SwitchedPath(cfg, log_dir=tmp_path / "run", active=active):
            pass


def test_a_controller_the_switch_never_connects_to(tmp_path: Path, active: ActiveRun,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Something listens on the controller's port but never speaks OpenFlow.
    mute = ("import socket, sys, time; s = socket.socket(); "
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
            "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(600)")
    monkeypatch.setattr(launcher.ControllerProcess, "command",
                        lambda self, port: ["/usr/bin/python3", "-c", mute, str(port)])
    cfg = SwitchedPathConfig(plan=DropPlan.parse("light"), controller="os-ken", ready_timeout_s=3)
    path = SwitchedPath(cfg, log_dir=tmp_path, active=active)
    with pytest.raises(ControllerError, match="the switch never connected to the os-ken "
                                              "controller at tcp:127.0.0.1:[0-9]+ within 3 s"):
        path.__enter__()
    assert not bridge_exists(path.bridge)
    assert path.controller is not None and path.controller.process is not None
    assert path.controller.process.poll() is not None  # the listener was stopped


@pytest.mark.parametrize("controller", ["os-ken", "pox"])
def test_a_controller_that_dies_mid_run_fails_the_transfer(controller: str, tmp_path: Path,
                                                           active: ActiveRun) -> None:
    if controller == "pox" and launcher.pox_install.installed() is None:
        pytest.fail("POX is not installed: ./setup/install.sh --pox-dir DIR")
    cfg = SwitchedPathConfig(plan=DropPlan.parse("base"), controller=controller)
    with SwitchedPath(cfg, log_dir=tmp_path, active=active) as path:
        assert path.controller is not None and path.controller.process is not None
        pid = path.controller.process.pid

        def kill_when_the_flow_starts() -> None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if DropLog.read(path.controller.log_path).first("flow"):  # type: ignore[union-attr]
                    os.killpg(pid, signal.SIGKILL)
                    return
                time.sleep(0.001)

        killer = threading.Thread(target=kill_when_the_flow_starts)
        killer.start()
        with pytest.raises(ControllerError, match=f"the {controller} controller died"):
            transfer(path, tmp_path, 65536, cfg.tcp_port, timeout_s=30)
        killer.join()
        # fail_mode=secure: with the controller gone, the flow did not get through.
        sent = tmp_path / "send.json"
        assert not sent.exists() or "error" in json.loads(sent.read_text())
        assert path.plan_problems() != []


def test_a_flow_the_controller_never_sees(tmp_path: Path, active: ActiveRun) -> None:
    cfg = SwitchedPathConfig(plan=DropPlan.parse("light"), controller="os-ken", tcp_port=5001)
    with SwitchedPath(cfg, log_dir=tmp_path, active=active) as path:
        transfer(path, tmp_path, 65536, 5002)        # another port: not the planned flow
        problems = path.plan_problems()
    assert problems == ["the controller never saw the flow's handshake (TCP to port 5001 "
                        "from the sender)"]


def test_a_drop_list_beyond_the_flow(tmp_path: Path, active: ActiveRun) -> None:
    cfg = SwitchedPathConfig(plan=DropPlan.parse("3,200"), controller="os-ken")
    with SwitchedPath(cfg, log_dir=tmp_path, active=active) as path:
        transfer(path, tmp_path, 65536, cfg.tcp_port)
        time.sleep(0.2)
        problems = path.plan_problems()
    segments = -(-65536 // 1448)   # MSS 1448: 1500 - IP, TCP and timestamp headers
    assert problems == [f"dropped segments [3], planned [3, 200]: the flow ended after {segments} "
                        "original segments, the plan names up to 200"]


def test_repro_clean_removes_a_killed_runs_bridge_and_controller(tmp_path: Path,
                                                                 paths: ProjectPaths) -> None:
    from core.active_runs import clean_leftovers
    prefix = new_prefix()
    script = (
        "import sys, time; from pathlib import Path; sys.path.insert(0, sys.argv[1])\n"
        "from controllers.drop_plan import DropPlan\n"
        "from core.active_runs import ActiveRun\n"
        "from runkinds.switched_path.network import SwitchedPath, SwitchedPathConfig\n"
        "active = ActiveRun(Path(sys.argv[2]), sys.argv[3])\n"
        "cfg = SwitchedPathConfig(plan=DropPlan.parse('light'), controller='os-ken')\n"
        "with SwitchedPath(cfg, log_dir=Path(sys.argv[4]), active=active):\n"
        "    print('up', flush=True); time.sleep(120)\n")
    run = subprocess.Popen(["/usr/bin/python3", "-c", script, str(paths.root),
                            str(paths.state_dir / "active"), prefix, str(tmp_path)],
                           stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None and run.stdout.readline().strip() == "up"
        assert bridge_exists(f"{prefix}x")
        controller_pid = next(int(pid) for pid, marker in
                              __import__("json").loads((paths.state_dir / "active" /
                                                        f"{prefix}.json").read_text())
                              ["processes"].items() if "osken" in marker)
        run.send_signal(signal.SIGKILL)   # the run dies without tearing anything down
        run.wait(timeout=10)
        report = clean_leftovers(paths.state_dir / "active")
    finally:
        run.kill()
    assert f"deleted leftover OVS bridge {prefix}x of run {prefix}" in report
    assert not bridge_exists(f"{prefix}x")
    time.sleep(0.5)
    assert not Path(f"/proc/{controller_pid}").exists() or \
        Path(f"/proc/{controller_pid}/status").read_text().find("zombie") >= 0
