"""The default --jobs: this machine's measurement when it has one, else the reference level."""
from __future__ import annotations

import json
from pathlib import Path

from core.jobs import REFERENCE_CPUS, REFERENCE_JOBS, default_jobs, measured_path, save_measured


def test_without_a_measurement_the_reference_level_scales_with_cpus(tmp_path: Path) -> None:
    same = default_jobs(tmp_path, cpus=REFERENCE_CPUS)
    assert same.jobs == REFERENCE_JOBS
    assert "2-core reference VM" in same.source and "bench concurrency" in same.source
    assert default_jobs(tmp_path, cpus=2 * REFERENCE_CPUS).jobs == 2 * REFERENCE_JOBS
    assert default_jobs(tmp_path, cpus=1).jobs == max(1, REFERENCE_JOBS // REFERENCE_CPUS)


def test_this_machines_measurement_wins(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("core.jobs.os.cpu_count", lambda: 2)
    save_measured(tmp_path, 3, {"seconds": 30})
    got = default_jobs(tmp_path, cpus=2)
    assert got.jobs == 3 and "measured on this machine" in got.source


def test_a_measurement_for_another_cpu_count_is_not_used(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("core.jobs.os.cpu_count", lambda: 8)
    save_measured(tmp_path, 12, {})
    got = default_jobs(tmp_path, cpus=2)
    assert got.jobs == REFERENCE_JOBS
    assert "this machine's measurement was for 8 CPUs" in got.source


def test_an_unreadable_measurement_falls_back_to_the_reference_and_says_so(
        tmp_path: Path, caplog) -> None:
    measured_path(tmp_path).write_text(json.dumps({"cpus": 2}))
    assert default_jobs(tmp_path, cpus=2).jobs == REFERENCE_JOBS
    assert "unreadable" in caplog.text
