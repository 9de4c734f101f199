"""The summary table's maths, worked out by hand on two panels."""
from __future__ import annotations

import csv

import pytest

from experiments.sprout.speedup_table import (NOT_REPORTED, PaperValue, panel_ratios, speedup_table,
                                              table_markdown, write_table_csv)
from experiments.sprout.tradeoff_points import TradeoffPoint


def pt(scheme: str, thr: float, delay: float, provider: str | None = None) -> TradeoffPoint:
    return TradeoffPoint(scheme, 1, thr, 0.0, delay, 0.0, (provider,))


# Panel A: Sprout 2 Mbit/s at 50 ms; Cubic 4 at 1000 ms; Vegas 1 at 100 ms.
# Panel B: Sprout 3 Mbit/s at 0.5 ms (counts as 1 ms); Cubic 2 at 400 ms; no Vegas.
PANELS = {
    "A": {"sprout": pt("sprout", 2.0, 50.0), "cubic": pt("cubic", 4.0, 1000.0, "builtin"),
          "vegas": pt("vegas", 1.0, 100.0, "ebpf")},
    "B": {"sprout": pt("sprout", 3.0, 0.5), "cubic": pt("cubic", 2.0, 400.0, "builtin")},
}
PAPER = {"cubic": PaperValue(speedup=0.91, delay_reduction=79.0)}


def test_ratios_of_one_panel() -> None:
    assert panel_ratios(PANELS["A"]["sprout"], PANELS["A"]["cubic"]) == (0.5, 20.0)
    # Sprout's 0.5 ms counts as 1 ms: 400 / 1
    assert panel_ratios(PANELS["B"]["sprout"], PANELS["B"]["cubic"]) == (1.5, 400.0)


def test_averages_over_panels_by_hand() -> None:
    rows = {r.scheme: r for r in speedup_table(PANELS, ["sprout", "cubic", "vegas", "bic"],
                                               paper=PAPER)}
    assert list(rows) == ["cubic", "vegas", "bic"]  # Sprout itself is not a row
    cubic = rows["cubic"]
    assert cubic.panels == 2
    assert cubic.speedup == pytest.approx((0.5 + 1.5) / 2)  # 1.0
    assert cubic.speedup_geomean == pytest.approx((0.5 * 1.5) ** 0.5)  # 0.8660
    # The paper's averaging: the mean of Cubic's delays / the mean of Sprout's (0.5 counts as 1)
    assert cubic.delay_reduction == pytest.approx(((1000 + 400) / 2) / ((50 + 1) / 2))  # 27.45
    assert cubic.delay_reduction_mean_of_ratios == pytest.approx((20 + 400) / 2)  # 210
    assert (cubic.mean_delay_ms, cubic.reference_mean_delay_ms) == (700.0, 25.5)
    assert cubic.delay_reduction_geomean == pytest.approx((20 * 400) ** 0.5)  # 89.44
    assert cubic.paper == PAPER["cubic"] and cubic.label == "Cubic"
    vegas = rows["vegas"]
    assert (vegas.panels, vegas.speedup, vegas.delay_reduction) == (1, 2.0, 2.0)
    assert vegas.label == "Vegas (eBPF)" and vegas.paper == PaperValue()


def test_a_scheme_without_results_keeps_its_row() -> None:
    [bic] = speedup_table(PANELS, ["bic"])
    assert bic.panels == 0 and bic.speedup is None and bic.delay_reduction is None


def test_panels_without_sprout_do_not_count() -> None:
    panels = dict(PANELS, C={"cubic": pt("cubic", 9.0, 9.0)})
    [cubic] = speedup_table(panels, ["cubic"])
    assert cubic.panels == 2 and cubic.speedup == pytest.approx(1.0)


def test_markdown_puts_the_paper_beside_ours() -> None:
    text = table_markdown(speedup_table(PANELS, ["cubic", "vegas", "bic"], paper=PAPER),
                          title="T", notes=["a note"])
    assert "| Cubic | 2 | 1.00x | 0.91x | 27.45x | 79.00x | 210.00x | 0.70 s |" in text
    assert f"| Vegas (eBPF) | 1 | 2.00x | {NOT_REPORTED} | 2.00x | {NOT_REPORTED} | 2.00x |" \
        in text
    assert "| BIC | 0 | no result |" in text
    assert text.startswith("# T\n") and "- a note" in text


def test_csv(tmp_path) -> None:
    path = write_table_csv(speedup_table(PANELS, ["cubic", "bic"], paper=PAPER),
                           tmp_path / "table.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["scheme"] == "cubic" and rows[0]["speedup"] == "1"
    assert rows[0]["paper_speedup"] == "0.91" and rows[0]["delay_reduction"] == "27.451"
    assert rows[0]["delay_reduction_mean_of_ratios"] == "210"
    assert rows[1]["scheme"] == "bic" and rows[1]["speedup"] == "" and rows[1]["panels"] == "0"


def test_failed_runs_cannot_be_points_of_the_table() -> None:
    with pytest.raises(ValueError):
        panel_ratios(pt("sprout", 1.0, 1.0), pt("cubic", 0.0, 1.0))
