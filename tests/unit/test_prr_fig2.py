"""prr-fig2: its matrix, its figures and summary from a hand-made run, its claims' verdicts."""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics
from core.results import ExperimentStore, write_json
from experiments.prr.fig2 import OPTIONS, PrrFig2
from analysis.claims.model import FAIL, NOT_RUN, PASS, QUICK, ClaimResult
from analysis.claims.model import evaluate as evaluate_claim
from experiments.prr.claims import CLAIMS, acks_waited
from experiments.registry import get_experiment
from tests.unit.prr_fake_run import write_fake_run


def test_the_matrix_is_patterns_by_sizes_by_recoveries() -> None:
    full = PrrFig2(None).matrix(quick=False)
    # Light and heavy under both receivers (held at 10 segments, and this kernel's); base once.
    assert len(full) == (2 * 2 + 1) * 2 * 4
    cells = {(s.option("pattern"), s.option("size"), s.option("recovery"), s.option("rwnd"))
             for s in full}
    assert len(cells) == len(full)
    assert {(s.option("pattern"), s.option("rwnd")) for s in full} == \
        {("light", 10), ("light", None), ("heavy", 10), ("heavy", None), ("base", None)}
    assert {s.scheme for s in full} == {"cubic"}
    assert len({s.option("controller") for s in full}) == 1
    assert all(s.option("controller") in ("pox", "os-ken", "auto") and s.delay_ms == 20
               and s.data_trace == "rate:10" for s in full)
    quick = PrrFig2(None).matrix(quick=True)
    assert {s.option("size") for s in quick} == {32768} and len(quick) == 20
    assert len({s.run_id() for s in PrrFig2(None).matrix(quick=True, trials=2)}) == 40
    assert get_experiment("prr-fig2", PrrFig2(None).traces).name == "prr-fig2"


def test_auto_becomes_the_controller_that_would_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    from controllers import launcher
    from controllers.launcher import ControllerChoice, ControllerUnavailable
    monkeypatch.setattr(launcher, "choose_controller",
                        lambda requested: ControllerChoice("os-ken", requested, "1", "test"))
    assert {s.option("controller") for s in PrrFig2(None).matrix(quick=True)} == {"os-ken"}

    def none(requested: str) -> ControllerChoice:
        raise ControllerUnavailable("no controller")
    monkeypatch.setattr(launcher, "choose_controller", none)
    # Nothing can serve: the runs keep `auto` and fail with the launcher's message.
    assert {s.option("controller") for s in PrrFig2(None).matrix(quick=True)} == {"auto"}
    pox = PrrFig2(None, dict(controller="pox"))
    assert {s.option("controller") for s in pox.matrix(quick=True)} == \
        {"pox"}


def test_options_narrow_the_matrix_and_are_part_of_the_id() -> None:
    one = PrrFig2(None, dict(pattern="heavy", size=65536, recovery="rfc3517", cc="reno",
                  controller="pox", bottleneck=100, rtt=20,
                  receiver="reference")).matrix(quick=True)
    assert len(one) == 1
    spec = one[0]
    assert (spec.scheme, spec.option("controller"), spec.data_trace, spec.delay_ms) == \
        ("reno", "pox", "rate:100", 10)
    assert spec.run_id() != PrrFig2(None, dict(pattern="heavy", size=65536, recovery="rfc3517",
                                    cc="reno", controller="os-ken", bottleneck=100,
                                    rtt=20, receiver="reference")).matrix(quick=True)[0].run_id()
    assert {o.name for o in OPTIONS} == {"pattern", "size", "recovery", "cc", "controller",
                                         "bottleneck", "rtt", "receiver"}


