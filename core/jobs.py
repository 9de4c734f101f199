"""How many runs side by side when `--jobs` is not given.

This machine's own measurement (`./repro bench concurrency` saves it) when
there is one for its CPU count; otherwise the level measured on the
project's reference machine, scaled by CPU count. The plan printed before a
run says which, so nobody has to guess why a level was chosen.
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

# `./repro bench concurrency` on the reference machine (a 2-core VM like the CI's): four runs
# that tried levels up to 8 chose 8, 7, 7 and 8; one that tried up to 14 held every level up
# to 10 but 4 (Cubic's 95% delay moved 2.5-3%, near its 2% bound) and failed 11-14,
# every time on Sprout's throughput (moved 6-20%), the scheme most sensitive to timing.
# Criteria: no metric beyond 2% or its run-to-run noise, emulator p99 lateness under 2 ms
# (docs/benchmarks.md).
REFERENCE_JOBS = 10
REFERENCE_CPUS = 2
FILE_NAME = "concurrency.json"


@dataclass(frozen=True)
class DefaultJobs:
    jobs: int
    source: str  # for the plan line: where the number comes from


def measured_path(state_dir: Path) -> Path:
    return state_dir / FILE_NAME


def default_jobs(state_dir: Path, cpus: int | None = None) -> DefaultJobs:
    cpus = cpus or os.cpu_count() or 1
    record = _read(measured_path(state_dir))
    if record is not None and record.get("cpus") == cpus:
        return DefaultJobs(int(record["chosen_jobs"]),
                           f"measured on this machine by `./repro bench concurrency` "
                           f"({record.get('measured', 'date unknown')})")
    jobs = max(1, REFERENCE_JOBS * cpus // REFERENCE_CPUS)
    why = ("as measured on the project's 2-core reference VM" if cpus == REFERENCE_CPUS else
           f"{REFERENCE_JOBS} per {REFERENCE_CPUS} CPUs as measured on the project's "
           f"reference VM, for {cpus} CPUs")
    if record is not None:
        why += f" (this machine's measurement was for {record.get('cpus')} CPUs)"
    return DefaultJobs(jobs, f"{why}; `./repro bench concurrency` measures this machine")


def save_measured(state_dir: Path, chosen_jobs: int, details: dict) -> Path:
    path = measured_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"chosen_jobs": chosen_jobs, "cpus": os.cpu_count() or 1,
              "measured": time.strftime("%Y-%m-%d %H:%M"), **details}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
    tmp.replace(path)
    return path


def _read(path: Path) -> dict | None:
    try:
        record = json.loads(path.read_text())
        int(record["chosen_jobs"])
        return record
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as e:
        log.warning("%s is unreadable (%s); using the reference default", path, e)
        return None
