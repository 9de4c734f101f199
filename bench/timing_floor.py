"""The machine's floor under departure timing: how often a thread that never sleeps loses its
CPU for longer than 10% of a 100-Mbit/s departure gap (12 us).

`netrepro-cpu-probe --spin` reads the clock in a loop on every CPU for a few seconds and
counts each gap between two reads over the limit. An emulator that must send a packet at a
given microsecond is late by at least (gap - limit) whenever such a gap covers the moment, so
the share of time inside those excesses estimates the share of sends that cannot be on time,
and each late send spoils the gap before it and the one after: `gaps_within_estimate` =
1 - 2 x that share estimates how many of a backlogged link's departure gaps can be within 10%
of schedule on this machine, whatever the emulator does. The probe spins under SCHED_OTHER:
under SCHED_FIFO a thread that never sleeps loses 50 ms a second to the kernel's real-time
throttle (measured: 6.4% of the time beyond 12 us against 1.9-2.9%), which an emulator that
sleeps between sends never meets. SCHED_OTHER counts the kernel's own threads too, which a
real-time emulator would not yield to, so the estimate errs low: run it on an idle machine.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from core.paths import ProjectPaths

LIMIT_US = 12  # 10% of the 120.32-us gap of a full-size packet at 100 Mbit/s
SECONDS = 5.0
DEADLINE_MARGIN_S = 30.0


def floor_from_stats(stats: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Per CPU: gaps over the limit per second, the share of time beyond it, and the share of
    gaps within 10% that implies; the worst CPU's for the machine."""
    cpus: dict[str, Any] = {}
    for cpu, record in (stats.get("cpus") or {}).items():
        spin = record.get("spin") or {}
        excess_share = float(spin.get("excess_us", 0)) / (seconds * 1e6)
        cpus[cpu] = {"gaps_over_limit_per_s": float(spin.get("gaps_over_report", 0)) / seconds,
                     "excess_share": excess_share,
                     "gaps_within_estimate": max(0.0, 1.0 - 2.0 * excess_share),
                     "worst_gap_us": (record.get("lateness_us") or {}).get("max")}
    bound = min((c["gaps_within_estimate"] for c in cpus.values()), default=None)
    return {"limit_us": int(stats.get("report_us", LIMIT_US)), "seconds": seconds,
            "cpus": cpus, "gaps_within_estimate": bound}


def measure(paths: ProjectPaths, seconds: float = SECONDS) -> dict[str, Any]:
    """Runs the spinning probe for `seconds` and returns floor_from_stats's figures."""
    probe = paths.native_binary("probe", "netrepro-cpu-probe")
    with tempfile.TemporaryDirectory(prefix="netrepro-floor-") as tmp:
        stats_path = Path(tmp) / "floor.json"
        try:
            subprocess.run([str(probe), "--spin", "--priority", "0", "--report-us", str(LIMIT_US),
                            "--max-events", "0", "--duration-s", f"{seconds:g}",
                            "--stats", str(stats_path)],
                           check=True, capture_output=True, timeout=seconds + DEADLINE_MARGIN_S)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"{probe} --spin did not stop within "
                               f"{seconds + DEADLINE_MARGIN_S:g} s") from e
        except subprocess.CalledProcessError as e:
            tail = e.stderr.decode(errors="replace")[-500:]
            raise RuntimeError(f"{probe} --spin failed with status {e.returncode}: {tail}") from e
        return floor_from_stats(json.loads(stats_path.read_text()), seconds)


def describe(floor: dict[str, Any]) -> str:
    per_cpu = "; ".join(f"CPU {cpu}: {c['gaps_over_limit_per_s']:.0f}/s over "
                        f"{floor['limit_us']} us, {100 * c['excess_share']:.2f}% of the time "
                        "beyond it"
                        for cpu, c in sorted(floor["cpus"].items(), key=lambda kv: int(kv[0])))
    bound = floor["gaps_within_estimate"]
    return (f"{per_cpu}; so about {100 * bound:.1f}% of departure gaps can be within 10% at "
            "100 Mbit/s here" if bound is not None else per_cpu)