def test_the_receiver_option_chooses_the_set_ups_and_labels_each_run() -> None:
    from experiments.prr.fig2 import losses_in_first_window, receiver_of
    assert losses_in_first_window("light") and losses_in_first_window("heavy")
    assert losses_in_first_window("1,2,10") and not losses_in_first_window("base")
    assert not losses_in_first_window("9-11") and not losses_in_first_window("nonsense")
    reference = PrrFig2(None, dict(receiver="reference")).matrix(quick=True)
    today = PrrFig2(None, dict(receiver="today")).matrix(quick=True)
    assert {(s.option("pattern"), s.option("rwnd")) for s in reference} == \
        {("light", 10), ("heavy", 10), ("base", None)}
    assert {(s.option("pattern"), s.option("rwnd")) for s in today} == \
        {("light", None), ("heavy", None), ("base", None)}
    assert {receiver_of(s) for s in reference} == {"reference"}
    # Base is one run for both set-ups, judged as the reference's.
    assert {(s.option("pattern"), receiver_of(s)) for s in today} == \
        {("light", "today"), ("heavy", "today"), ("base", "reference")}
    # A run made before the option, with this kernel's receiver, is today's variant.
    assert all(s in PrrFig2(None).matrix(quick=True) for s in today)


@pytest.mark.parametrize("kwargs, message", [
    ({"recovery": "fack"}, "--recovery: 'fack' is not one of all, rate-halving"),
    ({"cc": "bbr"}, "--cc: 'bbr' is not one of cubic, reno"),
    ({"controller": "ryu"}, "--controller: 'ryu' is not one of auto, pox, os-ken"),
    ({"rtt": 41}, "--rtt: 41 is odd: the RTT is split evenly"),
    ({"pattern": "medium"}, "unknown drop pattern 'medium'"),
    ({"pattern": "3-1"}, "must be 1 <= N <= M"),
])
def test_bad_options_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PrrFig2(None, kwargs)


def _finished(store: ExperimentStore, spec, tmp: Path) -> Path:
    run_dir = store.run_dir(spec)
    meta = write_fake_run(run_dir, spec)
    write_json(run_dir / "metrics.json", transfer_metrics(load_transfer_run(run_dir, meta), meta))
    (run_dir / "DONE").write_text("x\n")
    return run_dir


def test_figures_summary_and_claims_from_finished_runs(tmp_path: Path) -> None:
    """A hand-made results folder: summary and figures from make_figures; the claims from
    the shared mechanism, as report and verify evaluate them."""
    store = ExperimentStore(tmp_path / "prr-fig2")
    specs = [s for s in PrrFig2(None, dict(pattern="light")).matrix(quick=True)
             if s.option("recovery") in ("rate-halving", "prr-kernel")]
    for spec in specs:
        _finished(store, spec, tmp_path)
    exp = PrrFig2(None, dict(pattern="light"))
    files = exp.make_figures(store, store.root)
    names = {f.name for f in files}
    controller = specs[0].option("controller")
    assert {"summary.csv", f"prr-light-32k-cubic-{controller}.png",
            f"prr-light-32k-cubic-{controller}.svg",
            f"prr-light-32k-cubic-{controller}-today-receiver.png"} <= names
    rows = list(csv.DictReader(open(store.root / "summary.csv")))
    assert [(r["receiver"], r["recovery"]) for r in rows] == [
        ("reference", "rate-halving"), ("reference", "prr-kernel"),
        ("today", "rate-halving"), ("today", "prr-kernel")]
    assert [r["rwnd_segments"] for r in rows] == ["10", "10", "", ""]
    rows = rows[:2]
    assert rows[0]["drops_as_planned"] == "True" and rows[0]["controller"] == "os-ken"
    assert rows[0]["cwnd_exit"] == "7" and rows[0]["transfer_time_s"] == "0.2"
    report = exp.evaluate_claims(store)
    claims = {r.id: r for r in report.results}
    assert set(claims) == {c.id for c in CLAIMS}
    assert claims["prr-exits-at-ssthresh"].verdict == PASS  # cwnd 7 = ssthresh 7
    # The paper's claims stand on the reference's runs: the prr-kernel run, held at 10.
    assert len(claims["prr-exits-at-ssthresh"].runs) == 1
    assert claims["rate-halving-ends-below"].verdict == FAIL  # the same made-up numbers
    assert claims["prr-faster-heavy"].verdict == NOT_RUN  # no heavy pattern on record
    assert claims["ssthresh-is-beta-of-window"].verdict == PASS  # 7 = 0.7 x 10
    assert len(claims["ssthresh-is-beta-of-window"].runs) == 4  # ours: both receivers


