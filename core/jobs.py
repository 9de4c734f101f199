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

# `./repro bench concurrency --max-jobs 14` on the reference machine (a 2-core VM like the
# CI's), three times, each level decided by two attempts alike, noise allowance capped at 10%:
# the first chose 13 (9 and 14 failed, on Cubic's 95% delay and a datagram scheme's throughput,
# by 0.3-1 point over their bounds); the third held every level to 14. The second, whose six
# runs alone saw only one of Vegas's two outcomes, failed 7 levels from 2 up, each on Vegas's
# throughput (13 and 14 on Cubic's 95% delay too); judged against the first two benchmarks'
# twelve runs alone it chose 13 too. So 13: the level all three hold.
# Levels of 8 and more run as one batch started together (docs/benchmarks.md).
# Decided again with a window-limited sender in the set (warm-up A's W = 50, whose throughput
# only its noise alone may move): levels 4, 6, 8, 10 and 13, two attempts each, on an idle
# VM; every level held, W = 50's throughput moving -0.05% to +0.03% (its spread alone 0.03%),
# the emulator's p99 lateness at most 206 us (one 728 us at 4). The end hosts' p99 reaction
# rose from 0.14-0.18 ms alone to 0.46-0.53 ms at 13 (max 0.65), under the 2 ms limit in
# every run (docs/benchmarks.md, "The window-limited sender").
REFERENCE_JOBS = 13
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
