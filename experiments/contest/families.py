"""The contest's controller families as parameter sweeps, and the one way to make a run
on the contest path, shared by every contest experiment.

A run asked for by two experiments is the same RunSpec apart from `experiment`
(the run id leaves the experiment out), so it is run once and shared: warm-up
A's windows are the region's fixed-window family, warm-ups B and C are its AIMD
and delay-trigger families, and the training side of contest-train-test is the
region's own runs. Quick mode plays the first QUICK_DURATION_S of the trace
(warm-up A's quick span), full mode the whole trace once.

Every sweep is a list of parameter values (the parameters are the scheme
table's: native/grump/controllers.tsv and schemes/sprout.py), never new code.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product
from typing import Any, Iterable

from core.runspec import RunSpec, make_params
from schemes.sprout import DEFAULT_CONFIDENCE

TRAINING = "Verizon-LTE-short"
TESTING = "TMobile-LTE-short"
VALIDATION = "ATT-LTE-driving-2016"
DELAY_MS = 20
QUEUE = "infinite"
QUICK_DURATION_S = 30.0

Params = dict[str, Any]


def contest_run(experiment: str, scheme: str, trace: str, quick: bool, trial: int,
                params: Params | None = None) -> RunSpec:
    """A run on the contest path of `trace` (base name): data over .down then 20 ms, ACKs
    over 20 ms then .up, infinite queue; the whole trace once, or its first
    QUICK_DURATION_S in quick mode."""
    return RunSpec(experiment=experiment, scheme=scheme, data_trace=f"{trace}.down",
                   ack_trace=f"{trace}.up", delay_ms=DELAY_MS, queue=QUEUE,
                   duration_s=QUICK_DURATION_S if quick else None, trial=trial,
                   params=make_params(**(params or {})))


def as_experiment(specs: Iterable[RunSpec], experiment: str) -> list[RunSpec]:
    """The same runs asked for by another experiment (same run ids, so shared)."""
    return [replace(s, experiment=experiment) for s in specs]


@dataclass(frozen=True)
class Family:
    """One controller family: a scheme and the parameter settings swept, per mode."""

    name: str  # shown in legends and the CSV's `family` column
    scheme: str
    full: tuple[Params, ...]
    quick: tuple[Params, ...]

    def settings(self, quick: bool) -> tuple[Params, ...]:
        return self.quick if quick else self.full

    def runs(self, experiment: str, trace: str, quick: bool, trials: int) -> list[RunSpec]:
        return [contest_run(experiment, self.scheme, trace, quick, t, p)
                for t in range(1, trials + 1) for p in self.settings(quick)]


def grid(**axes: Iterable[Any]) -> tuple[Params, ...]:
    """Every combination of the axes' values, the last axis varying fastest."""
    names = list(axes)
    return tuple(dict(zip(names, values)) for values in product(*axes.values()))


def threshold_pairs(values: Iterable[int]) -> tuple[Params, ...]:
    """(grow below, shrink above) pairs with low <= high over `values`."""
    vs = sorted(values)
    return tuple({"low_rtt_ms": lo, "high_rtt_ms": hi} for lo in vs for hi in vs if lo <= hi)


# Warm-up A (experiments/contest/warmup_a.py keeps these; repeated here as the family).
FIXED_WINDOW = Family(
    "fixed window", "fixed-window",
    full=tuple({"window": w} for w in (*range(1, 11), 15, 20, 25, 30, 35, 40, 45, 50, 75, 100,
                                       125, 150, 175, 200, 250, 350)),
    quick=tuple({"window": w} for w in (1, 5, 10, 20, 50, 100)))

# Warm-up B: AIMD's multiplicative decrease (2-6) x its idle timeout (100, 300, 1000 ms),
# the RTT threshold and the increase at their defaults (1 per RTT, 100 ms).
AIMD_DECREASES = (2, 3, 4, 5, 6)
AIMD_TIMEOUTS = (100, 300, 1000)
AIMD = Family(
    "AIMD", "aimd",
    full=grid(decrease=AIMD_DECREASES, timeout_ms=AIMD_TIMEOUTS),
    quick=grid(decrease=(2, 4, 6), timeout_ms=(100, 1000)))