def _row(recovery: str, pattern: str = "heavy", **values) -> dict:
    row = {"pattern": pattern, "size_bytes": 32768, "recovery": recovery, "cc": "cubic",
           "receiver": "reference", "controller": "pox", "bottleneck_mbps": 10.0, "rtt_ms": 40,
           "drops_as_planned": True, "run": f"{pattern}-{recovery}-{len(values)}"}
    row.update(values)
    row["acks_waited"] = acks_waited(row)
    return row


def _claim(claim_id: str):
    return next(c for c in CLAIMS if c.id == claim_id)


def evaluate(claim, rows) -> ClaimResult:
    return evaluate_claim(claim, rows, QUICK, "prr-fig2")


def test_every_claim_says_not_run_without_rows() -> None:
    for claim in CLAIMS:
        assert evaluate(claim, []).verdict == NOT_RUN, claim.id
        assert claim.reason.strip() and claim.tolerance_text().strip()


def test_exit_at_ssthresh_within_one_segment() -> None:
    claim = _claim("prr-exits-at-ssthresh")
    assert evaluate(claim, [_row("prr-kernel", cwnd_exit=8, ssthresh_exit=7)]).verdict == PASS
    assert evaluate(claim, [_row("prr-kernel", cwnd_exit=5, ssthresh_exit=7)]).verdict == FAIL
    # An invalid run never counts.
    assert evaluate(claim, [_row("prr-kernel", cwnd_exit=5, ssthresh_exit=7,
                                 drops_as_planned=False)]).verdict == NOT_RUN
    # Every cell must hold, each controller's apart.
    both = [_row("prr-bpf", cwnd_exit=7, ssthresh_exit=7),
            dict(_row("prr-bpf", cwnd_exit=4, ssthresh_exit=7), controller="os-ken")]
    result = evaluate(claim, both)
    assert result.verdict == FAIL and "os-ken" in result.why and "1 of 2" in result.ours
    # A recovery the claim does not name is not looked at.
    assert evaluate(claim, [_row("rfc3517", cwnd_exit=3, ssthresh_exit=7)]).verdict == NOT_RUN


def test_ssthresh_ratio_uses_the_cc_beta() -> None:
    claim = _claim("ssthresh-is-beta-of-window")
    assert evaluate(claim, [_row("rfc3517", cwnd_entry=10, ssthresh_entry=7)]).verdict == PASS
    assert evaluate(claim, [_row("rfc3517", cwnd_entry=10, ssthresh_entry=5)]).verdict == FAIL
    reno = dict(_row("rfc3517", cwnd_entry=10, ssthresh_entry=5), cc="reno")
    assert evaluate(claim, [reno]).verdict == PASS
    bbr = dict(_row("rfc3517", cwnd_entry=10, ssthresh_entry=1), cc="bbr")
    assert evaluate(claim, [bbr]).verdict == NOT_RUN  # no beta declared for it


def test_rate_halving_collapse_and_below() -> None:
    assert evaluate(_claim("rate-halving-collapses-heavy"),
                    [_row("rate-halving", cwnd_exit=2)]).verdict == PASS
    # The paper's claim is not judged on the variant's receiver.
    assert evaluate(_claim("rate-halving-collapses-heavy"),
                    [_row("rate-halving", cwnd_exit=4, receiver="today")]).verdict == NOT_RUN
    assert evaluate(_claim("rate-halving-collapses-heavy"),
                    [_row("rate-halving", cwnd_exit=3)]).verdict == FAIL
    assert evaluate(_claim("rate-halving-collapses-heavy"),
                    [_row("rate-halving", "light", cwnd_exit=3)]).verdict == NOT_RUN
    assert evaluate(_claim("rate-halving-ends-below"),
                    [_row("rate-halving", cwnd_exit=6, ssthresh_exit=7)]).verdict == PASS
    assert evaluate(_claim("rate-halving-ends-below"),
                    [_row("rate-halving", cwnd_exit=7, ssthresh_exit=7)]).verdict == FAIL


