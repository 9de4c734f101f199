"""`repro bench concurrency`: how many runs can share this machine without changing results?

The same small set of runs (Sprout, Sprout-EWMA, Cubic and Vegas over the
Verizon-LTE-short downlink, 20 ms each way, infinite queue) is measured:

1. alone (--jobs 1), four times, which gives each scheme's baseline and its
   own run-to-run spread (some schemes land in one of two outcomes run to run:
   Cubic's 95% delay ~3% apart, Vegas's several-fold, with or without its
   slow-start overshoot; fewer repeats often see only one);
2. at each level N = 2 .. --max-jobs, every scheme again, in batches of N
   runs started side by side.

A level holds when every run finished; each scheme's mean throughput and mean
95% end-to-end delay over the level are within 2% of its means alone (or
within the scheme's own spread alone when that is wider: no level can be
more faithful than running alone); and the emulator's p99 lateness stayed at
or under 2 ms in both directions in every run. The chosen level is the
highest N for which it and every level below held. The last line printed is
one JSON object with every figure.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.paths import ProjectPaths, display
from core.results import ExperimentStore, read_json
from core.runner import MatrixRunner
from core.runspec import RunSpec
from core.traces import TraceSet

SCHEMES = ("sprout", "sprout-ewma", "cubic", "vegas")
DATA_TRACE = "Verizon-LTE-short.down"
ACK_TRACE = "Verizon-LTE-short.up"
DELAY_MS = 20
METRICS = ("throughput_mbps", "p95_e2e_delay_ms")
MAX_MOVE = 0.02  # "before any metric moves by more than 2%"
MAX_LATENESS_P99_US = 2000  # "or the emulator's p99 lateness exceeds 2 ms"
BASELINE_REPEATS = 4  # the schemes are bimodal run to run (cubic ~3%, vegas 8x): see both modes
DEFAULT_SECONDS = 30.0
DEFAULT_MAX_JOBS = 8
EXPERIMENT = "bench-concurrency"


@dataclass(frozen=True)
class Measured:
    """One finished run, reduced to what the benchmark compares."""
    scheme: str
    metrics: dict[str, float]
    lateness_p99_us: int


@dataclass
class Baseline:
    """Per scheme: the mean of each metric at --jobs 1 and its relative spread."""
    mean: dict[str, dict[str, float]] = field(default_factory=dict)
    spread: dict[str, dict[str, float]] = field(default_factory=dict)

    def allowed(self, scheme: str, metric: str) -> float:
        return max(MAX_MOVE, self.spread[scheme][metric])


@dataclass
class LevelVerdict:
    jobs: int
    held: bool
    problems: list[str]
    max_move: dict[str, float]
    lateness_p99_us_max: int | None
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        return {"jobs": self.jobs, "held": self.held, "problems": self.problems,
                "max_move": self.max_move, "lateness_p99_us_max": self.lateness_p99_us_max,
                "wall_s": round(self.wall_s, 1)}


def make_baseline(runs: list[Measured]) -> Baseline:
    baseline = Baseline()
    for scheme in sorted({r.scheme for r in runs}):
        mine = [r for r in runs if r.scheme == scheme]
        baseline.mean[scheme] = {}
        baseline.spread[scheme] = {}
        for metric in METRICS:
            values = [r.metrics[metric] for r in mine]
            mean = sum(values) / len(values)
            baseline.mean[scheme][metric] = mean
            baseline.spread[scheme][metric] = ((max(values) - min(values)) / mean
                                               if mean else 0.0)
    return baseline


def judge(jobs: int, runs: list[Measured], expected: int, baseline: Baseline,
          wall_s: float) -> LevelVerdict:
    """Whether `jobs` runs side by side measured what each measures alone.

    Each scheme's mean at this level is compared with its mean alone, so one
    noisy run among many does not decide a level by itself.
    """
    problems: list[str] = []
    if len(runs) < expected:
        problems.append(f"{expected - len(runs)} of {expected} runs failed")
    max_move = {m: 0.0 for m in METRICS}
    for scheme in sorted({r.scheme for r in runs}):
        mine = [r for r in runs if r.scheme == scheme]
        for metric in METRICS:
            value = sum(r.metrics[metric] for r in mine) / len(mine)
            base = baseline.mean[scheme][metric]
            move = abs(value - base) / base if base else 0.0
            max_move[metric] = max(max_move[metric], move)
            allowed = baseline.allowed(scheme, metric)
            if move > allowed:
                problems.append(f"{scheme} {metric} moved {move:.1%} "
                                f"(allowed {allowed:.1%})")
    lateness = max((r.lateness_p99_us for r in runs), default=None)
    if lateness is not None and lateness > MAX_LATENESS_P99_US:
        problems.append(f"emulator p99 lateness {lateness} us > {MAX_LATENESS_P99_US} us")
    return LevelVerdict(jobs, not problems, problems, max_move, lateness, wall_s)


def chosen_level(verdicts: list[LevelVerdict]) -> int:
    """The highest level that held with every level below it holding too (1 at least)."""
    chosen = 1
    for v in sorted(verdicts, key=lambda v: v.jobs):
        if not v.held:
            break
        chosen = v.jobs
    return chosen


def bench_spec(scheme: str, seconds: float, trial: int) -> RunSpec:
    return RunSpec(experiment=EXPERIMENT, scheme=scheme, data_trace=DATA_TRACE,
                   ack_trace=ACK_TRACE, delay_ms=DELAY_MS, queue="infinite",
                   duration_s=seconds, trial=trial)


def level_specs(jobs: int, seconds: float) -> list[RunSpec]:
    """Every scheme at least once, in whole batches of `jobs`, so all start together."""
    count = jobs * math.ceil(len(SCHEMES) / jobs)
    return [bench_spec(SCHEMES[i % len(SCHEMES)], seconds, trial=100 * jobs + i)
            for i in range(count)]


def _measured(run_dir: Path) -> Measured:
    metrics = read_json(run_dir / "metrics.json")
    meta = read_json(run_dir / "meta.json")
    link = meta.get("link") or {}
    p99s = [((link.get(d) or {}).get("lateness_us") or {}).get("p99") for d in ("a2b", "b2a")]
    return Measured(scheme=meta["spec"]["scheme"],
                    metrics={m: float(metrics[m]) for m in METRICS},
                    lateness_p99_us=max(int(p) for p in p99s if p is not None))


class _BenchExperiment:
    """The runner needs only a name: the folder the runs land in."""
    name = EXPERIMENT


def _run_level(paths: ProjectPaths, traces: TraceSet, specs: list[RunSpec],
               jobs: int) -> tuple[list[Measured], float]:
    runner = MatrixRunner(paths, traces, jobs=jobs, force=True)
    started = time.monotonic()
    result = runner.run(_BenchExperiment(), specs)  # type: ignore[arg-type]
    wall = time.monotonic() - started
    if result.interrupted:
        raise KeyboardInterrupt
    return measured_runs(ExperimentStore(paths.results_dir / EXPERIMENT), result.succeeded), wall


def measured_runs(store: ExperimentStore, specs: list[RunSpec]) -> list[Measured]:
    """The finished runs of these specs, found by label (scheme, trace, trial: unique in
    a bench), not by run id: the id also hashes the code, which may change mid-bench."""
    by_label = {RunSpec.from_dict(read_json(d / "spec.json")).label(): d
                for d in store.done_runs()}
    return [_measured(by_label[s.label()]) for s in specs]


def main(paths: ProjectPaths, traces: TraceSet, args: argparse.Namespace) -> int:
    seconds = args.seconds or DEFAULT_SECONDS
    max_jobs = args.max_jobs or DEFAULT_MAX_JOBS
    out = paths.results_dir / "bench" / f"concurrency-{time.strftime('%Y%m%d-%H%M%S')}"
    bench_paths = ProjectPaths(root=paths.root, results_override=out)
    load = os.getloadavg()
    print(f"bench concurrency: {', '.join(SCHEMES)} on {DATA_TRACE}, {seconds:g} s each; "
          f"levels 2..{max_jobs}; load average before: {load[0]:.2f} "
          f"(other work on the machine moves these figures)", flush=True)

    print(f"== baseline: each run alone, {BASELINE_REPEATS} times", flush=True)
    base_specs = [bench_spec(s, seconds, trial) for trial in range(1, BASELINE_REPEATS + 1)
                  for s in SCHEMES]
    base_runs, _ = _run_level(bench_paths, traces, base_specs, jobs=1)
    missing = set(SCHEMES) - {r.scheme for r in base_runs}
    if missing:
        print(f"bench concurrency: the baseline failed for {', '.join(sorted(missing))}; "
              f"see {display(out)}", flush=True)
        print(json.dumps({"ok": False, "reason": "baseline failed",
                          "failed_schemes": sorted(missing)}))
        return 1
    baseline = make_baseline(base_runs)
    for scheme in SCHEMES:
        print(f"  {scheme:12s} " + ", ".join(
            f"{m} {baseline.mean[scheme][m]:.3f} (spread {baseline.spread[scheme][m]:.1%})"
            for m in METRICS), flush=True)

    verdicts: list[LevelVerdict] = []
    for jobs in range(2, max_jobs + 1):
        print(f"== {jobs} runs side by side", flush=True)
        specs = level_specs(jobs, seconds)
        runs, wall = _run_level(bench_paths, traces, specs, jobs=jobs)
        v = judge(jobs, runs, len(specs), baseline, wall)
        verdicts.append(v)
        moves = ", ".join(f"{m} {v.max_move[m]:.1%}" for m in METRICS)
        print(f"  jobs {jobs}: {'held' if v.held else 'NOT held'}; largest moves: {moves}; "
              f"lateness p99 max {v.lateness_p99_us_max} us; wall {wall:.0f} s"
              + ("" if v.held else "; " + "; ".join(v.problems)), flush=True)

    chosen = chosen_level(verdicts)
    print(f"bench concurrency: {chosen} runs can share this machine "
          f"(pass --jobs {chosen}); artifacts in {display(out)}", flush=True)
    print(json.dumps({
        "seconds": seconds, "schemes": list(SCHEMES), "trace": DATA_TRACE,
        "max_move": MAX_MOVE, "max_lateness_p99_us": MAX_LATENESS_P99_US,
        "load_average_before": round(load[0], 2),
        "baseline": {"mean": baseline.mean, "spread": baseline.spread},
        "levels": [v.to_dict() for v in verdicts], "chosen_jobs": chosen}, sort_keys=True))
    return 0
