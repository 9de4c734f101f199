"""The window check on every flow of a TCP run over the trace path, from hand-built probe
traces: a sane two-way run, one whose second (reverse) flow got an absurd ssthresh, Hybla's
clamp, an unrecorded flow; then how such a run is left out of sprout-fig7's figure and
counted by `repro verify`."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from analysis.coverage import coverage
from runkinds.trace_path.metrics import REVERSE, trace_path_metrics
from analysis.summary import INVALID
from analysis.tcp_window_check import (FORWARD, OK, check_flows, check_tcp_windows, ss_mss,
                                       tcp_window_metrics)
from analysis.window_sanity import HYBLA_CWND_CLAMP, INFINITE_SSTHRESH
from app.executor import execute
from app.publish.verify import emit, verify_results
from core.paths import ProjectPaths
from core.results import DONE, SPEC, ExperimentStore
from core.run_span import BOTH, DIRECTIONS, ONE
from core.runspec import RunSpec, make_params
from app.recorded_options import write_record
from experiments.sprout.fig7 import SproutFig7
from core.errors import RunInvalid
from core.tcp_probe_format import (CA_DISORDER, CA_LOSS, CA_OPEN, CA_RECOVERY, PROBE_COLUMNS,
                                   PROBE_FILE)
from tests.unit.fake_runs import add_done, trace_set, write_link_log, write_trace

MSS = 1448
INF = INFINITE_SSTHRESH
# The value both flows of a two-way eBPF Hybla sprout-fig7 run got at a timeout: the low half
# of a kernel text address (docs/prr-recoveries.md).
GARBAGE = 2183148773
CLIENT_PORT = 20000
# Rows: (cwnd, ssthresh, segments in flight, state); one ACK every 10 ms.
Rows = list[tuple[int, int, int, int]]

# A Cubic flow: slow start from IW10, a loss at 40 in flight, ssthresh 0.7 x 40, recovery, on.
SANE: Rows = [(10, INF, 10, CA_OPEN), (20, INF, 20, CA_OPEN), (40, INF, 40, CA_OPEN),
              (40, INF, 40, CA_DISORDER), (40, 28, 40, CA_RECOVERY), (28, 28, 30, CA_RECOVERY),
              (28, 28, 28, CA_OPEN), (29, 28, 29, CA_OPEN)]
# The same flow, except that the retransmission timeout's ssthresh is the stale kernel word.
ABSURD: Rows = SANE[:4] + [(1, GARBAGE, 40, CA_LOSS), (2, GARBAGE, 40, CA_LOSS),
                           (4, GARBAGE, 36, CA_OPEN)]


def write_probe(folder: Path, rows: Rows, una: int = 5000, mss: int = MSS) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / PROBE_FILE, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(PROBE_COLUMNS)
        for i, (cwnd, ssthresh, flight, state) in enumerate(rows):
            nxt = (una + flight * mss) % (1 << 32)
            out.writerow([f"{100 + i * 0.01:.6f}", cwnd, ssthresh, 40000, nxt, una, 65535,
                          state])


def ss_sample(local: int, peer: int, mss: int = MSS) -> str:
    """`ss -tin` as the run samples it: a header, then each connection on two lines."""
    return ("State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"
            f"ESTAB 0 0 [::ffff:10.0.0.2]:{local} [::ffff:10.0.0.1]:{peer}\n"
            f"\t cubic wscale:9,9 rto:268 rtt:65.0/32.5 mss:{mss} pmtu:1500 cwnd:10\n")


def tcp_spec(scheme: str = "cubic", two_way: bool = True) -> RunSpec:
    return RunSpec(experiment="sprout-fig7", scheme=scheme, data_trace="Verizon-LTE-short.down",
                   ack_trace="Verizon-LTE-short.up", delay_ms=20, duration_s=40.0,
                   options=make_params(**{DIRECTIONS: BOTH if two_way else ONE}))


def tcp_run(run_dir: Path, forward: Rows | None, reverse: Rows | None,
            cc: str = "cubic", two_way: bool = True) -> tuple[RunSpec, dict[str, Any]]:
    """A TCP run's folder as the trace path leaves it: the link logs, the probe trace of each
    flow (None: not recorded), the ss samples and meta.json's verification facts."""
    spec = tcp_spec(cc, two_way)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / SPEC).write_text(json.dumps(spec.to_dict()))
    write_link_log(run_dir / "data.log", every_ms=2, delay_ms=30)
    write_link_log(run_dir / "ack.log", every_ms=3, delay_ms=20)
    recorded = {"status": "recorded", "client_port": CLIENT_PORT, "server_port": 5201}
    unavailable = {"status": "unavailable", "reason": "tracefs is not mounted"}
    verification: dict[str, Any] = {
        "cc_requested": cc, "cc_used": cc, "cc_provider": "builtin",
        "tcp_probe": recorded if forward is not None else unavailable}
    if forward is not None:
        write_probe(run_dir, forward)
        (run_dir / "ss-sample.txt").write_text(ss_sample(CLIENT_PORT, 5201))
    if two_way:
        verification["cc_used_reverse"] = cc
        verification["tcp_probe_reverse"] = (
            dict(recorded, client_port=CLIENT_PORT + 1) if reverse is not None else unavailable)
        if reverse is not None:
            write_probe(run_dir / "reverse", reverse, una=(1 << 32) - 5 * MSS)
            (run_dir / "ss-sample-reverse.txt").write_text(ss_sample(5201, CLIENT_PORT + 1))
    meta = {"spec": spec.to_dict(), "duration_s": spec.duration_s, "verification": verification,
            "link": {"a2b": {"lateness_us": {"p99": 100}}, "b2a": {"lateness_us": {"p99": 50}}}}
    (run_dir / "meta.json").write_text(json.dumps(meta))
    return spec, meta


