"""Whether a run's CPUs were there: the probe's stats (core/cpu_probe.py), and whether the
emulator's worst stall coincided with a CPU's.

The emulator's stats say how late its latest departure was and when it was due (its
lateness files, where a run keeps them, list every departure); the probe's list every
wake-up of a CPU's thread that came more than `report_us` late, on the same clock. The
emulator's worst departure was held from its scheduled time to its scheduled time plus its
lateness; if a CPU's probe thread was held over that same interval, the CPU was not there
(the hypervisor, or the CPU stuck in the kernel), and the stall was the machine's. If no CPU
was held, the emulator's own process was (a lock, a page fault, a blocking call): ours to
find.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from analysis.fidelity import MAX_LATENESS_P99_US
from core.cpu_probe import STATS
from core.results import read_json

LATENESS_FILES = ("data-lateness.txt", "ack-lateness.txt")
# A worst departure within the emulator's limit for a late run needs no explaining.
EXPLAIN_ABOVE_US = MAX_LATENESS_P99_US

COLUMNS = ("cpu_probe", "cpu_stall_max_us", "cpu_stall_cpu", "cpu_stalls",
           "emulator_worst_stall_us", "emulator_worst_stall_at_us", "cpu_held_during_it_us")


def cpu_probe_metrics(run_dir: Path, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The COLUMNS for one run. `cpu_probe`: False when the run has no probe stats (made
    before the probe existed, or the probe failed: meta.json's cpu_probe_error says why);
    then every other column is None."""
    out: dict[str, Any] = dict.fromkeys(COLUMNS)
    try:
        stats = read_json(run_dir / STATS)
    except (OSError, ValueError):
        out["cpu_probe"] = False
        return out
    out["cpu_probe"] = True
    cpus = stats.get("cpus") or {}
    worst = max(cpus, key=lambda c: (cpus[c].get("lateness_us") or {}).get("max") or 0,
                default=None)
    if worst is not None:
        out["cpu_stall_max_us"] = (cpus[worst].get("lateness_us") or {}).get("max")
        out["cpu_stall_cpu"] = int(worst)
    stalls = stall_list(stats.get("stalls") or {})
    out["cpu_stalls"] = len(stalls) + int(stats.get("stalls_dropped") or 0)
    held = emulator_worst_stall(run_dir, meta.get("link") or {})
    if held is not None:
        at, late = held
        out["emulator_worst_stall_us"], out["emulator_worst_stall_at_us"] = late, at
        if late > EXPLAIN_ABOVE_US:
            out["cpu_held_during_it_us"] = cpu_held_during(stalls, at, at + late)
    return out


def cpus_were_missing(worst_stall_us: int | None, cpu_held_us: int | None) -> bool | None:
    """Whether the emulator's worst stall was the machine's: a CPU held over at least half of
    it. None when it cannot be said (no probe on record, or no stall placed)."""
    if worst_stall_us is None or cpu_held_us is None:
        return None
    return cpu_held_us >= worst_stall_us / 2


def stall_list(stalls: dict[str, list[int]]) -> list[dict[str, int]]:
    """The probe's parallel arrays (cpu, deadline_us, late_us) as one dict per stall."""
    columns = ("cpu", "deadline_us", "late_us")
    return [dict(zip(columns, row)) for row in zip(*(stalls.get(c) or [] for c in columns))]


def emulator_worst_stall(run_dir: Path,
                         link: Mapping[str, Any]) -> tuple[int, int] | None:
    """(scheduled_us, lateness_us) of the emulator's latest departure, over both directions:
    from its stats (`link`: link-stats.json, whose lateness records when its maximum was
    due), else from its lateness files (runs made before it did); None without either."""
    worst: tuple[int, int] | None = None
    for direction in ("a2b", "b2a"):
        lateness = (link.get(direction) or {}).get("lateness_us") or {}
        if lateness.get("max_at_us") is None or lateness.get("max") is None:
            continue
        late = int(lateness["max"])
        if worst is None or late > worst[1]:
            worst = (int(lateness["max_at_us"]), late)
    if worst is not None:
        return worst
    for name in LATENESS_FILES:
        path = run_dir / name
        if not path.is_file() or path.stat().st_size == 0:
            continue
        table = np.loadtxt(path, dtype=np.int64, ndmin=2, usecols=(0, 1))
        if table.size == 0:
            continue
        i = int(np.argmax(table[:, 1]))
        if worst is None or int(table[i, 1]) > worst[1]:
            worst = (int(table[i, 0]), int(table[i, 1]))
    return worst


def cpu_held_during(stalls: list[dict[str, Any]], start_us: int, end_us: int) -> int:
    """The longest time any CPU's probe thread was held within [start_us, end_us] (0: no CPU
    was held beyond the probe's report limit then)."""
    longest = 0
    for s in stalls:
        held_from = int(s["deadline_us"])
        held_to = held_from + int(s["late_us"])
        overlap = min(held_to, end_us) - max(held_from, start_us)
        longest = max(longest, overlap)
    return longest