def test_medians_over_trials_decide_paired_claims() -> None:
    claim = _claim("prr-faster-heavy")
    rows = [_row("prr-kernel", transfer_time_s=t) for t in (0.3, 0.31, 2.0)]
    rows += [_row("rate-halving", transfer_time_s=t) for t in (0.6, 0.62, 0.1)]
    result = evaluate(claim, rows)
    assert result.verdict == PASS, result.ours  # medians 0.31 vs 0.6
    assert len(result.runs) >= 1 and evaluate(_claim("prr-halves-heavy"), rows).verdict == PASS
    rows = [_row("prr-kernel", transfer_time_s=0.58), _row("rate-halving", transfer_time_s=0.6)]
    assert evaluate(claim, rows).verdict == FAIL  # 0.97: not 10% faster
    rows = [_row("prr-kernel", transfer_time_s=0.5), _row("rate-halving", transfer_time_s=0.6)]
    assert evaluate(claim, rows).verdict == PASS  # 0.83
    assert evaluate(_claim("prr-halves-heavy"), rows).verdict == FAIL  # not about half
    # A recovery alone in its cell has nothing to be compared with.
    assert evaluate(claim, rows[:1]).verdict == NOT_RUN


def test_bursts_must_be_larger_somewhere_and_waiting_counts_silence() -> None:
    claim = _claim("rfc3517-bursts")
    same = [_row("rfc3517", max_burst=2), _row("prr-kernel", max_burst=2)]
    assert evaluate(claim, same).verdict == FAIL
    larger = [_row("rfc3517", max_burst=5), _row("prr-kernel", max_burst=2)]
    assert evaluate(claim, larger).verdict == PASS
    smaller = [_row("rfc3517", max_burst=1), _row("prr-kernel", max_burst=2)]
    assert evaluate(claim, larger + [dict(r, pattern="light") for r in smaller]).verdict == FAIL
    waits = _claim("rfc3517-waits")
    silent = [_row("rfc3517", "base", acks_before_new=None, new_in_recovery=0, recovery_acks=9,
                   unsent_at_recovery_bytes=5000),
              _row("prr-kernel", "base", acks_before_new=1, new_in_recovery=6,
                   unsent_at_recovery_bytes=5000)]
    assert evaluate(waits, silent).verdict == PASS
    eager = [_row("rfc3517", "base", acks_before_new=0, new_in_recovery=4,
                  unsent_at_recovery_bytes=5000),
             _row("prr-kernel", "base", acks_before_new=1, new_in_recovery=6,
                  unsent_at_recovery_bytes=5000)]
    assert evaluate(waits, eager).verdict == FAIL
    # Everything was sent before recovery: nothing to hold back, the cell does not count.
    all_out = [dict(r, unsent_at_recovery_bytes=0) for r in silent]
    assert evaluate(waits, all_out).verdict == NOT_RUN


def _make_window_absurd(run_dir: Path, value: int = 2183148773) -> None:
    """Rewrite the first Recovery sample's cwnd and ssthresh (as one real run showed them)."""
    path = run_dir / "tcp-probe.csv"
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines[1:], start=1):
        cols = line.split(",")
        if cols[-1] == "3":
            cols[1] = cols[2] = str(value)
            lines[i] = ",".join(cols)
            break
    path.write_text("\n".join(lines) + "\n")


def test_a_run_with_an_absurd_window_is_invalid_and_never_plotted(tmp_path: Path) -> None:
    from app.executor import judge
    from core.errors import RunInvalid
    from runkinds.metrics import derive

    store = ExperimentStore(tmp_path / "prr-fig2")
    specs = [s for s in PrrFig2(None, dict(pattern="light", receiver="reference"))
             .matrix(quick=True) if s.option("recovery") in ("rate-halving", "rfc3517")]
    dirs = {s.option("recovery"): _finished(store, s, tmp_path) for s in specs}
    _make_window_absurd(dirs["rfc3517"])
    meta = write_fake_run(tmp_path / "fresh", specs[0])
    _make_window_absurd(tmp_path / "fresh")
    with pytest.raises(RunInvalid, match="absurd kernel window: snd_cwnd 2183148773"):
        judge(specs[0], derive(tmp_path / "fresh", specs[0], meta), meta)
    PrrFig2(None, dict(receiver="reference")).make_figures(store, store.root)
    rows = list(csv.DictReader(open(store.root / "summary.csv")))
    assert [r["recovery"] for r in rows] == ["rate-halving"]


