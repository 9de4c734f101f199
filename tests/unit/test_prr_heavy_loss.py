"""prr-heavy-loss: its matrix, the run options it adds to the switched path, its outputs from
hand-made runs, how a run's recovery began, and the claims' pointer to the write-up."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from analysis.claims.checks import EveryGroup
from analysis.claims.model import FAIL, PASS, Cause, Claim, evaluate
from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics
from runkinds.switched_path.recovery_entry import recovery_entry
from core.errors import UsageError
from core.results import ExperimentStore, write_json
from core.tcp_probe_format import CONG_STATE_COLUMNS
from experiments.prr.claims import CLAIMS
from experiments.prr.fig2 import PrrFig2
from experiments.prr.heavy_loss import (FULL_TRIALS, QUICK_VARIANTS, RECOVERIES, VARIANTS,
                                        PrrHeavyLoss, model_predictions, variant_of)
from runkinds.switched_path.options import path_extras, switched_path_options
from tests.unit.prr_fake_run import MONO_AHEAD_S, write_fake_run
from runkinds.switched_path.config import (SwitchedPathConfig, parse_sender_sysctls,
                                           sender_sysctls_text)
from controllers.drop_plan import DropPlan


def test_the_matrix_is_variants_by_recoveries_by_trials() -> None:
    full = PrrHeavyLoss(None).matrix(quick=False)
    assert len(full) == len(VARIANTS) * len(RECOVERIES) * FULL_TRIALS
    assert len({s.run_id() for s in full}) == len(full)
    quick = PrrHeavyLoss(None).matrix(quick=True)
    assert len(quick) == len(QUICK_VARIANTS) * len(RECOVERIES)
    assert {variant_of(s).name for s in quick} == set(QUICK_VARIANTS)  # type: ignore
    assert set(quick) < set(full)  # the quick pass is a part of the full one
    assert len(PrrHeavyLoss(None).matrix(quick=False, trials=7)) == \
        7 * len(VARIANTS) * len(RECOVERIES)
    for spec in full:
        switched_path_options(spec)  # every run's options are ones the run kind takes


def test_the_default_variant_is_prr_fig2s_heavy_run_under_its_own_name() -> None:
    # The same measurement, kept apart: sharing would put its five trials into prr-fig2's
    # plan (a shared run's trials count in every experiment that links it).
    fig2 = {s.option("recovery"): s
            for s in PrrFig2(None, dict(pattern="heavy")).matrix(quick=True)}
    for spec in PrrHeavyLoss(None).matrix(quick=True):
        if variant_of(spec).name == "default":  # type: ignore[union-attr]
            twin = fig2[spec.option("recovery")]
            assert dict(spec.options) == {**dict(twin.options), "variant": "default"}
            assert spec.run_id() != twin.run_id()
    changed = PrrHeavyLoss(None).matrix(quick=True)[0]
    odd = changed.__class__.from_dict({**changed.to_dict(), "options": {
        **dict(changed.options), "variant": "rwnd-10"}})
    assert variant_of(odd) is None  # a variant's name with another variant's settings


def test_sender_settings_parse_check_and_round_trip() -> None:
    pairs = parse_sender_sysctls("tcp_reordering=1, tcp_recovery=5")
    assert pairs == (("net.ipv4.tcp_recovery", "5"), ("net.ipv4.tcp_reordering", "1"))
    assert sender_sysctls_text(pairs) == "tcp_recovery=5,tcp_reordering=1"
    assert parse_sender_sysctls("") == ()
    for bad, message in (("tcp_sack=0", "not a sender setting"),
                         ("tcp_recovery=8", "from 0 to 7"), ("tcp_recovery", "name=value"),
                         ("tcp_reordering=1,tcp_reordering=2", "twice")):
        with pytest.raises(ValueError, match=message):
            parse_sender_sysctls(bad)
    with pytest.raises(ValueError, match="receiver_window"):
        SwitchedPathConfig(plan=DropPlan.parse("heavy"), receiver_window=70000)


def test_the_run_options_become_the_paths_settings() -> None:
    assert path_extras({}) == {"sender_sysctls": (), "receiver_window": None}
    assert path_extras({"sysctls": "tcp_early_retrans=3", "rwnd": 10}) == {
        "sender_sysctls": (("net.ipv4.tcp_early_retrans", "3"),), "receiver_window": 14480}
    spec = PrrHeavyLoss(None).matrix(quick=True)[0]
    bad = spec.__class__.from_dict({**spec.to_dict(),
                                    "options": {**dict(spec.options), "rwnd": 99}})
    with pytest.raises(UsageError, match="rwnd"):
        switched_path_options(bad)


def test_the_model_predicts_every_variant() -> None:
    models = model_predictions()
    assert set(models) == {(v.name, r) for v in VARIANTS for r in RECOVERIES}
    default = models[("default", "rate-halving")]
    assert default["rack"].exit_cwnd == 4 and default["fack"].exit_cwnd == 3
    collapse = models[("rwnd-10", "rate-halving")]["rack"]
    assert collapse.min_cwnd_in_recovery() == 1


def _finished(store: ExperimentStore, spec) -> Path:
    run_dir = store.run_dir(spec)
    meta = write_fake_run(run_dir, spec)
    write_json(run_dir / "metrics.json", transfer_metrics(load_transfer_run(run_dir, meta), meta))
    (run_dir / "DONE").write_text("x\n")
    return run_dir


def test_outputs_from_finished_runs(tmp_path: Path) -> None:
    store = ExperimentStore(tmp_path / "prr-heavy-loss")
    exp = PrrHeavyLoss(None)
    specs = [s for s in exp.matrix(quick=True)
             if variant_of(s).name in ("default", "rwnd-10")]  # type: ignore[union-attr]
    for spec in specs:
        _finished(store, spec)
    names = {f.name for f in exp.make_figures(store, store.root)}
    assert {"summary.csv", "variants.csv", "variants.png", "model-vs-measured.png",
            "model-patterns.csv"} <= names
    rows = list(csv.DictReader(open(store.root / "summary.csv")))
    assert sorted((r["variant"], r["recovery"]) for r in rows) == sorted(
        (v, r) for v in ("default", "rwnd-10") for r in RECOVERIES)
    assert {r["recovery_trigger"] for r in rows} == {"ack"}
    table = list(csv.DictReader(open(store.root / "variants.csv")))
    assert len(table) == 4 and all(r["model_cwnd_exit"] for r in table)
    # The hand-made run's window (exit 7) is not what the model predicts for the default.
    results = {r.id: r for r in exp.evaluate_claims(store).results}
    assert results["model-predicts-exit-cwnd"].verdict == FAIL
    patterns = list(csv.DictReader(open(store.root / "model-patterns.csv")))
    assert {r["pattern"] for r in patterns} == {"light", "heavy", "base"}


def _with_states(run_dir: Path, states: list[tuple[float, int]]) -> None:
    with open(run_dir / "tcp-cong-state.csv", "w") as f:
        f.write(",".join(CONG_STATE_COLUMNS) + "\n")
        for t, state in states:
            f.write(f"{t + MONO_AHEAD_S:.6f},{state}\n")


def test_how_recovery_began(tmp_path: Path) -> None:
    # The hand-made run: ACKs at 0.100 (cumulative), 0.103 ... 0.109 (SACKs); Recovery at
    # 0.1055, 0.5 ms after the ACK at 0.105, the fourth ACK and third duplicate.
    meta = write_fake_run(tmp_path)
    entry = recovery_entry(load_transfer_run(tmp_path, meta))
    assert (entry["recovery_trigger"], entry["entry_ack"], entry["entry_dupacks"]) == \
        ("ack", 4, 3)
    assert entry["entry_after_first_sack_ms"] == pytest.approx(2.5)
    assert entry["cwnd_min_recovery"] == 7  # samples 9 8 8 7 7, and 7 after the exit
    assert entry["rwnd_segments_before_recovery"] == pytest.approx(65535 / 1448)
    # 11 ms after the last ACK, with none between: RACK's timer.
    _with_states(tmp_path, [(0.1025, 1), (0.120, 3), (0.2505, 0)])
    timer = recovery_entry(load_transfer_run(tmp_path, meta))
    assert (timer["recovery_trigger"], timer["entry_ack"]) == ("timer", 8)
    _with_states(tmp_path, [(0.1025, 1), (0.120, 4), (0.2505, 0)])
    assert recovery_entry(load_transfer_run(tmp_path, meta))["recovery_trigger"] == "rto"


def test_a_failing_claim_points_to_its_cause_and_a_passing_one_does_not() -> None:
    check = EveryGroup("cwnd_exit", "<=", 2.0, ("pattern",))
    claim = Claim(id="c", text="t", source="s", paper="p", check=check, mode="both",
                  reason="r", causes=(Cause("docs/x.md#why"),))
    failed = evaluate(claim, [{"pattern": "heavy", "cwnd_exit": 4, "run": "a"}], "quick")
    assert failed.verdict == FAIL and failed.why.endswith("The cause, measured: docs/x.md#why")
    assert "4.00 vs 2.00" in failed.why  # the check's own why is kept
    held = evaluate(claim, [{"pattern": "heavy", "cwnd_exit": 2, "run": "a"}], "quick")
    assert held.verdict == PASS and "docs/x.md" not in held.why


def test_the_heavy_loss_claims_are_judged_on_the_reference_receiver() -> None:
    """What prr-heavy-loss found decides where prr-fig2 judges its heavy-loss claims: on the
    reference's receiver (rwnd-10 here); the variant's own claim points to the write-up."""
    where = {c.id: getattr(c.check, "where") for c in CLAIMS}
    for claim_id in ("rate-halving-collapses-heavy", "prr-faster-heavy", "prr-halves-heavy"):
        assert ("receiver", "reference") in where[claim_id], claim_id
    variant = next(c for c in CLAIMS if c.id == "today-rate-halving-no-collapse")
    assert ("receiver", "today") in where[variant.id]
    assert "docs/prr-fig2.md#heavy-loss-what-decides-the-collapse" in variant.paper
    doc = Path(__file__).resolve().parents[2] / "docs" / "prr-fig2.md"
    assert "## Heavy loss: what decides the collapse" in doc.read_text()
