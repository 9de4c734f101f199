"""The contest figures' claims (warm-ups B and C, the region, training against testing) on
hand-made runs, end to end: run folders in a store, the experiment's own claim rows, its
claims. Each case is built to sit on a known side of a claim's tolerance (just inside, just
beyond, or missing what the claim needs), so the verdicts follow from the claims' words."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.contest.families import TESTING, is_marked
from experiments.contest.region import ContestRegion
from experiments.contest.train_test import ContestTrainTest
from experiments.contest.warmup_b import ContestWarmupB
from experiments.contest.warmup_c import ContestWarmupC
from tests.unit.fake_runs import add_done

NO_TRACES = TraceSet([], Path("/nonexistent"), manifest={})
PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"

Metrics = Callable[[RunSpec], "dict[str, Any] | None"]  # None: the run is not on record


def verdicts(tmp_path: Path, experiment: Experiment, metrics: Metrics,
             trials: int = 1) -> dict[str, str]:
    store = ExperimentStore(tmp_path / experiment.name)
    for spec in experiment.matrix(quick=True, trials=trials):
        values = metrics(spec)
        if values is not None:
            add_done(store, spec, lateness_ok=True, **values)
    return {r.id: r.verdict for r in experiment.evaluate_claims(store).results}


def _p(spec: RunSpec, name: str) -> Any:
    return dict(spec.params)[name]


# ---- warm-up B: AIMD, delay and throughput fall as the decrease factor rises (each timeout);
# the tolerance: a rise of up to 10% between neighbouring factors.

B_FALL = {2: 1.0, 4: 0.8, 6: 0.6}


def aimd(delay_step: float = 0.0, tput_step: float = 0.0, only: Any = None,
         timeout: int = 100) -> Metrics:
    """Falling in the factor on both timeouts; at `timeout`, the value at factor 6 is the one
    at factor 4 times (1 + step): a rise of `step` between neighbours."""
    def metrics(spec: RunSpec) -> dict[str, Any] | None:
        d, t = _p(spec, "decrease"), _p(spec, "timeout_ms")
        if only is not None and d not in only:
            return None
        delay = 200.0 * (B_FALL[d] if not (t == timeout and d == 6) else
                         B_FALL[4] * (1 + delay_step)) * (1 + t / 1000)
        tput = 3.0 * (B_FALL[d] if not (t == timeout and d == 6) else
                      B_FALL[4] * (1 + tput_step))
        return {"p95_signal_delay_ms": delay, "throughput_mbps": tput, "score": 0.0}
    return metrics


B_CASES: list[tuple[str, Metrics, Any]] = [
    ("falling", aimd(), (PASS, PASS)),
    ("a 9% rise in delay", aimd(delay_step=0.09), (PASS, PASS)),
    ("a 9% rise in delay at the other timeout", aimd(delay_step=0.09, timeout=1000), (PASS, PASS)),
    # 10.5%: beyond a rise of 10% over the lower neighbour, though within a dip of 10% of the
    # higher one (1/0.9 = 11.1%): the tolerance is the former.
    ("a 10.5% rise in delay", aimd(delay_step=0.105), (FAIL, PASS)),
    ("a 12% rise in delay", aimd(delay_step=0.12, timeout=1000), (FAIL, PASS)),
    ("a 10.5% rise in throughput", aimd(tput_step=0.105), (PASS, FAIL)),
    ("one factor per timeout", aimd(only=(2,)), (NOT_RUN, NOT_RUN)),
    ("two factors per timeout", aimd(delay_step=0.5, only=(4, 6)), (FAIL, PASS)),
]


@pytest.mark.parametrize("case, metrics, expected", B_CASES, ids=[c[0] for c in B_CASES])
def test_warmup_b(tmp_path: Path, case: str, metrics: Metrics, expected: tuple) -> None:
    got = verdicts(tmp_path, ContestWarmupB(NO_TRACES), metrics)
    assert (got["decrease-lowers-delay"], got["decrease-lowers-throughput"]) == expected, case


# ---- warm-up C: the delay trigger, end-to-end delay rises with the shrink-above threshold
# (each grow-below threshold); the tolerance: a fall of up to 10% between neighbours.

def trigger(dip: float = 0.0, pairs: Any = None, spread: float = 0.0) -> Metrics:
    """Rising in the upper threshold; at low 40, the value at 200 is the one at 100 times
    (1 - dip). With trials, trial 2 is `spread` above trial 1."""
    def metrics(spec: RunSpec) -> dict[str, Any] | None:
        low, high = _p(spec, "low_rtt_ms"), _p(spec, "high_rtt_ms")
        if pairs is not None and (low, high) not in pairs:
            return None
        delay = 50.0 + high if not (low == 40 and high == 200) else (50.0 + 100) * (1 - dip)
        delay *= 1 + (spread if spec.trial == 2 else 0.0)
        return {"p95_e2e_delay_ms": delay, "score": 0.0}
    return metrics


C_CASES: list[tuple[str, Metrics, Any]] = [
    ("rising", trigger(), PASS),
    ("a 9% fall", trigger(dip=0.09), PASS),
    ("an 11% fall", trigger(dip=0.11), FAIL),
    ("one threshold per group", trigger(pairs={(40, 40), (100, 100), (200, 200)}), NOT_RUN),
    ("one group with two thresholds", trigger(dip=0.3, pairs={(40, 100), (40, 200)}), FAIL),
]


@pytest.mark.parametrize("case, metrics, expected", C_CASES, ids=[c[0] for c in C_CASES])
def test_warmup_c(tmp_path: Path, case: str, metrics: Metrics, expected: str) -> None:
    got = verdicts(tmp_path, ContestWarmupC(NO_TRACES), metrics)
    assert got["shrink-threshold-sets-delay"] == expected, case


def test_warmup_c_with_two_trials_a_setting(tmp_path: Path) -> None:
    # Trials 2% apart: both rising series, and the trials' spread is no fall.
    got = verdicts(tmp_path, ContestWarmupC(NO_TRACES), trigger(spread=0.02), trials=2)
    assert got["shrink-threshold-sets-delay"] == PASS


# ---- the region: Sprout on the frontier (a vertex, or at most 5% below it), the winners'
# scores at least Sprout's minus 0.10.

def region(sprout_tput: float | None = 2.5, scores: dict[str, float | None] | None = None
           ) -> Metrics:
    """Two anchors span the frontier: 100 ms at 1 Mbit/s and 1000 ms at 4 Mbit/s, so at
    10^2.5 ms (Sprout's delay) the frontier is at 2.5 Mbit/s (linear in log delay). Every other
    protocol sits inside, at 2000 ms and 0.5 Mbit/s."""
    given: dict[str, float | None] = {"Sprout": -3.0, "dasjoshma": -2.9, "johnnybameesh": -3.0,
                                      **(scores or {})}

    def metrics(spec: RunSpec) -> dict[str, Any] | None:
        name = is_marked(spec)
        params = dict(spec.params)
        score = given.get(name, -5.0) if name else -5.0
        if name and given.get(name, 0.0) is None:
            return None
        if name == "Sprout":
            if sprout_tput is None:
                return None
            delay, tput = 10 ** 2.5, sprout_tput
        elif spec.scheme == "fixed-window" and params.get("window") == 1:
            delay, tput = 100.0, 1.0
        elif spec.scheme == "fixed-window" and params.get("window") == 100:
            delay, tput = 1000.0, 4.0
        else:
            delay, tput = 2000.0, 0.5
        return {"p95_e2e_delay_ms": delay, "throughput_mbps": tput, "score": score,
                "p95_signal_delay_ms": delay, "power": 1.0, "utilization": 0.5,
                "capacity_mbps": 5.0}
    return metrics


REGION_CASES: list[tuple[str, Metrics, Any]] = [
    ("Sprout above the chord, winners ahead and level", region(2.6), (PASS, PASS, PASS)),
    ("Sprout on the chord", region(2.5), (PASS, PASS, PASS)),
    ("Sprout 4% below", region(2.5 * 0.96), (PASS, PASS, PASS)),
    ("Sprout 6% below", region(2.5 * 0.94), (FAIL, PASS, PASS)),
    ("winners 0.09 and 0.11 behind",
     region(scores={"dasjoshma": -3.09, "johnnybameesh": -3.11}), (PASS, PASS, FAIL)),
    ("no dasjoshma", region(scores={"dasjoshma": None}), (PASS, NOT_RUN, PASS)),
    ("no Sprout", region(None), (NOT_RUN, NOT_RUN, NOT_RUN)),
]


@pytest.mark.parametrize("case, metrics, expected", REGION_CASES, ids=[c[0] for c in REGION_CASES])
def test_region(tmp_path: Path, case: str, metrics: Metrics, expected: tuple) -> None:
    got = verdicts(tmp_path, ContestRegion(NO_TRACES), metrics)
    assert (got["sprout-on-frontier"], got["dasjoshma-vs-sprout"],
            got["johnnybameesh-vs-sprout"]) == expected, case


# ---- training against testing: the order by score is not kept (Spearman's rho below 0.95,
# over at least 5 protocols).

def knob(spec: RunSpec) -> float:
    """A number per protocol, distinct enough to order them (ties allowed)."""
    return sum(float(v) for _, v in spec.params) + len(spec.scheme)


def train_test(order: str, protocols: int | None = None) -> Metrics:
    kept: set = set()

    def metrics(spec: RunSpec) -> dict[str, Any] | None:
        key = (spec.scheme, spec.params)
        if protocols is not None and key not in kept:
            if len(kept) >= protocols:
                return None
            kept.add(key)
        k = knob(spec)
        testing = spec.data_trace.startswith(TESTING)
        score = -k if not testing else {"same": -k, "reversed": k}[order]
        return {"score": score, "throughput_mbps": 1.0, "utilization": 0.5,
                "p95_e2e_delay_ms": 100.0, "capacity_mbps": 2.0}
    return metrics


TRAIN_TEST_CASES: list[tuple[str, Metrics, Any]] = [
    ("the same order", train_test("same"), FAIL),
    ("the order reversed", train_test("reversed"), PASS),
    ("four protocols", train_test("reversed", protocols=4), NOT_RUN),
]


@pytest.mark.parametrize("case, metrics, expected", TRAIN_TEST_CASES,
                         ids=[c[0] for c in TRAIN_TEST_CASES])
def test_train_test(tmp_path: Path, case: str, metrics: Metrics, expected: str) -> None:
    got = verdicts(tmp_path, ContestTrainTest(NO_TRACES), metrics)
    assert got["ranking-disperses"] == expected, case
