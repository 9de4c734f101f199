"""The Sprout paper's (NSDI'13) Figure 7 and its summary table.

Throughput against self-inflicted delay of Sprout, Sprout-EWMA, Cubic, Cubic over CoDel and
other Linux TCP variants over four cellular networks in both directions, measured as the
paper measured (experiments/sprout/tradeoff.py): both directions loaded at once, so one run
gives a network's downlink point (data over X.down) and its uplink point (data over X.up);
20 ms fixed delay each way; an infinite queue as the paper's emulator (CoDel in both
directions for Cubic-CoDel); the first minute of each run not scored. `--one-way` loads one
direction per run instead. Every panel shows the paper's own points faintly beside ours.

Verizon LTE is Verizon-LTE-driving when present, else Verizon-LTE-short, labelled as the
substitute on the figure and in the CSVs (where the paper's points are compared as ratios to
Sprout's, not in Mbit/s). A trace missing from the set leaves its panel saying so; a scheme
the machine cannot provide (a TCP variant without a kernel, module or eBPF provider, or a
queue the emulator lacks) fails its runs with the reason, which the figure lists; failed runs
are never points.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from analysis.coverage import Coverage, missing_notes, short_reason
from analysis.plotting import new_figure, new_grid, save
from runkinds.trace_path.metrics import REVERSE
from analysis.scheme_labels import display_name
from analysis.scored_span import LAST_DELIVERY, SENDERS_STOP, SHORTER_TRACE
from experiments.sprout.self_inflicted import OmniscientReferences
from experiments.sprout.speedup_table import PaperValue, speedup_table, write_table_csv, \
    write_table_markdown
from analysis.summary import write_csv
from experiments.sprout.tradeoff_points import DELAY_FLOOR_MS, TradeoffPoint, points_by
from experiments.sprout.tradeoff_plot import PublishedPoint, draw_panel, series_per_scheme, \
    shared_legend
from core.results import ExperimentStore
from core.run_span import RunSpan
from core.runspec import RunSpec
from core.settings import Setting, SettingError
from core.traces import TraceError, TraceSet
from experiments.sprout import paper as sprout_paper
from experiments.sprout.claims import FIG7_CLAIMS
from experiments.sprout.tradeoff import TradeoffExperiment

SCHEMES = ("sprout", "sprout-ewma", "cubic", "cubic-codel", "vegas", "reno", "bic", "hybla",
           "bbr")
DOWNLINK, UPLINK = "downlink", "uplink"
DIRECTIONS = (DOWNLINK, UPLINK)
# When a network's stand-in traces are used. `auto` is decided on the machine that runs (the
# network's own pair when both directions are there): `repro run` records the decision
# (always or never), so results are judged by the traces their runs used, wherever checked.
SUBSTITUTE, AUTO, ALWAYS, NEVER = "substitute", "auto", "always", "never"
SUBSTITUTE_OPTION = Setting(
    SUBSTITUTE, str, "use a network's stand-in trace pair (Verizon-LTE-short for "
    "Verizon-LTE-driving): auto (when the network's own pair is not on this machine), always "
    "or never", default=AUTO, choices=(AUTO, ALWAYS, NEVER))
ALL = "all"


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _known(kind: str, names: Sequence[str]) -> Any:
    def check(text: str) -> None:
        unknown = [n for n in _names(text) if n not in names]
        if text != ALL and (unknown or not _names(text)):
            raise ValueError(f"{', '.join(unknown) or repr(text)}: not among the {kind} "
                             f"({', '.join(names)}), nor '{ALL}'")
    return check


# The schemes the ordering claim ranks (the paper's Figure 7 schemes that run here).
RANKED = ("sprout", "sprout-ewma", "vegas", "cubic", "cubic-codel")
# A pair whose traces end further apart than this is scored differently by each span rule,
# and its panels say so (AT&T LTE: 226 s apart); the other pairs end within 3 s.
SPAN_SENSITIVE_MS = 10_000
# Characters per line of a panel's grey remarks (they are drawn inside the axes).
REMARK_WIDTH = 95

COLUMNS = ["trace", "direction", "scheme", "label", "trial", "throughput_mbps",
           "p95_e2e_delay_ms", "self_inflicted_delay_ms", "omniscient_p95_e2e_delay_ms",
           "utilization", "capacity_mbps", "provider", "cc_used", "substitute",
           "lateness_p99_us", "lateness_ok", "cpu_steal_pct", "data_trace", "ack_trace", "run",
           "loads", "offset_s", "warmup_s", "played_s", "scored_span", "scored_from_s",
           "scored_until_s", "scored_s", "trace_loops", "trace_play"]
PAPER_COLUMNS = ["trace", "direction", "scheme", "substitute", "throughput_mbps",
                 "self_inflicted_delay_ms", "paper_throughput_mbps",
                 "paper_self_inflicted_delay_ms",
                 "throughput_vs_sprout", "paper_throughput_vs_sprout", "delay_vs_sprout",
                 "paper_delay_vs_sprout", "rank_by_delay", "paper_rank_by_delay"]


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
# Part of the figure only (`--networks ATT-LTE-driving --schemes sprout,vegas`): the panels
# and schemes left out are not planned, drawn or claimed (their claims say NOT RUN).
NETWORKS_OPTION = Setting(
    "networks", str, "only these networks, by trace pair, comma-separated "
    f"({', '.join(t.name for t in TRACES)}), or all", default=ALL,
    validate=_known("networks", [t.name for t in TRACES]))
SCHEMES_OPTION = Setting(
    "schemes", str, f"only these schemes, comma-separated ({', '.join(SCHEMES)}), or all",
    default=ALL, validate=_known("schemes", SCHEMES))


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
    quick_note = "one stretch of each trace pair, every scheme, both directions at once"
    claims = FIG7_CLAIMS
    headline = ("fig7",)
    headline_caption = ("Figure 7: ours (filled) beside the paper's own points (hollow, "
                        "labelled 'paper') on each of the eight links")
    options = TradeoffExperiment.options + (SUBSTITUTE_OPTION, NETWORKS_OPTION, SCHEMES_OPTION)

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None,
                 networks: Sequence[CellularTrace] = TRACES,
                 directions: Sequence[str] = DIRECTIONS, schemes: Sequence[str] = SCHEMES,
                 **timing: float) -> None:
        super().__init__(traces, options, **timing)
        only_networks = self.chosen[NETWORKS_OPTION.name]
        only_schemes = self.chosen[SCHEMES_OPTION.name]
        self.networks = tuple(n for n in networks
                              if only_networks == ALL or n.name in _names(only_networks))
        self.directions = tuple(directions)
        self.schemes = tuple(s for s in schemes
                             if only_schemes == ALL or s in _names(only_schemes))

    # ------------------------------------------------------------------ the runs

    def base_of(self, network: CellularTrace) -> str:
        """The network's own traces, or its substitute's: as --substitute says; under auto,
        the substitute's when the network's own pair is not here and the substitute's is."""
        choice = self.chosen[SUBSTITUTE]
        if network.substitute is None or choice == NEVER:
            return network.name
        if choice == ALWAYS:
            return network.substitute
        if self._pair_present(network.name):
            return network.name
        return network.substitute if self._pair_present(network.substitute) else network.name

    def resolved_options(self) -> dict[str, Any]:
        """`--substitute auto` decided from the traces on this machine."""
        chosen = dict(self.chosen)
        if chosen[SUBSTITUTE] == AUTO:
            used = {self.base_of(n) == n.substitute for n in self.networks if n.substitute}
            if len(used) > 1:
                raise SettingError("--substitute auto uses a stand-in for some networks and not "
                                   "others here; say --substitute always or never")
            chosen[SUBSTITUTE] = ALWAYS if used == {True} else NEVER
        return chosen

    def _pair_present(self, base: str) -> bool:
        return all(self.traces.locate(f"{base}.{d}") is not None for d in ("down", "up"))

    def panels(self) -> list[Panel]:
        return [Panel(n, self.base_of(n), d) for n in self.networks for d in self.directions]

    def offset_of(self, base: str, quick: bool) -> float:
        return self.quick_offset_s(f"{base}.down", f"{base}.up") if quick else 0.0

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        if self.one_way:
            return [self.run_spec(scheme, p.data_trace, p.ack_trace, quick, trial,
                                  offset_s=self.offset_of(p.base, quick))
                    for trial in range(1, trials + 1) for p in self.panels()
                    for scheme in self.schemes]
        # Both directions at once: the downlink's trace on the data side (a2b), the uplink's
        # on the other; the run's reverse metrics are the uplink's.
        bases = [self.base_of(n) for n in self.networks]
        return [self.run_spec(scheme, f"{base}.down", f"{base}.up", quick, trial,
                              offset_s=self.offset_of(base, quick))
                for trial in range(1, trials + 1) for base in bases for scheme in self.schemes]

    def scored_directions(self, record: Any) -> tuple[bool, ...]:
        """The directions of a run that are panels here (a two-way run gives both)."""
        if self.one_way:
            return (False,)
        wanted = ((False, DOWNLINK), (True, UPLINK))
        return tuple(reverse for reverse, direction in wanted if direction in self.directions
                     and (not reverse or REVERSE in record.metrics))

    def panel_of(self, spec: RunSpec, reverse: bool = False) -> Panel | None:
        """The panel a run's direction is drawn on (None: that direction is not drawn)."""
        if self.one_way:
            return next((p for p in self.panels() if p.data_trace == spec.data_trace), None)
        direction = UPLINK if reverse else DOWNLINK
        return next((p for p in self.panels()
                     if p.direction == direction and f"{p.base}.down" == spec.data_trace), None)

    def cells_of(self, panel: Panel, cov: Coverage) -> list[Any]:
        """The planned runs that give this panel its points."""
        if self.one_way:
            return [c for c in cov.cells if c.spec.data_trace == panel.data_trace]
        return [c for c in cov.cells if c.spec.data_trace == f"{panel.base}.down"]

    # --------------------------------------------------------------- the figures

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if self.nothing_on_record(cov):
            return []
        out_dir = self.figure_dir(out_dir)
        refs = OmniscientReferences(self.traces)
        panels = self.panels()
        order = {(p.data_trace, s): i for i, (p, s) in enumerate(
            (p, s) for p in panels for s in self.schemes)}
        rows = sorted(self.rows(cov, refs),
                      key=lambda r: (order[(r["data_trace"], r["scheme"])], r["trial"]))
        points = {p.key: self._points(p, rows) for p in panels}
        files = [write_csv(out_dir / "summary.csv", rows, COLUMNS),
                 self.write_missing(cov, out_dir),
                 write_csv(out_dir / "paper-comparison.csv", self.paper_rows(points),
                           PAPER_COLUMNS)]
        files += self._figures(panels, points, cov, refs, out_dir)
        files += self._table(points, cov, out_dir)
        return files

    def describe(self, spec: RunSpec, reverse: bool = False) -> dict[str, Any]:
        panel = self.panel_of(spec, reverse)
        assert panel is not None, "scored_directions gives only drawn directions"
        return {"trace": panel.network.title, "direction": panel.direction,
                "substitute": panel.substitute, "data_trace": panel.data_trace,
                "ack_trace": panel.ack_trace}

    def _points(self, panel: Panel, rows: list[dict[str, Any]]) -> dict[str, TradeoffPoint]:
        found = points_by(r for r in rows if r["data_trace"] == panel.data_trace)
        return {s: found[s] for s in self.schemes if s in found}

    # ------------------------------------------------------- the paper beside ours

    def paper_points(self, panel: Panel) -> dict[str, sprout_paper.PaperPoint]:
        return sprout_paper.FIGURE7.get((panel.network.name, panel.direction), {})

    def published(self, panel: Panel, ours: dict[str, TradeoffPoint]) -> list[PublishedPoint]:
        """The paper's points for this panel; on a substitute trace, scaled so the paper's
        Sprout sits on ours (only the ratios between schemes compare there)."""
        paper = self.paper_points(panel)
        if not panel.substitute:
            return [PublishedPoint(s, p.throughput_mbps, p.delay_ms) for s, p in paper.items()]
        if "sprout" not in ours or "sprout" not in paper:
            return []
        t = ours["sprout"].throughput_mbps / paper["sprout"].throughput_mbps
        d = ours["sprout"].plotted_delay_ms / max(paper["sprout"].delay_ms, DELAY_FLOOR_MS)
        return [PublishedPoint(s, p.throughput_mbps * t, p.delay_ms * d, "paper, scaled")
                for s, p in paper.items()]

    def paper_rows(self, points: dict[str, dict[str, TradeoffPoint]]) -> list[dict[str, Any]]:
        """Per panel and scheme: ours beside the paper's, also as ratios to Sprout's."""
        rows = []
        for panel in self.panels():
            ours = points.get(panel.key, {})
            paper = self.paper_points(panel)
            our_rank = _ranks({s: p.plotted_delay_ms for s, p in ours.items() if s in RANKED})
            paper_rank = _ranks({s: p.delay_ms for s, p in paper.items()})
            for scheme in self.schemes:
                mine, theirs = ours.get(scheme), paper.get(scheme)
                if mine is None and theirs is None:
                    continue
                sprout, paper_sprout = ours.get("sprout"), paper.get("sprout")
                rows.append({
                    "trace": panel.network.title, "direction": panel.direction,
                    "scheme": scheme, "substitute": panel.substitute,
                    "throughput_mbps": mine.throughput_mbps if mine else None,
                    "self_inflicted_delay_ms": mine.self_inflicted_delay_ms if mine else None,
                    "paper_throughput_mbps": theirs.throughput_mbps if theirs else None,
                    "paper_self_inflicted_delay_ms": theirs.delay_ms if theirs else None,
                    "throughput_vs_sprout": mine.throughput_mbps / sprout.throughput_mbps
                    if mine and sprout else None,
                    "paper_throughput_vs_sprout": theirs.throughput_kbps /
                    paper_sprout.throughput_kbps if theirs and paper_sprout else None,
                    "delay_vs_sprout": mine.plotted_delay_ms / sprout.plotted_delay_ms
                    if mine and sprout else None,
                    "paper_delay_vs_sprout": theirs.delay_ms / paper_sprout.delay_ms
                    if theirs and paper_sprout else None,
                    "rank_by_delay": our_rank.get(scheme),
                    "paper_rank_by_delay": paper_rank.get(scheme)})
        return rows

    # ------------------------------------------------------------------ drawing

    def _capacity_text(self, panel: Panel, refs: OmniscientReferences, quick: bool) -> str:
        played = self._played(panel, quick, refs)
        if played is None:
            return "capacity unknown"
        span = played[1]
        start, end = self.scored_window(span, quick)
        if span.once:  # a trace played once serves nothing after its end
            period = self._period(panel, refs)
            end = min(end, period) if period is not None else end
        try:
            capacity = refs.capacity_mbps(panel.data_trace, span, start, end)
        except (TraceError, ValueError):
            return "capacity unknown"
        return f"capacity {capacity:.2f} Mbit/s over {start / 1000:g}-{end / 1000:g} s"

    def scored_window(self, span: RunSpan, quick: bool) -> tuple[int, int]:
        """(from, to) ms of the run scored on every panel of a pair under the chosen span
        (with `last-delivery` each scheme's own end is earlier: to is the run's end; with
        `senders-stop` nothing sent after the shorter trace counts: to is its end)."""
        end = span.span_ms
        if not quick and self.scored_span in (SHORTER_TRACE, SENDERS_STOP):
            end = min(end, span.data.period_ms, span.ack.period_ms)
        return span.warmup_ms, end

    @staticmethod
    def _period(panel: Panel, refs: OmniscientReferences) -> int | None:
        """One pass of the panel's own trace (ms), or None when it cannot be read."""
        try:
            return int(refs.times(panel.data_trace)[-1])
        except TraceError:
            return None

    def _played(self, panel: Panel, quick: bool, refs: OmniscientReferences
                ) -> tuple[RunSpec, RunSpan] | None:
        """A spec of this panel's runs and the span they all played (the same for every
        scheme), or None when the traces cannot be read."""
        spec = next((s for s in self.matrix(quick) if self.panel_of(s) == panel or
                     self.panel_of(s, reverse=True) == panel), None)
        if spec is None:
            return None
        try:
            return spec, refs.span(spec)
        except (TraceError, ValueError):
            return None

    def remarks(self, panel: Panel, quick: bool, refs: OmniscientReferences,
                points: dict[str, TradeoffPoint] | None = None) -> list[str]:
        """How this panel was measured: the stretch, the loops, the scored span, the
        substitute; on a pair whose traces end far apart, ours beside the paper's."""
        lines = []
        played = self._played(panel, quick, refs)
        if played is not None:
            spec, span = played
            lines.append(f"{span.describe()}; {self.mode_text}")
            loops = span.loop_note(spec.data_trace, spec.ack_trace)
            if loops:
                lines.append(("looped, so feedback never stops: " if not span.once else "")
                             + loops)
            lines += self._span_remarks(panel, span, quick, points or {})
        if panel.substitute:
            lines.append("paper's points (Verizon-LTE-driving) scaled so its Sprout sits on "
                         "ours: compare ratios, not Mbit/s")
        else:
            lines.append("hollow faint markers labelled \"paper\": the paper's points")
        return lines

    def _span_remarks(self, panel: Panel, span: RunSpan, quick: bool,
                      points: dict[str, TradeoffPoint]) -> list[str]:
        """What is scored, and where it matters (the pair's traces end far apart) whether
        the paper's points fit that span, and ours beside them."""
        if quick:
            return []
        start, end = self.scored_window(span, quick)
        shorter = min(span.data.period_ms, span.ack.period_ms)
        apart = abs(span.data.period_ms - span.ack.period_ms) > SPAN_SENSITIVE_MS
        if self.scored_span == LAST_DELIVERY:
            line = (f"scored from {start / 1000:g} s to each scheme's own last delivery "
                    "(the paper's scorer)")
        elif self.scored_span == SENDERS_STOP:
            line = (f"nothing sent after {shorter / 1000:g} s (the shorter trace's end), "
                    f"scored from {start / 1000:g} s to each scheme's own last delivery")
        else:
            rule = "the end of the shorter trace" if self.scored_span == SHORTER_TRACE \
                else "the end of the run"
            line = f"scored {start / 1000:g}-{end / 1000:g} s (to {rule})"
        if apart:
            line += ("; the paper's points fit this span (its emulator played each trace "
                     "once: no feedback after the shorter one)"
                     if self.scored_span in (SHORTER_TRACE, SENDERS_STOP) else
                     f"; the paper's points fit {start / 1000:g}-{shorter / 1000:g} s, "
                     "not this span")
        lines = [line]
        beside = self._beside_paper(panel, points) if apart else ""
        if beside:
            lines.append(f"ours / paper: {beside}")
        return [part for text in lines for part in textwrap.wrap(text, REMARK_WIDTH)]

    def _beside_paper(self, panel: Panel, points: dict[str, TradeoffPoint]) -> str:
        """Each scheme with a point of the paper's: our throughput and delay beside it."""
        paper = self.paper_points(panel)
        return "; ".join(
            f"{display_name(s)} {points[s].throughput_mbps:.2f}/{p.throughput_mbps:.2f} "
            f"Mbit/s, {points[s].self_inflicted_delay_ms:.0f}/{p.delay_ms:.0f} ms"
            for s, p in paper.items() if s in points)

    def panel_notes(self, panel: Panel, cov: Coverage) -> tuple[str, list[str]]:
        """(message for an empty panel, notes on what is missing in it)."""
        problem = self.trace_problem(panel.data_trace, panel.ack_trace)
        if problem:
            return problem, []
        return "no finished runs", missing_notes(self.cells_of(panel, cov),
                                                 lambda s: display_name(s.scheme))

    def _draw(self, ax: Any, panel: Panel, points: dict[str, TradeoffPoint], cov: Coverage,
              refs: OmniscientReferences, legend: bool) -> None:
        empty, notes = self.panel_notes(panel, cov)
        title = f"{panel.heading()}\n{self._capacity_text(panel, refs, cov.quick)}"
        draw_panel(ax, series_per_scheme(points.values()), title, notes, empty, legend=legend,
                   published=self.published(panel, points),
                   remarks=self.remarks(panel, cov.quick, refs, points))

    def _figures(self, panels: list[Panel], points: dict[str, dict[str, TradeoffPoint]],
                 cov: Coverage, refs: OmniscientReferences, out_dir: Path) -> list[Path]:
        files: list[Path] = []
        for panel in panels:
            fig, ax = new_figure(6.4, 5.0)
            self._draw(ax, panel, points[panel.key], cov, refs, legend=True)
            fig.suptitle(textwrap.fill(self._setup_line(cov), 110), fontsize=7)
            files += save(fig, out_dir, f"panel-{panel.key}")
        cols = len(self.directions)
        fig, grid = new_grid(-(-len(panels) // cols), cols, panel_height=5.0)
        for ax, panel in zip(grid, panels):
            self._draw(ax, panel, points[panel.key], cov, refs, legend=False)
        for ax in grid[len(panels):]:
            fig.delaxes(ax)
        heading = [self.title, textwrap.fill(self._setup_line(cov), 150),
                   textwrap.fill(self.absent_note(cov), 150)]
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

    def paper_table_values(self) -> dict[str, PaperValue]:
        """The paper's averages against Sprout, recomputed from its Figure 7 points with the
        same function as ours (they reproduce its introduction's table), and Cubic-CoDel's
        from the table (it has no per-panel points)."""
        panels = {f"{base}-{d}": {s: TradeoffPoint(s, 1, p.throughput_mbps, 0.0, p.delay_ms, 0.0)
                                  for s, p in pts.items()}
                  for (base, d), pts in sprout_paper.FIGURE7.items()}
        rows = speedup_table(panels, [s for s in self.schemes], reference="sprout")
        values = {r.scheme: PaperValue(r.speedup, r.delay_reduction) for r in rows
                  if r.panels}
        codel = sprout_paper.SUMMARY["cubic-codel"]
        values["cubic-codel"] = PaperValue(codel.speedup, codel.delay_reduction)
        return values

    def _table(self, points: dict[str, dict[str, TradeoffPoint]], cov: Coverage,
               out_dir: Path) -> list[Path]:
        rows = speedup_table(points, self.schemes, reference="sprout",
                             paper=self.paper_table_values())
        notes = [
            "averaged as the paper averages: speed-up = the mean over the panels (trace and "
            "direction) of Sprout's throughput / the scheme's; delay reduction = the mean of "
            "the scheme's self-inflicted delays / the mean of Sprout's, over the panels where "
            "both have a finished run; the mean of the per-panel delay ratios is beside it "
            "(labelled), geometric means in table.csv",
            "self-inflicted delay = the run's 95% end-to-end delay minus the omniscient "
            "protocol's over the same span of the same trace (below 1 ms counts as 1 ms)",
            f"runs: {self.setup_text(cov.quick)}",
            "paper values: Sprout NSDI'13, recomputed from its Figure 7 points (they give its "
            "introduction's table); Cubic-CoDel from that table (no per-panel points)",
        ]
        notes += [f"{p.network.title}: {p.base} substitutes for {p.network.name}"
                  for p in self.panels() if p.substitute and p.direction == self.directions[0]]
        return [write_table_csv(rows, out_dir / "table.csv"),
                write_table_markdown(rows, out_dir / "table.md", title="Sprout's average "
                                     "speed-up and delay reduction", notes=notes)]


def _ranks(delays: dict[str, float]) -> dict[str, int]:
    """1 for the lowest delay, 2 for the next..."""
    return {s: i + 1 for i, s in enumerate(sorted(delays, key=lambda s: delays[s]))}
