"""Where two passes' machines and runs differ, from the runs' own records (meta.json,
re-derived metrics) and a bundle's manifest: kernel, distribution, Python, CPUs, the
packages the environment records, the code, which implementation served each congestion
control, the TCP receive buffer ceiling, how many runs ran side by side, the emulator's and
the end hosts' lateness, the CPU steal."""
from __future__ import annotations

import bisect
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from analysis.fidelity import LATE_RULE, emulator_late, worst_lateness_p99_us
from analysis.host_limits import receive_ceiling
from analysis.host_timing import hosts_late
from analysis.summary import RunRecord


@dataclass(frozen=True)
class Fact:
    name: str
    a: str
    b: str
    # A fact of the pass (its timing), not of the machine: two passes on one machine differ.
    of_the_pass: bool = False

    @property
    def differs(self) -> bool:
        """The values differ; how many runs said each does not count (a pass with a failed
        run more has the same machine)."""
        return _values(self.a) != _values(self.b)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "a": self.a, "b": self.b, "differs": self.differs,
                "of_the_pass": self.of_the_pass}


def _values(text: str) -> frozenset[str]:
    """The distinct values of a fact's text: 'x (3), y (2)' gives {x, y}."""
    return frozenset(re.sub(r" \(\d+\)$", "", part) for part in text.split(", "))


def _unique(records: Sequence[RunRecord]) -> list[RunRecord]:
    """Each run once (a run shared by two experiments is linked into both)."""
    seen: dict[str, RunRecord] = {}
    for r in records:
        seen.setdefault(r.path.name, r)
    return list(seen.values())


def _counted(values: Iterable[Any]) -> str:
    """'x' when every run says x; 'x (3), y (2)' otherwise; '-' when none says."""
    counts = Counter(str(v) for v in values if v not in (None, ""))
    if not counts:
        return "-"
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{v} ({n})" for v, n in counts.most_common())


def side_by_side(records: Sequence[RunRecord]) -> str:
    """How many runs were in flight together, from each run's start and wall time: the most
    at once, and the median at a run's start."""
    spans = sorted((float(r.meta["started"]), float(r.meta["started"]) +
                    float(r.meta["wall_time_s"])) for r in records
                   if r.meta.get("started") is not None and r.meta.get("wall_time_s") is not None)
    if not spans:
        return "-"
    ends = sorted(end for _, end in spans)
    starts = [start for start, _ in spans]
    in_flight = [bisect.bisect_right(starts, start) - bisect.bisect_right(ends, start)
                 for start, _ in spans]
    return f"at most {max(in_flight)}, median {statistics.median(in_flight):g} at a run's start"


def _env(r: RunRecord) -> Mapping[str, Any]:
    return r.meta.get("environment") or {}


def _facts(records: Sequence[RunRecord], manifest: Mapping[str, Any]) -> dict[str, str]:
    runs = _unique(records)
    facts = {
        "kernel": _counted(_env(r).get("kernel") for r in runs),
        "distribution": _counted(_env(r).get("distribution") for r in runs),
        "Python": _counted(_env(r).get("python") for r in runs),
        "CPUs": _counted(_env(r).get("cpus") for r in runs),
        "git commit": _counted(
            str(_env(r).get("git_commit") or "?")[:12] + (" (uncommitted changes)" if
                                                          _env(r).get("git_dirty") else "")
            for r in runs),
    }
    packages = sorted({p for r in runs for p in (_env(r).get("packages") or {})})
    for package in packages:
        facts[f"package {package}"] = _counted((_env(r).get("packages") or {}).get(package)
                                               for r in runs)
    variants = sorted({str(r.metrics["cc_requested"]) for r in runs
                       if r.metrics.get("cc_requested")})
    for variant in variants:
        served = [r for r in runs if r.metrics.get("cc_requested") == variant]
        facts[f"{variant} served by"] = _counted(
            f"{r.metrics.get('cc_provider')} ({r.metrics.get('cc_used')})" for r in served)
    tcp = [r for r in runs if r.metrics.get("cc_requested")]
    if tcp:
        facts["TCP receive buffer maximum"] = _counted(receive_ceiling(r.meta) for r in tcp)
    facts["runs side by side"] = side_by_side(runs)
    worst = [w for w in (worst_lateness_p99_us(r.metrics) for r in runs) if w is not None]
    late = sum(emulator_late(r.metrics) for r in runs)
    facts["emulator lateness"] = (
        f"{late} of {len(runs)} runs late ({LATE_RULE}); "
        f"worst p99 {max(worst) / 1000:.2f} ms" if worst else "not recorded")
    facts["end hosts late"] = f"{sum(hosts_late(r.metrics) for r in runs)} of {len(runs)} runs"
    steal = [float(r.meta["cpu_steal_pct"]) for r in runs
             if r.meta.get("cpu_steal_pct") is not None]
    facts["CPU steal"] = f"worst {max(steal):.1f}%" if steal else "not recorded"
    if manifest:
        facts["verify when packed"] = f"exit {manifest.get('verify_exit_when_packed', '?')}"
    return facts


# Facts of the pass rather than of the machine: shown side by side, always.
OF_THE_PASS = ("runs side by side", "emulator lateness", "end hosts late", "CPU steal",
               "verify when packed")


def environment_facts(a: Sequence[RunRecord], b: Sequence[RunRecord],
                      manifest_a: Mapping[str, Any], manifest_b: Mapping[str, Any]
                      ) -> list[Fact]:
    """Every fact of either side, A's and B's values ('-' where a side does not say)."""
    fa, fb = _facts(a, manifest_a), _facts(b, manifest_b)
    names = list(dict.fromkeys([*fa, *fb]))
    return [Fact(n, fa.get(n, "-"), fb.get(n, "-"), n in OF_THE_PASS) for n in names]