def test_bpf_prr_matches_the_kernel_in_each_cell() -> None:
    claim = _claim("bpf-prr-matches-kernel")
    assert evaluate(claim, [_row("prr-bpf", cwnd_exit=8),
                            _row("prr-kernel", cwnd_exit=7)]).verdict == PASS
    assert evaluate(claim, [_row("prr-bpf", cwnd_exit=9),
                            _row("prr-kernel", cwnd_exit=7)]).verdict == FAIL


def test_verify_rederives_a_prr_folder_and_shows_its_claims(tmp_path: Path) -> None:
    """`repro verify` on a hand-made PRR results folder (no data.log: the metrics come
    from the captures and the tcp_probe trace), then the same folder with one number
    edited by hand."""
    from app.publish.verify import EXIT_FAILED, verify_experiment
    from analysis.rederive import DIFFERS, MATCH
    store = ExperimentStore(tmp_path / "prr-fig2")
    exp = PrrFig2(None, dict(pattern="light", receiver="reference"))
    specs = [s for s in exp.matrix(quick=True)
             if s.option("recovery") in ("prr-kernel", "prr-bpf")]
    dirs = [_finished(store, spec, tmp_path) for spec in specs]
    verdict = verify_experiment(exp, tmp_path)
    assert verdict.count(MATCH) == 2 and verdict.left_out == 0
    assert verdict.claims is not None
    claims = {r.id: r.verdict for r in verdict.claims.results}
    assert claims["prr-exits-at-ssthresh"] == PASS
    assert claims["bpf-prr-matches-kernel"] == PASS
    assert claims["rate-halving-ends-below"] == NOT_RUN
    metrics = json.loads((dirs[0] / "metrics.json").read_text())
    metrics["cwnd_exit"] = 2
    (dirs[0] / "metrics.json").write_text(json.dumps(metrics))
    done = (dirs[0] / "DONE").stat().st_mtime
    os.utime(dirs[0] / "metrics.json", (done + 10, done + 10))
    again = verify_experiment(exp, tmp_path)
    assert again.count(DIFFERS) == 1 and again.claims is not None
    # The claims use the re-derived numbers, not the edited one.
    assert {r.id: r.verdict for r in again.claims.results}["prr-exits-at-ssthresh"] == PASS
    assert again.problems()[0] and EXIT_FAILED == 1


def test_each_row_carries_the_model_s_prediction_for_its_cell() -> None:
    from experiments.prr.fig2 import summary_row
    from experiments.prr.fig2_predictions import predict
    spec = next(s for s in PrrFig2(None, dict(pattern="base", size=65536, cc="reno"))
                .matrix(quick=False) if s.option("recovery") == "rate-halving")
    row = summary_row(spec, {"cwnd_exit": 8}, {}, "a-run")
    assert (row["model_cwnd_exit"], row["linux3_cwnd_exit"]) == (8, 8)
    assert (row["model_acks_waited"], row["linux3_acks_waited"]) == (8, 6)
    # What the model does not have, or cannot read, is left empty, not guessed.
    assert set(predict("base", 65536, "bbr", "rate-halving", 10, 40).values()) == {None}
    assert set(predict("1-x", 65536, "cubic", "rate-halving", 10, 40).values()) == {None}
    assert set(predict("base", 65536, "cubic", "other", 10, 40).values()) == {None}


def test_the_model_claims_fail_on_a_cell_the_model_misses_by_two() -> None:
    def row(measured: int) -> dict:
        return _row("rate-halving", cwnd_exit=measured, acks_before_new=measured,
                    model_cwnd_exit=5, model_acks_waited=5)
    for claim_id in ("model-predicts-cwnd-exit", "model-predicts-acks-waited"):
        assert evaluate(_claim(claim_id), [row(4)]).verdict == PASS, claim_id
        assert evaluate(_claim(claim_id), [row(3)]).verdict == FAIL, claim_id