def test_a_sane_two_way_run_is_valid_in_both_flows(tmp_path: Path) -> None:
    spec, meta = tcp_run(tmp_path / "run", SANE, SANE)
    m = trace_path_metrics(tmp_path / "run", spec, meta)
    assert m["window_valid"] is True and m["window_verdict"] == OK
    assert m["window_flows"] == {"forward": OK, "reverse": OK}
    checks = check_flows(tmp_path / "run", spec, meta)
    # The bound is 10 x the larger of IW10 and the most in flight (40), in both flows (the
    # reverse one's sequence numbers wrap, its MSS is the one its socket showed).
    assert [(c.verdict.reference, c.verdict.limit) for c in checks if c.verdict] == \
        [(40, 400), (40, 400)]
    check_tcp_windows(m)  # does not raise


def test_an_absurd_ssthresh_in_the_second_flow_makes_the_run_invalid(tmp_path: Path) -> None:
    spec, meta = tcp_run(tmp_path / "run", SANE, ABSURD)
    m = trace_path_metrics(tmp_path / "run", spec, meta)
    assert m["window_valid"] is False
    assert m["window_flows"]["forward"] == OK
    reason = m["window_flows"]["reverse"]
    assert reason == m["window_verdict"]
    assert reason.startswith("absurd kernel window in the reverse flow: snd_cwnd 1 "
                             f"(ssthresh {GARBAGE}, state {CA_LOSS}) at probe time 100.040000 s")
    assert "(40 segments)" in reason
    # The run's link metrics are still there: the verdict is added, nothing is hidden.
    assert m["throughput_mbps"] > 0 and m[REVERSE]["throughput_mbps"] > 0
    with pytest.raises(RunInvalid, match="absurd kernel window in the reverse flow"):
        check_tcp_windows(m)


