"""`repro clean` kills only processes recorded by a dead run, and only if they still match."""
from __future__ import annotations

import subprocess
import sys

from core.active_runs import ActiveRun, clean_leftovers


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
