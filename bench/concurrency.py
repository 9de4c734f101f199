"""`repro bench concurrency`: how many runs can share this machine without changing results?

The same small set of runs (Sprout, Sprout-EWMA, Cubic, Vegas and a window-limited sender
over the Verizon-LTE-short downlink, 20 ms each way, infinite queue) is measured:

1. alone (--jobs 1), ten times, which gives each scheme's baseline and its
   own run-to-run noise (some schemes land in one of two outcomes run to run:
   Cubic's 95% delay a few percent apart, Vegas's several-fold, with or
   without its slow-start overshoot, in about one run in four; six repeats
   saw only one of Vegas's outcomes in one benchmark of two, and then every
   level that drew the other failed on Vegas, level 2 included);
2. at each level N = 2 .. --max-jobs, in batches of N runs started side by
   side, at least 8 runs, so every scheme runs at least twice per level.

An attempt at a level holds when every run finished; each scheme's mean
throughput and mean 95% end-to-end delay over the level moved from its means
alone by no more than 2%, or than what run-to-run noise explains when that is
larger (the scheme's spread alone, or twice the standard error of the
difference of the two means): a move inside the noise is no evidence of
contention; and the emulator's p99 lateness stayed at or under 2 ms in both
directions in every run. That noise allowance is capped at 10%: a metric
noisier than that alone (Vegas's 95% delay lands in one of two modes several
fold apart) cannot show contention with two runs per level, so it is reported
as not judged rather than allowed its whole range, which would pass it at
every level. A level holds on two attempts that held and fails on two that
failed (best of three): one good attempt is not enough, and noise alone fails
about one attempt in five while contention fails them all. An attempt that
failed only on lateness while the hypervisor took more CPU time than during
the runs alone (over 2%, and over twice the baseline's share) is
inconclusive, not failed: the machine, not the level, was late; a level
still open after three attempts is undecided. The chosen level is the N that best explains the
outcomes as "every level up to N holds, every level above fails" (fewest
disagreements, ties to the lower N; see chosen_level), and never above the highest level up
to which the window-limited sender's throughput stayed within noise of alone (see
window_ceiling); it is saved as this machine's default `--jobs` (core/jobs.py). The last
line printed is one JSON object with every figure.

The window-limited sender is contest warm-up A's fixed window of 50 datagrams, on its trace,
as the warm-up's quick pass runs it (the trace's first 30 s by default). A sender whose
window is its whole rate answers every ACK with a datagram, so an end host that wakes late
costs it throughput while the emulator stays punctual: warm-up A in full, 13 runs side by
side, gave 1.8-2.2% less than alone, inside the 2% every other metric is allowed. Its
throughput is therefore allowed its noise alone only (the spread of its runs alone or twice
the standard error of the difference of means), not 2%; with a floor of 0.5%
(WINDOW_MIN_MOVE): a quarter of that 2%, so the loss seen at 13 fails, and above the
0.04% two runs alone were apart, so that a level is not failed by rounding.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis import fidelity
from core.cpu_steal import StealMeter
from core.jobs import save_measured
from core.paths import ProjectPaths, display
from core.results import ExperimentStore, experiment_store, read_json
from app.runner import MatrixRunner, estimate_s, format_duration
from core.runspec import RunSpec, make_params
from core.traces import TraceSet

# The window-limited sender (contest warm-up A's W = 50 on its trace; module docstring).
WINDOW_SENDER = "fixed-window"
WINDOW = 50
SCHEMES = ("sprout", "sprout-ewma", "cubic", "vegas", WINDOW_SENDER)
PARAMS = {WINDOW_SENDER: make_params(window=WINDOW)}
WINDOW_METRIC = "throughput_mbps"  # what a late end host costs a window-limited sender
WINDOW_MIN_MOVE = 0.005
DATA_TRACE = "Verizon-LTE-short.down"
ACK_TRACE = "Verizon-LTE-short.up"
DELAY_MS = 20
METRICS = ("throughput_mbps", "p95_e2e_delay_ms")
MAX_MOVE = 0.02  # "before any metric moves by more than 2%"
# "or the emulator's p99 lateness exceeds 2 ms" (analysis/fidelity.py: the runs' own verdict)
MAX_LATENESS_P99_US = fidelity.MAX_LATENESS_P99_US
# More late runs alone than this share, and the machine itself is too noisy to judge any level.
MAX_LATE_ALONE = 0.1
# Vegas's two outcomes come about 3:1; ten runs alone miss the rarer one about 4% of the time
# (0.72^10), six runs 14%. A baseline that saw one outcome makes the other look like contention.
BASELINE_REPEATS = 10
MIN_RUNS_PER_LEVEL = 2 * len(SCHEMES)  # every scheme at least twice at every level
NOISE_Z = 2.0  # a move within two standard errors is what noise alone gives, ~95% of the time
MAX_ATTEMPTS = 3
HOLDS_NEEDED = 2  # one good attempt can be luck; two in a row are the level's own
# A noise allowance above this is no allowance: with two runs per level, a metric this noisy
# alone cannot show contention. Fixed before the data: a 10% move is plain on Figure 7's axes.
MAX_ALLOWANCE = 0.10
MIN_STEAL_PCT = 2.0  # below this share of stolen CPU time, lateness is the level's own
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
    """Per scheme and metric: the values measured alone (--jobs 1)."""
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def mean(self, scheme: str, metric: str) -> float:
        return statistics.fmean(self.values[scheme][metric])

    def spread(self, scheme: str, metric: str) -> float:
        """(max - min) / mean alone: how far apart runs land with nothing else running."""
        v, mean = self.values[scheme][metric], self.mean(scheme, metric)
        return (max(v) - min(v)) / mean if mean else 0.0

    def allowed(self, scheme: str, metric: str, n_level: int) -> float:
        """The largest relative move of a level's mean that is no sign of contention: 2% or
        the noise alone, whichever is larger; for the window-limited sender's throughput,
        its noise alone (at least WINDOW_MIN_MOVE)."""
        v, mean = self.values[scheme][metric], self.mean(scheme, metric)
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        noise = NOISE_Z * sd * math.sqrt(1 / len(v) + 1 / n_level) / mean if mean else 0.0
        floor = WINDOW_MIN_MOVE if (scheme, metric) == (WINDOW_SENDER, WINDOW_METRIC) \
            else MAX_MOVE
        return max(floor, self.spread(scheme, metric), noise)

    def judged(self, scheme: str, metric: str, n_level: int) -> bool:
        """Whether this metric is quiet enough alone to show contention at all."""
        return self.allowed(scheme, metric, n_level) <= MAX_ALLOWANCE

    def unjudged(self) -> list[str]:
        """'scheme metric' for each metric too noisy alone to be judged (two runs a level)."""
        return [f"{s} {m}" for s in sorted(self.values) for m in METRICS
                if not self.judged(s, m, MIN_RUNS_PER_LEVEL // len(SCHEMES))]


@dataclass
class LevelVerdict:
    jobs: int
    held: bool
    problems: list[str]
    max_move: dict[str, float]
    lateness_p99_us_max: int | None
    wall_s: float
    attempt: int = 1
    unjudged: list[str] = field(default_factory=list)  # too noisy alone: moves not judged
    steal_pct: float | None = None  # CPU time the hypervisor took during the attempt
    inconclusive: bool = False  # late only while the hypervisor took the CPU
    # The window-limited sender's throughput: its move from alone (signed), and whether it
    # stayed within its noise (False also when its runs failed or it is too noisy to judge).
    window_move: float | None = None
    window_held: bool = False

    @property
    def outcome(self) -> str:
        return "held" if self.held else ("inconclusive" if self.inconclusive else "NOT held")

    def to_dict(self) -> dict[str, Any]:
        return {"jobs": self.jobs, "attempt": self.attempt, "held": self.held,
                "inconclusive": self.inconclusive, "steal_pct": self.steal_pct,
                "problems": self.problems, "unjudged": self.unjudged,
                "max_move": self.max_move, "lateness_p99_us_max": self.lateness_p99_us_max,
                "window_move": self.window_move, "window_held": self.window_held,
                "wall_s": round(self.wall_s, 1)}


def make_baseline(runs: list[Measured]) -> Baseline:
    baseline = Baseline()
    for r in runs:
        per_metric = baseline.values.setdefault(r.scheme, {m: [] for m in METRICS})
        for metric in METRICS:
            per_metric[metric].append(r.metrics[metric])
    return baseline


def judge(jobs: int, runs: list[Measured], expected: int, baseline: Baseline,
          wall_s: float, steal_pct: float | None = None,
          steal_limit_pct: float = MIN_STEAL_PCT) -> LevelVerdict:
    """Whether `jobs` runs side by side measured what each measures alone.

    Each scheme's mean at this level is compared with its mean alone, so one
    noisy run among many does not decide a level by itself. A metric whose
    allowance would exceed MAX_ALLOWANCE is listed as unjudged. Lateness alone,
    while the hypervisor took more than `steal_limit_pct` of the CPU time,
    makes the attempt inconclusive.
    """
    problems: list[str] = []
    if len(runs) < expected:
        problems.append(f"{expected - len(runs)} of {expected} runs failed")
    max_move = {m: 0.0 for m in METRICS}
    unjudged: list[str] = []
    window_move: float | None = None
    window_held = False
    for scheme in sorted({r.scheme for r in runs}):
        mine = [r for r in runs if r.scheme == scheme]
        for metric in METRICS:
            value = statistics.fmean(r.metrics[metric] for r in mine)
            base = baseline.mean(scheme, metric)
            move = abs(value - base) / base if base else 0.0
            allowed = baseline.allowed(scheme, metric, len(mine))
            judged = baseline.judged(scheme, metric, len(mine))
            if (scheme, metric) == (WINDOW_SENDER, WINDOW_METRIC):
                window_move = (value - base) / base if base else 0.0
                window_held = judged and move <= allowed
            if not judged:
                unjudged.append(f"{scheme} {metric}")
                continue
            max_move[metric] = max(max_move[metric], move)
            if move > allowed:
                problems.append(f"{scheme} {metric} moved {move:.1%} "
                                f"(allowed {allowed:.1%})")
    moved = bool(problems)
    lateness = max((r.lateness_p99_us for r in runs), default=None)
    late = lateness is not None and lateness > MAX_LATENESS_P99_US
    if late:
        problems.append(f"emulator p99 lateness {lateness} us > {MAX_LATENESS_P99_US} us")
    stolen = steal_pct is not None and steal_pct > steal_limit_pct
    late_only = late and not moved
    if late_only and stolen:
        problems.append(f"while the hypervisor took {steal_pct:.1f}% of the CPU time "
                        f"(over {steal_limit_pct:.1f}%)")
    return LevelVerdict(jobs, not problems, problems, max_move, lateness, wall_s,
                        steal_pct=steal_pct, inconclusive=late_only and stolen,
                        unjudged=unjudged, window_move=window_move, window_held=window_held)


def level_outcome(attempts: list[LevelVerdict]) -> str | None:
    """'held', 'not held' or 'undecided' from a level's attempts so far; None: try again.

    A level holds on its second attempt that held and fails on its second
    conclusive failure (best of three); inconclusive attempts count for
    neither, and a level still open after MAX_ATTEMPTS is undecided.
    """
    holds = sum(a.held for a in attempts)
    failures = sum(not a.held and not a.inconclusive for a in attempts)
    if holds >= HOLDS_NEEDED:
        return "held"
    if failures >= 2:
        return "not held"
    if len(attempts) >= MAX_ATTEMPTS:
        return "undecided"
    return None


def chosen_level(verdicts: list[LevelVerdict]) -> int:
    """The level N that best explains the outcomes as "up to N holds, above N fails".

    Contention only grows with the level, so a level that failed below levels
    that held is more likely noise than a ceiling. The chosen N is the one
    with the fewest disagreements (failed or undecided levels at or below N,
    plus levels above N that held); ties go to the lower N. 1 when nothing
    held.
    """
    by_level: dict[int, list[LevelVerdict]] = {}
    for v in sorted(verdicts, key=lambda v: (v.jobs, v.attempt)):
        by_level.setdefault(v.jobs, []).append(v)
    held = {jobs: level_outcome(attempts) == "held" for jobs, attempts in by_level.items()}
    best, best_cost = 1, sum(held.values())
    for n in sorted(held):
        cost = (sum(not ok for jobs, ok in held.items() if jobs <= n)
                + sum(ok for jobs, ok in held.items() if jobs > n))
        if cost < best_cost:
            best, best_cost = n, cost
    return best


def window_ceiling(verdicts: list[LevelVerdict]) -> int:
    """The highest level up to which the window-limited sender's throughput stayed within
    its noise of alone: at that level and at every level tried below it, in at least
    HOLDS_NEEDED of the level's attempts. 1 when it did not at the lowest level tried; the
    highest level tried when it always did.

    Stricter than chosen_level on purpose: a loss of throughput there is exactly what a
    late end host causes, so a lower level that lost it is not taken for noise.
    """
    by_level: dict[int, list[LevelVerdict]] = {}
    for v in verdicts:
        by_level.setdefault(v.jobs, []).append(v)
    ceiling = 1
    for jobs in sorted(by_level):
        if sum(a.window_held for a in by_level[jobs]) < HOLDS_NEEDED:
            break
        ceiling = jobs
    return ceiling


def default_level(verdicts: list[LevelVerdict]) -> int:
    """The level saved as the machine's default: chosen_level, capped by window_ceiling."""
    return min(chosen_level(verdicts), window_ceiling(verdicts))


