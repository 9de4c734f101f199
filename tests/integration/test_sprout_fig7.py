"""A tiny sprout-fig7 matrix end to end through the real runner: runs, figure, CSVs, table.

Two schemes on Verizon LTE for 10 s each (both directions loaded, 2 s not scored; the
downlink panel drawn), plus a network whose trace is missing: its runs fail at once, and the
figure says so instead of plotting them.
"""
from __future__ import annotations

import csv
import json

from core.results import ExperimentStore
from app.runner import MatrixRunner
from experiments.sprout.fig7 import DOWNLINK, TRACES, CellularTrace, SproutFig7

MISSING = CellularTrace("Nowhere", "Nowhere-not-a-trace")


def _csv(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_tiny_matrix_end_to_end(paths, traces) -> None:
    exp = SproutFig7(traces=traces, networks=(TRACES[0], MISSING), directions=(DOWNLINK,),
                     schemes=("sprout", "cubic"), quick_warmup_s=2.0, quick_scored_s=8.0)
    specs = exp.matrix(quick=True)
    assert len(specs) == 4
    result = MatrixRunner(paths, traces, jobs=1).run(exp, specs)
    assert len(result.succeeded) == 2, result.failed
    assert {s.data_trace for s, _ in result.failed} == {"Nowhere-not-a-trace.down"}

    store = ExperimentStore(paths.results_dir / exp.name)
    files = exp.make_figures(store, store.root)
    names = {f.name for f in files}
    for expected in ("fig7.png", "fig7.svg", "summary.csv", "table.csv", "table.md",
                     "missing.csv", f"panel-{exp.panels()[0].key}.png"):
        assert expected in names and (store.root / expected).stat().st_size > 0

    rows = _csv(store.root / "summary.csv")
    assert sorted(r["scheme"] for r in rows) == ["cubic", "sprout"]
    for row in rows:
        assert row["trace"] == "Verizon LTE" and row["direction"] == DOWNLINK
        assert row["data_trace"].endswith(".down") and row["ack_trace"].endswith(".up")
        assert row["substitute"] == str(exp.panels()[0].substitute)
        assert float(row["throughput_mbps"]) > 0.1
        e2e, omni = float(row["p95_e2e_delay_ms"]), float(row["omniscient_p95_e2e_delay_ms"])
        assert float(row["self_inflicted_delay_ms"]) == round(e2e - omni, 6)
        assert row["loads"] == "both directions" and row["warmup_s"] == "2"
    assert [r["provider"] for r in rows if r["scheme"] == "cubic"] == ["builtin"]

    table = _csv(store.root / "table.csv")
    assert [(r["scheme"], r["panels"]) for r in table] == [("cubic", "1")]
    assert float(table[0]["speedup"]) > 0 and table[0]["paper_speedup"].startswith("0.91")
    assert "not reported here" not in (store.root / "table.md").read_text()
    assert (store.root / "paper-comparison.csv").stat().st_size > 0
    # The uplink of the same runs was measured too (the reverse direction's metrics).
    for run in {r["run"] for r in rows}:
        metrics = (store.runs_dir / run / "metrics.json").read_text()
        assert '"reverse"' in metrics
    # Both of Cubic's flows were recorded and their kernel windows checked (and sane).
    cubic = next(r["run"] for r in rows if r["scheme"] == "cubic")
    m = json.loads((store.runs_dir / cubic / "metrics.json").read_text())
    assert m["window_flows"] == {"forward": "ok", "reverse": "ok"}, m["window_flows"]
    assert m["window_valid"] is True

    missing = _csv(store.root / "missing.csv")
    assert len(missing) == 2 and all("TraceMissing" in r["reason"] for r in missing)