def test_the_executor_fails_a_run_whose_metrics_find_an_absurd_window(tmp_path: Path) -> None:
    # The check reads the verdict the run's metrics carry: one parse of the probe traces.
    def measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: Any,
                meta: dict[str, Any]) -> None:
        _, made = tcp_run(out, SANE, ABSURD)
        meta.update(made)

    paths = ProjectPaths(results_override=tmp_path / "results")
    store = ExperimentStore(tmp_path / "results" / "sprout-fig7")
    outcome = execute(tcp_spec(), store, paths, trace_set(tmp_path / "traces"), measure=measure)
    assert not outcome.ok
    assert outcome.reason.startswith("RunInvalid: absurd kernel window in the reverse flow")
    assert not store.is_done(tcp_spec())
    assert (outcome.path / "reverse" / PROBE_FILE).is_file(), "its artifacts are kept"


def test_both_flows_absurd_give_both_reasons(tmp_path: Path) -> None:
    spec, meta = tcp_run(tmp_path / "run", ABSURD, ABSURD)
    m = tcp_window_metrics(tmp_path / "run", spec, meta)
    assert m["window_valid"] is False
    assert "in the forward flow" in m["window_verdict"]
    assert "in the reverse flow" in m["window_verdict"]


def test_hybla_may_reach_its_clamp_whatever_its_flight(tmp_path: Path) -> None:
    # Hybla's slow start adds 2^rho - 1 segments per ACK: at a long RTT it jumps to its
    # clamp (65535) with a few hundred segments in flight. Cubic cannot.
    clamp: Rows = [(10, INF, 10, CA_OPEN), (300, INF, 300, CA_OPEN),
                   (HYBLA_CWND_CLAMP, INF, 600, CA_OPEN)]
    spec, meta = tcp_run(tmp_path / "hybla", clamp, None, cc="hybla", two_way=False)
    assert tcp_window_metrics(tmp_path / "hybla", spec, meta)["window_valid"] is True
    spec, meta = tcp_run(tmp_path / "cubic", clamp, None, cc="cubic", two_way=False)
    m = tcp_window_metrics(tmp_path / "cubic", spec, meta)
    assert m["window_valid"] is False and f"snd_cwnd {HYBLA_CWND_CLAMP}" in m["window_verdict"]
    # The stale kernel word is far above Hybla's clamp too; the reason names the ceiling.
    spec, meta = tcp_run(tmp_path / "garbage", SANE, ABSURD, cc="hybla")
    m = tcp_window_metrics(tmp_path / "garbage", spec, meta)
    assert m["window_valid"] is False
    assert f"above {HYBLA_CWND_CLAMP}, the most its congestion control can set" in \
        m["window_verdict"]


def test_an_unrecorded_flow_is_unchecked_never_passed(tmp_path: Path) -> None:
    spec, meta = tcp_run(tmp_path / "run", SANE, None)
    m = trace_path_metrics(tmp_path / "run", spec, meta)
    assert m["window_valid"] is None and m["window_verdict"] is None
    assert m["window_flows"] == {
        "forward": OK, "reverse": "not recorded: no tcp-probe.csv; tcp_probe unavailable "
                                  "(tracefs is not mounted)"}
    # An absurd forward flow still makes it invalid.
    spec, meta = tcp_run(tmp_path / "bad", ABSURD, None)
    assert tcp_window_metrics(tmp_path / "bad", spec, meta)["window_valid"] is False


def test_a_one_way_run_checks_its_one_flow(tmp_path: Path) -> None:
    spec, meta = tcp_run(tmp_path / "run", SANE, None, two_way=False)
    write_probe(tmp_path / "run" / "reverse", ABSURD)  # not this run's: never read
    m = tcp_window_metrics(tmp_path / "run", spec, meta)
    assert m == {"window_valid": True, "window_verdict": OK, "window_flows": {FORWARD: OK}}


def test_the_mss_is_the_flows_own_socket_s() -> None:
    text = ss_sample(5201, 29388, mss=1200) + ss_sample(5201, 29389).split("\n", 1)[1]
    assert ss_mss(text, 5201, 29389) == MSS
    assert ss_mss(text, 5201, 29388) == 1200
    assert ss_mss(text, 5201, 40000) is None and ss_mss(text, None) is None
    assert ss_mss(text, 5201) == 1200  # no peer given: the first connection on that port