def describe_levels(levels: list[int]) -> str:
    """2..8 for a whole range, else the list."""
    if levels == list(range(levels[0], levels[-1] + 1)) and len(levels) > 2:
        return f"{levels[0]}..{levels[-1]}"
    return ", ".join(map(str, levels))


def bench_spec(scheme: str, seconds: float, trial: int) -> RunSpec:
    return RunSpec(experiment=EXPERIMENT, scheme=scheme, data_trace=DATA_TRACE,
                   ack_trace=ACK_TRACE, delay_ms=DELAY_MS, queue="infinite",
                   duration_s=seconds, trial=trial, params=PARAMS.get(scheme, ()))


def level_specs(jobs: int, seconds: float, attempt: int = 1) -> list[RunSpec]:
    """Every scheme at least twice, in whole batches of `jobs`, so each batch starts together.

    Trial numbers are unique across levels and attempts (runs are found by label):
    attempt, level and index each have their own digits.
    """
    count = jobs * math.ceil(MIN_RUNS_PER_LEVEL / jobs)
    return [bench_spec(SCHEMES[i % len(SCHEMES)], seconds,
                       trial=10000 * attempt + 100 * jobs + i)
            for i in range(count)]


def _measured(run_dir: Path) -> Measured:
    metrics = read_json(run_dir / "metrics.json")
    meta = read_json(run_dir / "meta.json")
    worst = fidelity.lateness_p99_us(meta.get("link"))
    if worst is None:
        raise ValueError(f"{run_dir}: link-stats has no lateness figures")
    return Measured(scheme=meta["spec"]["scheme"],
                    metrics={m: float(metrics[m]) for m in METRICS}, lateness_p99_us=worst)