# Warm-up C: the delay trigger over (grow below, shrink above) RTT thresholds, 40-200 ms.
TRIGGER_THRESHOLDS = (40, 60, 80, 100, 120, 150, 200)
DELAY_TRIGGER = Family(
    "delay trigger", "delay-trigger",
    full=threshold_pairs(TRIGGER_THRESHOLDS),
    quick=threshold_pairs((40, 100, 200)))

# The region's other families. The 2013 winners: EWMA delivery rate x target delay
# (their authors' choices: 70 and 60 ms).
TARGET_DELAYS = (10, 20, 35, 50, 70, 100, 150, 200, 300, 500)
DASJOSHMA = Family(
    "dasjoshma (rate x target delay)", "dasjoshma",
    full=tuple({"target_delay_ms": d} for d in TARGET_DELAYS),
    quick=tuple({"target_delay_ms": d} for d in (20, 70, 200)))
JOHNNYBAMEESH = Family(
    "johnnybameesh (rate x target delay)", "johnnybameesh",
    full=tuple({"target_delay_ms": d} for d in (*TARGET_DELAYS[:4], 60, *TARGET_DELAYS[5:])),
    quick=tuple({"target_delay_ms": d} for d in (20, 60, 200)))
# Sprout's risk knob (the sprout-risk experiment's full values are among these, so those
# runs are shared too).
# The paper's confidence (schemes/sprout.py): 95%, the default, is no parameter at all, so
# those runs are the ones the contest's leaderboard asks for.
SPROUT = Family(
    "Sprout (confidence)", "sprout",
    full=tuple({} if c == 0.95 else {"confidence": c}
               for c in (0.99, 0.95, 0.9, 0.75, 0.5, 0.25, 0.05)),
    quick=tuple({} if c == 0.95 else {"confidence": c} for c in (0.95, 0.75, 0.5, 0.25, 0.05)))
SHEEN = Family(
    "sheen (delay threshold)", "sheen",
    full=tuple({"rtt_threshold_ms": r} for r in (50, 70, 90, 120, 150)),
    quick=({"rtt_threshold_ms": 90},))
SPROUT_EWMA = Family("Sprout-EWMA", "sprout-ewma", full=({},), quick=({},))

REGION_FAMILIES: tuple[Family, ...] = (FIXED_WINDOW, AIMD, DELAY_TRIGGER, DASJOSHMA,
                                       JOHNNYBAMEESH, SPROUT, SHEEN, SPROUT_EWMA)

# The protocols the paper marks: Sprout at its default confidence and the two winners at
# their authors' target delays.
MARKED: tuple[tuple[str, str, Params], ...] = (
    ("Sprout", "sprout", {}),
    ("dasjoshma", "dasjoshma", {"target_delay_ms": 70}),
    ("johnnybameesh", "johnnybameesh", {"target_delay_ms": 60}),
)


def family_of(spec: RunSpec) -> str:
    for family in REGION_FAMILIES:
        if family.scheme == spec.scheme:
            return family.name
    return spec.scheme


def params_text(spec: RunSpec) -> str:
    """A point's label: its parameters as short text (w=10, d=2 t=100, 40/100 ms...)."""
    p = dict(spec.params)
    if spec.scheme == "fixed-window":
        return f"W={p.get('window')}"
    if spec.scheme == "aimd":
        return f"/{p.get('decrease', 2):g} t{p.get('timeout_ms', '')}"
    if spec.scheme == "delay-trigger":
        return f"{p.get('low_rtt_ms')}/{p.get('high_rtt_ms')}"
    if "target_delay_ms" in p:
        return f"{p['target_delay_ms']:g} ms"
    if spec.scheme in ("sprout", "sprout-ewma"):  # the paper's confidence, 95% by default
        ewma = "EWMA " if spec.scheme == "sprout-ewma" else ""
        return f"{ewma}{p.get('confidence', DEFAULT_CONFIDENCE) * 100:g}%"
    if "rtt_threshold_ms" in p:
        return f"{p['rtt_threshold_ms']} ms"
    return " ".join(f"{k}={v}" for k, v in spec.params)


def is_marked(spec: RunSpec) -> str | None:
    """The name the paper gives this run's protocol, if it is one it marks."""
    for name, scheme, params in MARKED:
        if spec.scheme == scheme and spec.params == make_params(**params):
            return name
    return None
