"""Real OVS networks under each controller: the planned segments, and only they, are dropped.

Each test builds sender -- Open vSwitch -- TraceLink (10 Mbit/s, 20 ms each way) -- receiver,
sends one 64 KB TCP transfer, and reads tcpdump captures on the sender and the receiver with
dpkt: the original segments missing at the receiver must be exactly the plan's, no
retransmission may be lost, the controller's own log must agree, and no original segment may
arrive after a higher one (the barrier before the direct flow).
"""
from __future__ import annotations

import json
import statistics
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from controllers.drop_plan import DropPlan
from controllers.launcher import choose_controller
from core.active_runs import ActiveRun
from core.paths import REPO_ROOT, ProjectPaths
from tests.integration.helpers.prr_transfer import run_one
from runkinds.switched_path.network import SwitchedPath, SwitchedPathConfig
from topologies.guarded_network import new_prefix

# Run as a module from the checkout, so it imports the project and its sibling helper
# as packages.
HELPER = "tests.integration.helpers.prr_one"


def _available(controller: str) -> bool:
    try:
        choose_controller(controller)
    except Exception:
        return False
    return True


# A packet the switch sent up to the controller before the direct flow entry was in place
# can reach the receiver after packets that took the direct path (once in four full test
# passes on the 2-core VM). prr-fig2 leaves such a run out as invalid: it does not set up
# this test's scenario, so it is redone; the test still fails when no attempt sets it up.
OVERTAKEN = "may have been overtaken"
SCENARIO_ATTEMPTS = 2


@pytest.fixture
def active(paths: ProjectPaths) -> Iterator[ActiveRun]:
    run = ActiveRun(paths.state_dir / "active", new_prefix())
    yield run
    run.close()


@pytest.mark.parametrize("controller", ["pox", "os-ken"])
@pytest.mark.parametrize("plan", ["light", "heavy", "base"])
def test_exactly_the_planned_segments_are_dropped(controller: str, plan: str, tmp_path: Path,
                                                  active: ActiveRun) -> None:
    if not _available(controller):
        pytest.fail(f"{controller} is not available here: {controller} must be installed "
                    "for this test (./setup/install.sh --pox-dir DIR for POX)")
    cfg = SwitchedPathConfig(plan=DropPlan.parse(plan), controller=controller)
    for attempt in range(1, SCENARIO_ATTEMPTS + 1):
        out = tmp_path / f"attempt{attempt}"
        out.mkdir()
        with SwitchedPath(cfg, log_dir=out, active=active) as path:
            r = run_one(path, out)
        if not (r["problems"] and all(OVERTAKEN in p for p in r["problems"])):
            break
    assert r["received"] == 65536
    assert r["lost"] == list(cfg.plan.segments), r
    assert r["lost_retransmissions"] == 0, r
    assert r["log_dropped"] == list(cfg.plan.segments)
    assert r["problems"] == []
    assert r["reordered"] == [], r
    assert r["describe"]["controller"]["kind"] == controller
    before, after = statistics.median(r["ping_before"]), statistics.median(r["ping_after"])
    seconds = r["transfer"]["reply_s"] - r["transfer"]["started_s"]
    print(f"{controller} {plan}: transfer {seconds:.3f} s; ping median "
          f"through the controller {before:.2f} ms, direct {after:.2f} ms "
          f"(+{before - after:.2f} ms); datapath {r['describe']['datapath']}; "
          f"late segments {r['late_segments']}")
    sysctls = json.loads((out / "sysctls.json").read_text())
    for host in ("sender", "receiver"):
        assert sysctls[host]["net.ipv4.tcp_early_retrans"] == "0"
        assert sysctls[host]["net.ipv4.tcp_sack"] == "1"
        assert "net.ipv4.tcp_recovery" in sysctls[host]


def test_two_runs_side_by_side_never_collide(tmp_path: Path) -> None:
    runs = [("os-ken", "light"), ("pox" if _available("pox") else "os-ken", "heavy")]
    procs = [subprocess.Popen(["/usr/bin/python3", "-m", HELPER, ctl, plan,
                               str(tmp_path / f"run{i}")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
             for i, (ctl, plan) in enumerate(runs)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    for (ctl, plan), r in zip(runs, results):
        assert r["lost"] == list(DropPlan.parse(plan).segments), r
        assert r["problems"] == [] and r["received"] == 65536
    assert results[0]["describe"]["bridge"] != results[1]["describe"]["bridge"]
    assert results[0]["port"] != results[1]["port"]