def too_noisy_alone(runs: list[Measured]) -> str | None:
    """Why the machine cannot be judged now (its runs alone were already late), or None."""
    late = [r for r in runs if r.lateness_p99_us > MAX_LATENESS_P99_US]
    if len(late) <= MAX_LATE_ALONE * len(runs):
        return None
    worst = max(r.lateness_p99_us for r in late)
    return (f"{len(late)} of {len(runs)} runs alone had an emulator p99 lateness above "
            f"{MAX_LATENESS_P99_US} us (worst {worst} us): the machine stalls even one run, "
            "so no level can be judged; run the benchmark when the machine is quiet")


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f}%"


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
    return measured_runs(experiment_store(paths.results_dir, EXPERIMENT), result.succeeded), wall


def measured_runs(store: ExperimentStore, specs: list[RunSpec]) -> list[Measured]:
    """The finished runs of these specs, found by label (scheme, trace, trial: unique in
    a bench), not by run id: the id also hashes the code, which may change mid-bench."""
    by_label = {RunSpec.from_dict(read_json(d / "spec.json")).label(): d
                for d in store.done_runs()}
    return [_measured(by_label[s.label()]) for s in specs]


def main(paths: ProjectPaths, traces: TraceSet, args: argparse.Namespace) -> int:
    seconds = args.seconds or DEFAULT_SECONDS
    levels = args.levels or list(range(2, (args.max_jobs or DEFAULT_MAX_JOBS) + 1))
    out = paths.results_dir / "bench" / f"concurrency-{time.strftime('%Y%m%d-%H%M%S')}"
    bench_paths = ProjectPaths(root=paths.root, results_override=out)
    load = os.getloadavg()
    expected = estimate_s([bench_spec(s, seconds, 1) for s in SCHEMES] * BASELINE_REPEATS,
                          traces, 1)
    for jobs in levels:
        expected += HOLDS_NEEDED * estimate_s(level_specs(jobs, seconds), traces, jobs)
    print(f"bench concurrency: {', '.join(SCHEMES)} on {DATA_TRACE}, {seconds:g} s each; "
          f"levels {describe_levels(levels)}; load average before: {load[0]:.2f} "
          f"(other work on the machine moves these figures); expected "
          f"{format_duration(expected)}, more for each level tried again", flush=True)

    print(f"== baseline: each run alone, {BASELINE_REPEATS} times", flush=True)
    base_specs = [bench_spec(s, seconds, trial) for trial in range(1, BASELINE_REPEATS + 1)
                  for s in SCHEMES]
    steal = StealMeter()
    base_runs, _ = _run_level(bench_paths, traces, base_specs, jobs=1)
    base_steal = steal.percent()
    steal_limit = max(MIN_STEAL_PCT, 2 * (base_steal or 0.0))
    print(f"  cpu time stolen by the hypervisor: {_pct(base_steal)}; an attempt late while "
          f"more than {steal_limit:.1f}% is stolen is inconclusive", flush=True)
    missing = set(SCHEMES) - {r.scheme for r in base_runs}
    if missing:
        print(f"bench concurrency: the baseline failed for {', '.join(sorted(missing))}; "
              f"see {display(out)}", flush=True)
        print(json.dumps({"ok": False, "reason": "baseline failed",
                          "failed_schemes": sorted(missing)}))
        return 1
    noisy = too_noisy_alone(base_runs)
    if noisy:
        print(f"bench concurrency: {noisy}; nothing saved; artifacts in {display(out)}",
              flush=True)
        print(json.dumps({"ok": False, "reason": noisy,
                          "lateness_p99_us_alone": [r.lateness_p99_us for r in base_runs]}))
        return 1
    baseline = make_baseline(base_runs)
    for scheme in SCHEMES:
        print(f"  {scheme:12s} " + ", ".join(
            f"{m} {baseline.mean(scheme, m):.3f} (spread {baseline.spread(scheme, m):.1%})"
            for m in METRICS), flush=True)
    if baseline.unjudged():
        print(f"  not judged (noise alone over the {MAX_ALLOWANCE:.0%} cap): "
              f"{', '.join(baseline.unjudged())}", flush=True)

    verdicts: list[LevelVerdict] = []
    for jobs in levels:
        attempts: list[LevelVerdict] = []
        while level_outcome(attempts) is None:
            again = f" (attempt {len(attempts) + 1})" if attempts else ""
            print(f"== {jobs} runs side by side{again}", flush=True)
            specs = level_specs(jobs, seconds, len(attempts) + 1)
            steal = StealMeter()
            runs, wall = _run_level(bench_paths, traces, specs, jobs=jobs)
            v = judge(jobs, runs, len(specs), baseline, wall, steal.percent(), steal_limit)
            v.attempt = len(attempts) + 1
            attempts.append(v)
            moves = ", ".join(f"{m} {v.max_move[m]:.1%}" for m in METRICS)
            window = "unknown" if v.window_move is None else f"{v.window_move:+.2%}"
            print(f"  jobs {jobs}: {v.outcome}; largest moves: {moves}; {WINDOW_SENDER} "
                  f"W={WINDOW} throughput {window} "
                  f"({'within' if v.window_held else 'NOT within'} its noise); lateness p99 max "
                  f"{v.lateness_p99_us_max} us; cpu stolen {_pct(v.steal_pct)}; "
                  f"wall {wall:.0f} s" + ("" if v.held else "; " + "; ".join(v.problems)),
                  flush=True)
        verdicts += attempts
        print(f"  level {jobs}: {level_outcome(attempts)}", flush=True)

    best_fit, ceiling = chosen_level(verdicts), window_ceiling(verdicts)
    chosen = default_level(verdicts)
    print(f"  every metric: level {best_fit} fits the outcomes best; {WINDOW_SENDER} W={WINDOW}"
          f" throughput within its noise up to level {ceiling}", flush=True)
    if levels[0] > 2 and chosen == 1:
        # Nothing tried held, and the levels below were not tried: there is no level to save.
        print(f"bench concurrency: none of the levels {describe_levels(levels)} held; nothing "
              f"saved (try lower levels); artifacts in {display(out)}", flush=True)
        print(json.dumps({"ok": False, "reason": "no level tried held",
                          "levels": [v.to_dict() for v in verdicts]}, sort_keys=True))
        return 1
    saved = save_measured(paths.state_dir, chosen, {
        "seconds": seconds, "levels_tried": levels,
        "levels_held": [v.jobs for v in verdicts if v.held],
        "attempts_not_held": [v.jobs for v in verdicts if not v.held],
        "best_fit_level": best_fit, "window_ceiling": ceiling,
        "cpu_steal_alone_pct": base_steal,
        "artifacts": display(out)})
    print(f"bench concurrency: {chosen} runs can share this machine; saved as its default "
          f"--jobs in {display(saved)}; artifacts in {display(out)}", flush=True)
    print(json.dumps({
        "seconds": seconds, "schemes": list(SCHEMES), "trace": DATA_TRACE,
        "max_move": MAX_MOVE, "max_lateness_p99_us": MAX_LATENESS_P99_US,
        "load_average_before": round(load[0], 2), "cpu_steal_alone_pct": base_steal,
        "baseline": {"values": baseline.values,
                     "mean": {s: {m: baseline.mean(s, m) for m in METRICS} for s in SCHEMES},
                     "spread": {s: {m: baseline.spread(s, m) for m in METRICS}
                                for s in SCHEMES}},
        "max_allowance": MAX_ALLOWANCE, "holds_needed": HOLDS_NEEDED,
        "unjudged_alone": baseline.unjudged(),
        "window_sender": {"scheme": WINDOW_SENDER, "window": WINDOW,
                          "min_move": WINDOW_MIN_MOVE, "ceiling": ceiling},
        "best_fit_level": best_fit,
        "levels": [v.to_dict() for v in verdicts], "chosen_jobs": chosen}, sort_keys=True))
    return 0