# ------------------------------------------------- an invalid run in the figure and verify

ONE_PER_MS = range(1, 1001)


def _fig7(tmp_path: Path) -> SproutFig7:
    for base in ("Verizon-LTE-short", "Verizon-EVDO-driving", "TMobile-UMTS-driving"):
        for end in ("down", "up"):
            write_trace(tmp_path / "traces", f"{base}.{end}", ONE_PER_MS)
    return SproutFig7(traces=trace_set(tmp_path / "traces"))


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_an_invalid_run_is_no_point_and_says_why(tmp_path: Path) -> None:
    fig7 = _fig7(tmp_path)
    store = ExperimentStore(tmp_path / "results" / fig7.name)
    verizon = [s for s in fig7.matrix(quick=True) if s.data_trace.startswith("Verizon-LTE")]
    axis = {"signal_delay_first_ms": 0, "signal_delay_last_ms": 500}
    reason = (f"absurd kernel window in the reverse flow: snd_cwnd 1 (ssthresh {GARBAGE}, "
              "state 4) at probe time 100.040000 s, >= 10 x ...")
    for spec in verizon:
        bad = spec.scheme == "cubic"
        add_done(store, spec, throughput_mbps=2.0, p95_e2e_delay_ms=121.0, **axis,
                 reverse=dict(throughput_mbps=1.0, p95_e2e_delay_ms=121.0, **axis),
                 window_valid=not bad, window_verdict=reason if bad else OK)
    fig7.make_figures(store, store.root)
    plotted = _rows(store.root / "summary.csv")
    assert {r["scheme"] for r in plotted} == {s.scheme for s in verizon} - {"cubic"}
    missing = [r for r in _rows(store.root / "missing.csv")
               if r["data_trace"].startswith("Verizon-LTE")]
    assert [(r["scheme"], r["reason"]) for r in missing] == [("cubic", f"{INVALID}: {reason}")]
    # One run gives both panels of the network: neither has its point, both say why.
    cov = coverage(store, fig7.matrix)
    for panel in (p for p in fig7.panels() if p.base == "Verizon-LTE-short"):
        [note] = fig7.panel_notes(panel, cov)[1]
        assert note.startswith("Cubic: no result (invalid run: absurd kernel window in the "
                               "reverse flow: snd_cwnd 1 (ssthresh 2183148773")


def test_verify_counts_and_shows_an_invalid_run(tmp_path: Path) -> None:
    fig7 = _fig7(tmp_path)
    store = ExperimentStore(tmp_path / "results" / fig7.name)
    spec = next(s for s in fig7.matrix(quick=True) if s.scheme == "cubic")
    run_dir = store.runs_dir / spec.dirname()
    _, meta = tcp_run(run_dir, SANE, ABSURD)
    (run_dir / SPEC).write_text(json.dumps(spec.to_dict()))  # the matrix's own spec
    meta["spec"] = spec.to_dict()
    (run_dir / "meta.json").write_text(json.dumps(meta))
    (run_dir / "metrics.json").write_text(json.dumps({"throughput_mbps": 1.0}))  # before the check
    (run_dir / DONE).write_text("done\n")
    write_record(store.root, fig7)  # as `repro run` records the options it planned with
    report = verify_results([fig7], tmp_path / "results")
    v = report.experiments[0]
    assert [name for name, _ in v.invalid] == [run_dir.name]
    assert "absurd kernel window in the reverse flow" in v.invalid[0][1]
    assert v.finished == 0
    assert any(label == spec.label() and reason.startswith(INVALID) for label, reason in v.missing)
    out = io.StringIO()
    emit(report, False, out)
    text = out.getvalue()
    assert "1 finished but invalid (left out of figures and claims)" in text
    assert f"invalid: {run_dir.name}: absurd kernel window in the reverse flow" in text
    assert "1 invalid," in text
    assert v.to_dict()["invalid"][0]["run"] == run_dir.name
