"""The CPU probe beside a run: starting and stopping it (a stand-in program), and lining its
stalls up with the emulator's worst one."""
from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from analysis.cpu_probe import cpu_held_during, cpu_probe_metrics, emulator_worst_stall
from app.publish.verify import RunVerdict, late_cause
from core import cpu_probe
from core.cpu_probe import STATS, CpuProbe, CpuProbeFailed

# A stand-in for netrepro-cpu-probe: writes --ready, then its stats on SIGTERM.
STAND_IN = """#!/bin/sh
stats=$2; ready=$4
trap 'echo "{\\"cpus\\": {}, \\"stalls\\": {}}" > "$stats"; exit 0' TERM
echo up > "$ready"
while true; do sleep 0.05; done
"""


def _program(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "probe"
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_started_and_stopped_it_leaves_its_stats(tmp_path: Path) -> None:
    probe = CpuProbe(_program(tmp_path, STAND_IN), tmp_path).start()
    probe.stop()
    assert json.loads((tmp_path / STATS).read_text()) == {"cpus": {}, "stalls": {}}
    probe.stop()  # once is enough; again does nothing


def test_one_that_exits_at_once_is_named_with_its_output(tmp_path: Path) -> None:
    program = _program(tmp_path, "#!/bin/sh\necho 'cannot pin to cpu 0' >&2\nexit 3\n")
    with pytest.raises(CpuProbeFailed, match="status 3 .*cannot pin to cpu 0"):
        CpuProbe(program, tmp_path).start()


def test_one_that_never_comes_up_is_stopped_at_its_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_probe, "READY_TIMEOUT_S", 0.3)
    program = _program(tmp_path, "#!/bin/sh\nwhile true; do sleep 0.05; done\n")
    with pytest.raises(CpuProbeFailed, match="not ready after"):
        CpuProbe(program, tmp_path).start()


def test_one_that_writes_no_stats_is_said(tmp_path: Path) -> None:
    # As the real one does, it creates the stats file empty at start; then never fills it.
    program = _program(tmp_path, "#!/bin/sh\n: > \"$2\"\necho up > \"$4\"\nexec sleep 30\n")
    probe = CpuProbe(program, tmp_path).start()
    with pytest.raises(CpuProbeFailed, match="no cpu-probe.json"):
        probe.stop()


def _run(tmp_path: Path, data: list[tuple[int, int]], stalls: list[dict] | None) -> Path:
    (tmp_path / "data-lateness.txt").write_text("".join(f"{a} {b}\n" for a, b in data))
    (tmp_path / "ack-lateness.txt").write_text("1000 5\n")
    if stalls is not None:
        # As netrepro-cpu-probe writes them: CPUs by number, the stalls as parallel arrays.
        (tmp_path / STATS).write_text(json.dumps({
            "cpus": {"0": {"lateness_us": {"max": 90}},
                     "1": {"lateness_us": {"max": max([90] + [s["late_us"]
                                                              for s in stalls])}}},
            "stalls": {key: [s[key] for s in stalls]
                       for key in ("cpu", "deadline_us", "late_us")},
            "stalls_dropped": 1}))
    return tmp_path


def test_a_cpu_held_over_the_emulator_s_worst_stall_is_found(tmp_path: Path) -> None:
    # The emulator's departure due at 10.000 s left 462 ms late; CPU 1's probe thread was held
    # from 9.990 s for 480 ms.
    run = _run(tmp_path, [(9_000_000, 40), (10_000_000, 462_000), (10_500_000, 30)],
               [{"cpu": 1, "deadline_us": 9_990_000, "late_us": 480_000}])
    m = cpu_probe_metrics(run, {})
    assert m["cpu_probe"] is True and (m["cpu_stall_max_us"], m["cpu_stall_cpu"]) == (480_000, 1)
    assert m["cpu_stalls"] == 2  # one listed, one dropped
    assert m["emulator_worst_stall_at_us"] == 10_000_000
    assert m["emulator_worst_stall_us"] == 462_000
    assert m["cpu_held_during_it_us"] == 462_000  # the whole of it
    verdict = RunVerdict("r", None, worst_stall_us=462_000,  # type: ignore[arg-type]
                         cpu_held_us=m["cpu_held_during_it_us"])
    assert "the machine's CPUs were not there" in late_cause(verdict)


def test_no_cpu_held_means_the_stall_was_the_process_s(tmp_path: Path) -> None:
    run = _run(tmp_path, [(10_000_000, 462_000)],
               [{"cpu": 0, "deadline_us": 20_000_000, "late_us": 3_000}])
    m = cpu_probe_metrics(run, {})
    assert m["cpu_held_during_it_us"] == 0
    verdict = RunVerdict("r", None, worst_stall_us=462_000, cpu_held_us=0)  # type: ignore
    assert "the CPUs were there" in late_cause(verdict)


def test_a_run_without_probe_stats_says_so(tmp_path: Path) -> None:
    m = cpu_probe_metrics(_run(tmp_path, [(10_000_000, 5_000)], None), {})
    assert m["cpu_probe"] is False and m["cpu_held_during_it_us"] is None
    verdict = RunVerdict("r", None, worst_stall_us=5_000, cpu_held_us=None)  # type: ignore
    assert "no CPU probe on record" in late_cause(verdict)


def test_a_worst_stall_under_the_limit_is_not_explained(tmp_path: Path) -> None:
    m = cpu_probe_metrics(_run(tmp_path, [(10_000_000, 1_500)], []), {})
    assert m["emulator_worst_stall_us"] == 1_500 and m["cpu_held_during_it_us"] is None


def test_worst_stall_over_both_directions_and_overlaps() -> None:
    assert cpu_held_during([{"deadline_us": 0, "late_us": 50}], 40, 100) == 10
    assert cpu_held_during([{"deadline_us": 200, "late_us": 50}], 40, 100) == 0
    assert cpu_held_during([], 40, 100) == 0


def test_no_lateness_file_no_worst_stall(tmp_path: Path) -> None:
    assert emulator_worst_stall(tmp_path, {}) is None


def test_the_emulator_s_stats_place_its_worst_stall_without_files(tmp_path: Path) -> None:
    """Runs that keep no lateness files (the contest's) are placed by link-stats.json."""
    link = {"a2b": {"lateness_us": {"max": 20_000, "max_at_us": 9_000_000}},
            "b2a": {"lateness_us": {"max": 462_000, "max_at_us": 10_000_000}}}
    assert emulator_worst_stall(tmp_path, link) == (10_000_000, 462_000)
    (tmp_path / STATS).write_text(json.dumps({
        "cpus": {"0": {"lateness_us": {"max": 470_000}}},
        "stalls": {"cpu": [0], "deadline_us": [9_995_000], "late_us": [470_000]}}))
    m = cpu_probe_metrics(tmp_path, {"link": link})
    assert m["cpu_held_during_it_us"] == 462_000
