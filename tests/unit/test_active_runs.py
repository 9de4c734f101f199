"""`repro clean` kills only processes recorded by a dead run, and only if they still match."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.active_runs import ActiveRun, clean_leftovers
from core.processes import pid_alive


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_leftovers_of_a_dead_owner_are_killed(tmp_path) -> None:
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                               "nrtest-marker"])
    try:
        record = ActiveRun(tmp_path, "nrtest", owner=_dead_pid())
        record.add(victim.pid, "nrtest-marker")
        report = clean_leftovers(tmp_path)
        assert victim.wait(timeout=5) is not None
        assert any("killed" in line for line in report)
        assert not record.path.exists()
    finally:
        victim.kill()


def test_a_live_owner_is_left_alone(tmp_path) -> None:
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                               "nrtest-marker"])
    try:
        record = ActiveRun(tmp_path, "nrlive")  # owner: this test process, alive
        record.add(victim.pid, "nrtest-marker")
        assert clean_leftovers(tmp_path) == []
        assert victim.poll() is None
    finally:
        victim.kill()


def test_a_recycled_pid_is_never_killed(tmp_path) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = ActiveRun(tmp_path, "nrold", owner=_dead_pid())
        record.add(bystander.pid, "netrepro-link")  # cmdline no longer matches
        clean_leftovers(tmp_path)
        assert bystander.poll() is None
    finally:
        bystander.kill()


def test_bridges_of_a_dead_run_are_deleted_and_only_its_own(tmp_path) -> None:
    record = ActiveRun(tmp_path, "nrdead", owner=_dead_pid())
    record.add_bridge("nrdeadx")
    import json
    data = json.loads(record.path.read_text())
    data["bridges"].append("br-other")        # a record naming someone else's bridge
    record.path.write_text(json.dumps(data))
    deleted: list[str] = []

    def delete_bridge(name: str) -> bool:
        deleted.append(name)
        return True

    report = clean_leftovers(tmp_path, delete_bridge=delete_bridge)
    assert deleted == ["nrdeadx"]
    assert "deleted leftover OVS bridge nrdeadx of run nrdead" in report


def test_a_bridge_without_the_prefix_is_refused(tmp_path) -> None:
    import pytest
    with pytest.raises(ValueError, match="does not carry the run's prefix"):
        ActiveRun(tmp_path, "nrmine").add_bridge("s1")


def test_a_zombie_is_not_alive() -> None:
    """An exited child nobody has reaped yet (as an orphan waits for a slow init) is dead:
    `repro clean` and its tests must not take it for a survivor."""
    child = subprocess.Popen(["true"])
    try:
        for _ in range(100):  # until it has exited, still unreaped
            if Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the child never exited")
        assert Path(f"/proc/{child.pid}").exists()
        assert not pid_alive(child.pid)
    finally:
        child.wait()
    assert not pid_alive(child.pid)


def test_a_running_process_is_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
