"""The Sprout paper's (NSDI'13) Figure 7 and its summary table.

Throughput against self-inflicted delay of Sprout, Sprout-EWMA and Linux TCP
variants over four cellular traces in both directions: downlink = data over
X.down and ACKs over X.up, uplink = data over X.up and ACKs over X.down; 20 ms
fixed delay each way; an infinite queue, as the paper's emulator; the whole
trace once. Quick mode plays the first 60 s of each trace.

Verizon LTE is Verizon-LTE-driving when present, else Verizon-LTE-short,
labelled as the substitute on the figure and in the CSV. A trace missing from
the set leaves its panel saying so; a scheme the machine cannot provide
(e.g. a TCP variant without a kernel, module or eBPF provider) fails its runs
with the reason, which the figure lists; failed runs are never points.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from analysis.claims import Claim
from analysis.coverage import Coverage, missing_notes, short_reason
from analysis.plotting import new_figure, new_grid, save
from analysis.scheme_labels import display_name
from analysis.self_inflicted import OmniscientReferences
from analysis.speedup_table import PaperValue, speedup_table, write_table_csv, \
    write_table_markdown
from analysis.summary import write_csv
from analysis.tradeoff import TradeoffPoint, points_by
from analysis.tradeoff_plot import draw_panel, series_per_scheme, shared_legend
from core.results import ExperimentStore
from core.runspec import RunSpec
from core.traces import TraceError, TraceSet
from experiments.sprout_claims import FIG7_CLAIMS
from experiments.tradeoff_base import QUICK_DURATION_S, TradeoffExperiment

SCHEMES = ("sprout", "sprout-ewma", "cubic", "vegas", "reno", "bic", "hybla", "bbr")
DOWNLINK, UPLINK = "downlink", "uplink"
DIRECTIONS = (DOWNLINK, UPLINK)

# Sprout against each scheme, averaged over the paper's eight traces (the paper's
# summary table). Only the values we are sure of; the others are not reported here.
PAPER_VALUES = {
    "cubic": PaperValue(speedup=0.91, delay_reduction=79.0),
    "vegas": PaperValue(speedup=1.1, delay_reduction=2.1),
}

COLUMNS = ["trace", "direction", "scheme", "label", "trial", "throughput_mbps",
           "p95_e2e_delay_ms", "self_inflicted_delay_ms", "omniscient_p95_e2e_delay_ms",
           "utilization", "capacity_mbps", "provider", "cc_used", "substitute",
           "lateness_p99_us", "lateness_ok", "cpu_steal_pct", "data_trace", "ack_trace", "run"]


@dataclass(frozen=True)
class CellularTrace:
    title: str  # as the paper names the network
    name: str  # the trace pair's base name: <name>.down and <name>.up
    substitute: str | None = None  # used in its place when it is not on this machine


TRACES = (
    CellularTrace("Verizon LTE", "Verizon-LTE-driving", substitute="Verizon-LTE-short"),
    CellularTrace("Verizon 3G (1xEV-DO)", "Verizon-EVDO-driving"),
    CellularTrace("AT&T LTE", "ATT-LTE-driving"),
    CellularTrace("T-Mobile 3G (UMTS)", "TMobile-UMTS-driving"),
)


@dataclass(frozen=True)
class Panel:
    """One trace in one direction."""

    network: CellularTrace
    base: str  # the trace pair used: the network's own, or its substitute
    direction: str

    @property
    def data_trace(self) -> str:
        return f"{self.base}.down" if self.direction == DOWNLINK else f"{self.base}.up"

    @property
    def ack_trace(self) -> str:
        return f"{self.base}.up" if self.direction == DOWNLINK else f"{self.base}.down"

    @property
    def substitute(self) -> bool:
        return self.base != self.network.name

    @property
    def key(self) -> str:
        return f"{self.base}-{self.direction}"

    def heading(self) -> str:
        text = f"{self.network.title} {self.direction}"
        if self.substitute:
            text += f"\n({self.base} substitutes for {self.network.name})"
        return text


class SproutFig7(TradeoffExperiment):
    name = "sprout-fig7"
    title = "Sprout Figure 7: throughput vs self-inflicted delay over four cellular networks"
    quick_note = f"first {QUICK_DURATION_S:g} s of each trace, every scheme and direction"

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None,
                 networks: Sequence[CellularTrace] = TRACES,
                 directions: Sequence[str] = DIRECTIONS, schemes: Sequence[str] = SCHEMES,
                 quick_duration_s: float = QUICK_DURATION_S) -> None:
        super().__init__(traces, options, quick_duration_s)
        self.networks = tuple(networks)
        self.directions = tuple(directions)
        self.schemes = tuple(schemes)

    # ------------------------------------------------------------------ the runs

    def base_of(self, network: CellularTrace) -> str:
        """The network's own traces when both directions are here, else its substitute's."""
        if network.substitute is None or self._pair_present(network.name):
            return network.name
        return network.substitute if self._pair_present(network.substitute) else network.name

    def _pair_present(self, base: str) -> bool:
        return all(self.traces.locate(f"{base}.{d}") is not None for d in ("down", "up"))

    def panels(self) -> list[Panel]:
        return [Panel(n, self.base_of(n), d) for n in self.networks for d in self.directions]

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return [self.run_spec(scheme, p.data_trace, p.ack_trace, quick, trial)
                for trial in range(1, trials + 1) for p in self.panels()
                for scheme in self.schemes]

    # --------------------------------------------------------------- the figures

    def claims(self) -> tuple[Claim, ...]:
        return FIG7_CLAIMS

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if self.nothing_on_record(cov):
            return []
        refs = OmniscientReferences(self.traces)
        panels = self.panels()
        order = {(p.data_trace, s): i for i, (p, s) in enumerate(
            (p, s) for p in panels for s in self.schemes)}
        rows = sorted(self.rows(cov, refs),
                      key=lambda r: (order[(r["data_trace"], r["scheme"])], r["trial"]))
        points = {p.key: self._points(p, rows) for p in panels}
        files = [write_csv(out_dir / "summary.csv", rows, COLUMNS),
                 self.write_missing(cov, out_dir)]
        files += self._figures(panels, points, cov, refs, out_dir)
        files += self._table(points, cov, out_dir)
        return files

    def describe(self, spec: RunSpec) -> dict[str, Any]:
        panel = next(p for p in self.panels() if p.data_trace == spec.data_trace)
        return {"trace": panel.network.title, "direction": panel.direction,
                "substitute": panel.substitute, "data_trace": spec.data_trace,
                "ack_trace": spec.ack_trace}

    def _points(self, panel: Panel, rows: list[dict[str, Any]]) -> dict[str, TradeoffPoint]:
        found = points_by(r for r in rows if r["data_trace"] == panel.data_trace)
        return {s: found[s] for s in self.schemes if s in found}

    def _capacity_text(self, panel: Panel, refs: OmniscientReferences, quick: bool) -> str:
        try:
            ref = refs.for_trace(panel.data_trace, self.delay_ms, self.duration_s(quick))
        except TraceError:
            return "capacity unknown"
        return f"capacity {ref.throughput_mbps:.2f} Mbit/s"

    def panel_notes(self, panel: Panel, cov: Coverage) -> tuple[str, list[str]]:
        """(message for an empty panel, notes on what is missing in it)."""
        problem = self.trace_problem(panel.data_trace, panel.ack_trace)
        if problem:
            return problem, []
        cells = [c for c in cov.cells if c.spec.data_trace == panel.data_trace]
        return "no finished runs", missing_notes(cells, lambda s: display_name(s.scheme))

    def _draw(self, ax: Any, panel: Panel, points: dict[str, TradeoffPoint], cov: Coverage,
              refs: OmniscientReferences, legend: bool) -> None:
        empty, notes = self.panel_notes(panel, cov)
        title = f"{panel.heading()}\n{self._capacity_text(panel, refs, cov.quick)}"
        draw_panel(ax, series_per_scheme(points.values()), title, notes, empty, legend=legend)

    def _figures(self, panels: list[Panel], points: dict[str, dict[str, TradeoffPoint]],
                 cov: Coverage, refs: OmniscientReferences, out_dir: Path) -> list[Path]:
        files: list[Path] = []
        for panel in panels:
            fig, ax = new_figure(6.4, 5.0)
            self._draw(ax, panel, points[panel.key], cov, refs, legend=True)
            fig.suptitle(self._setup_line(cov), fontsize=8)
            files += save(fig, out_dir, f"panel-{panel.key}")
        cols = len(self.directions)
        fig, grid = new_grid(-(-len(panels) // cols), cols, panel_height=5.0)
        for ax, panel in zip(grid, panels):
            self._draw(ax, panel, points[panel.key], cov, refs, legend=False)
        for ax in grid[len(panels):]:
            fig.delaxes(ax)
        heading = [self.title, self._setup_line(cov), self.absent_note(cov)]
        fig.suptitle("\n".join(line for line in heading if line), fontsize=10)
        shared_legend(fig, grid, columns=len(self.schemes))
        fig.tight_layout(rect=(0, 0.03, 1, 0.97))
        files += save(fig, out_dir, "fig7", tight=False)
        return files

    def _setup_line(self, cov: Coverage) -> str:
        trials = f"; mean ± sd of {cov.trials} trials" if cov.trials > 1 else ""
        return f"{self.setup_text(cov.quick)}{trials}"

    def absent_note(self, cov: Coverage) -> str:
        absent = cov.absent()
        if not absent:
            return ""
        return "missing everywhere: " + "; ".join(
            f"{display_name(s)} ({short_reason(reasons[0], 60)})" for s, reasons in absent.items())

    def _table(self, points: dict[str, dict[str, TradeoffPoint]], cov: Coverage,
               out_dir: Path) -> list[Path]:
        rows = speedup_table(points, self.schemes, reference="sprout", paper=PAPER_VALUES)
        notes = [
            "speed-up = Sprout's throughput / the scheme's; delay reduction = the scheme's "
            "self-inflicted delay / Sprout's; each is computed per panel (trace and "
            "direction) and averaged (arithmetic mean) over the panels where both have a "
            "finished run; geometric means are in table.csv",
            "self-inflicted delay = the run's 95% end-to-end delay minus the omniscient "
            "protocol's on the same trace span (below 1 ms counts as 1 ms)",
            f"runs: {self.setup_text(cov.quick)}",
            "paper values: Sprout NSDI'13, averaged over its eight traces",
        ]
        notes += [f"{p.network.title}: {p.base} substitutes for {p.network.name}"
                  for p in self.panels() if p.substitute and p.direction == self.directions[0]]
        return [write_table_csv(rows, out_dir / "table.csv"),
                write_table_markdown(rows, out_dir / "table.md", title="Sprout's average "
                                     "speed-up and delay reduction", notes=notes)]
