"""`repro compare A B`: does one pass agree with another?

A and B are each a results folder or a bundle written by `repro pack`. Both are verified
with this checkout's analysis (app/publish/verify.py: metrics re-derived from the raw
artifacts, claims judged against the options each pass was run with), then set side by
side:

- every claim's verdict and value on both sides;
- each experiment's metrics (the row columns its claims read, experiments/base.py
  `metric_columns`), cell by cell, where a cell is one run spec without its trial: runs are
  matched by what they measured, not by their ids, so passes made by different code match;
  whether a difference exceeds the run-to-run noise is judged by the tests of
  app/publish/noise.py, each named beside its result;
- where the two passes' machines differ (app/publish/compare_env.py).

Exit status: 0 every claim has the same verdict and no metric moved beyond noise; 1
something differs; 2 the two could not be compared (a missing or corrupt bundle, a folder
with no results, no experiment with results on both sides), said in one line.
"""
from __future__ import annotations

import json
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from analysis.claims.model import ClaimResult, row_runs, to_number
from app.publish.compare_env import Fact, environment_facts
from app.publish.noise import (NOT_JUDGED, TESTS_TEXT, Judgement, judge_cell, judge_metric)
from app.publish.pack import MANIFEST, unpack
from app.publish.verify import ExperimentVerdict, VerifyReport, verify_results
from core.paths import ProjectPaths
from core.runspec import RunSpec
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.registry import experiment_classes

EXIT_SAME, EXIT_DIFFERENT, EXIT_UNCOMPARABLE = 0, 1, 2
ABSENT = "absent"
ALONE = "not compared, only in "
# Row columns that tell apart rows standing on the same runs (a run scored in both
# directions, a study's summary row) or on none (a board's omniscient row).
ROW_TAGS = ("direction", "study", "trace", "scheme", "name", "target", "flows")


class CompareError(Exception):
    """Why two passes could not be compared, in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(" ".join(reason.split()))


# ----------------------------------------------------------------------------- sides


@dataclass
class Side:
    name: str  # "A" or "B"
    given: str  # as named on the command line
    kind: str  # "results folder" or "bundle"
    results: Path
    traces: TraceSet
    manifest: dict[str, Any] = field(default_factory=dict)
    report: VerifyReport | None = None

    def verdicts(self) -> dict[str, ExperimentVerdict]:
        """The experiments with finished runs on this side, by name."""
        if self.report is None:
            return {}
        return {v.name: v for v in self.report.experiments if v.present and v.runs}

    def describe(self) -> str:
        runs = len({r.run for v in self.verdicts().values() for r in v.runs})
        text = f"{self.given} ({self.kind}, {runs} finished runs"
        if self.manifest:
            text += (f"; packed {self.manifest.get('created', '?')} by code "
                     f"{self.manifest.get('code_version', '?')}")
        return text + ")"


def open_side(name: str, path: Path, paths: ProjectPaths, workdir: Path) -> Side:
    """A results folder as it is, or a bundle unpacked into `workdir` with its hashes checked."""
    if not path.exists():
        raise CompareError(f"{path}: no such results folder or bundle")
    if path.is_dir():
        return Side(name, str(path), "results folder", path,
                    TraceSet.for_project(paths.root))
    dest = workdir / name
    check = unpack(path, dest)
    if check.error:
        raise CompareError(check.error)
    bad = check.changed + check.missing + check.unsafe
    if bad:
        raise CompareError(f"{path}: a corrupt bundle: {len(bad)} files do not match its "
                           f"{MANIFEST} (first: {bad[0]})")
    return Side(name, str(path), "bundle", dest / "results",
                TraceSet.for_project(paths.root, extra_dir=dest / "traces"), check.manifest)


def _present_names(side: Side) -> list[str]:
    """The experiment folders a side holds (a bundle's manifest names its own)."""
    if side.manifest:
        return sorted(side.manifest.get("experiments") or {})
    if not side.results.is_dir():
        return []
    return sorted(p.name for p in side.results.iterdir()
                  if p.is_dir() and (p / "runs").is_dir())


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ClaimPair:
    experiment: str
    id: str
    text: str
    a: ClaimResult | None
    b: ClaimResult | None

    @property
    def verdict_a(self) -> str:
        return self.a.verdict if self.a else ABSENT

    @property
    def verdict_b(self) -> str:
        return self.b.verdict if self.b else ABSENT

    @property
    def changed(self) -> bool:
        return self.verdict_a != self.verdict_b

    def to_dict(self) -> dict[str, Any]:
        def side(r: ClaimResult | None) -> dict[str, Any] | None:
            return None if r is None else {"verdict": r.verdict, "ours": r.ours,
                                           "why": r.why, "runs": len(r.runs)}
        return {"experiment": self.experiment, "claim": self.id, "text": self.text,
                "changed": self.changed, "a": side(self.a), "b": side(self.b)}


@dataclass(frozen=True)
class CellMetric:
    """One metric of one cell: each side's trials, and the judgement on them."""
    experiment: str
    cell: str
    metric: str
    a: tuple[float, ...]
    b: tuple[float, ...]
    judgement: Judgement

    @property
    def mean_a(self) -> float:
        return statistics.fmean(self.a)

    @property
    def mean_b(self) -> float:
        return statistics.fmean(self.b)

    @property
    def change(self) -> float | None:
        """B's mean against A's, relative; None when A's is 0."""
        return None if self.mean_a == 0 else self.mean_b / self.mean_a - 1

    def change_text(self) -> str:
        change = self.change
        if change is None:
            return f"{self.mean_b - self.mean_a:+.4g}"
        return f"{100 * change:+.1f}%"

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "cell": self.cell, "metric": self.metric,
                "a": list(self.a), "b": list(self.b), "change": self.change,
                "test": self.judgement.test, "p": self.judgement.p,
                "moved": self.judgement.moved, "why": self.judgement.why}


@dataclass(frozen=True)
class MetricOverCells:
    """One metric over all the cells an experiment has on both sides."""
    experiment: str
    metric: str
    cells: int
    judgement: Judgement

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "metric": self.metric, "cells": self.cells,
                "test": self.judgement.test, "p": self.judgement.p,
                "moved": self.judgement.moved, "why": self.judgement.why}


@dataclass
class ExperimentComparison:
    name: str
    title: str
    mode_a: str
    mode_b: str
    claims: list[ClaimPair] = field(default_factory=list)
    cells_both: int = 0
    only_a: list[str] = field(default_factory=list)  # cells on one side only
    only_b: list[str] = field(default_factory=list)
    metrics: list[CellMetric] = field(default_factory=list)
    over_cells: list[MetricOverCells] = field(default_factory=list)

    def moved(self) -> list[CellMetric]:
        return [m for m in self.metrics if m.judgement.moved]

    def moved_over_cells(self) -> list[MetricOverCells]:
        return [m for m in self.over_cells if m.judgement.moved]

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, "mode": {"a": self.mode_a, "b": self.mode_b},
                "cells_on_both_sides": self.cells_both, "cells_only_in_a": self.only_a,
                "cells_only_in_b": self.only_b,
                "claims": [c.to_dict() for c in self.claims],
                "metrics": [m.to_dict() for m in self.metrics],
                "metrics_over_cells": [m.to_dict() for m in self.over_cells]}


@dataclass
class Comparison:
    a: Side
    b: Side
    experiments: list[ExperimentComparison]
    environment: list[Fact]
    notes: list[str] = field(default_factory=list)

    def claims(self) -> list[ClaimPair]:
        return [c for e in self.experiments for c in e.claims]

    def changed_claims(self) -> list[ClaimPair]:
        return [c for c in self.claims() if c.changed]

    def moved(self) -> list[CellMetric]:
        return [m for e in self.experiments for m in e.moved()]

    def moved_over_cells(self) -> list[MetricOverCells]:
        return [m for e in self.experiments for m in e.moved_over_cells()]

    def judged_over_cells(self) -> int:
        return sum(m.judgement.test != NOT_JUDGED for e in self.experiments
                   for m in e.over_cells)

    def judged(self) -> int:
        return sum(m.judgement.test != NOT_JUDGED for e in self.experiments for m in e.metrics)

    def exit_code(self) -> int:
        if self.changed_claims() or self.moved() or self.moved_over_cells():
            return EXIT_DIFFERENT
        return EXIT_SAME

    def summary(self) -> str:
        claims, changed = self.claims(), self.changed_claims()
        cells = sum(len(e.metrics) for e in self.experiments)
        parts = [f"{len(changed)} of {len(claims)} claims changed verdict",
                 f"{len(self.moved())} cell metrics moved beyond noise (of {self.judged()} "
                 f"judged; {cells - self.judged()} not judged: one trial a side)",
                 f"{len(self.moved_over_cells())} metrics moved across an experiment's cells "
                 f"(of {self.judged_over_cells()} judged)"]
        verdict = "the passes agree" if self.exit_code() == EXIT_SAME else "the passes differ"
        alone = [n for n in self.notes if n.startswith(ALONE)]
        scope = (f" on the {len(self.experiments)} experiments both hold (others on one side "
                 "only, above)") if alone else ""
        return f"{verdict}{scope}: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a.describe(), "b": self.b.describe(), "exit": self.exit_code(),
                "summary": self.summary(), "tests": TESTS_TEXT, "notes": self.notes,
                "environment": [f.to_dict() for f in self.environment],
                "experiments": [e.to_dict() for e in self.experiments]}


# ----------------------------------------------------------------------------- matching


def _untrialed(spec: RunSpec) -> str:
    """What a run measured, but its trial: the same in two passes made by different code."""
    d = {k: v for k, v in spec.to_dict().items() if k not in ("experiment", "trial")}
    return json.dumps(d, sort_keys=True, default=str)


def _label(spec: RunSpec) -> str:
    suffix = f"-t{spec.trial}"
    label = spec.label()
    return label[:-len(suffix)] if label.endswith(suffix) else label


def _cells(v: ExperimentVerdict) -> dict[tuple, tuple[str, list[dict[str, Any]]]]:
    """The rows of a side's experiment by cell: the runs' specs without their trials, and
    the row's tags; each cell's rows are its trials."""
    spec_of = {r.path.name: r.spec for r in v.records}
    cells: dict[tuple, tuple[str, list[dict[str, Any]]]] = {}
    for row in v.rows:
        specs = [spec_of[name] for name in sorted(row_runs(row)) if name in spec_of]
        tags = tuple((k, str(row[k])) for k in ROW_TAGS if row.get(k) not in (None, ""))
        ident = tuple(sorted({_untrialed(s) for s in specs}))
        if len(ident) > 1 and tags:  # a summary over several cells (a study's minimum):
            ident = ()               # itself by what it summarizes, not by which runs made it
        labels = sorted({_label(s) for s in specs})
        label = labels[0] if len(labels) == 1 else (
            f"{len(labels)} runs from {labels[0]}" if labels else "")
        shown = " ".join(f"{k}={val}" for k, val in tags
                         if not labels or k in ("direction", "study", "target"))
        key = (ident, tags)
        entry = cells.setdefault(key, (" ".join(p for p in (label, shown) if p), []))
        entry[1].append(row)
    return cells


def _numbers(rows: Sequence[dict[str, Any]], column: str) -> tuple[float, ...]:
    values = []
    for row in rows:
        value = row.get(column)
        if isinstance(value, bool):
            continue
        number = to_number(value)
        if number is not None:
            values.append(number)
    return tuple(values)


def _spec_names(*verdicts: ExperimentVerdict) -> set[str]:
    """Run parameters and options: they name a cell, they are not its measurements."""
    names = {"trial"}
    for v in verdicts:
        for r in v.records:
            names.update(dict(r.spec.params), dict(r.spec.options))
    return names


def compare_experiment(exp: Experiment, a: ExperimentVerdict,
                       b: ExperimentVerdict) -> ExperimentComparison:
    """One experiment both sides hold: its claims (a claim judged on one side only is
    ABSENT on the other, a difference), its cells' metrics."""
    result = ExperimentComparison(exp.name, exp.title, a.mode, b.mode)
    claims_a = {r.id: r for r in (a.claims.results if a.claims else ())}
    claims_b = {r.id: r for r in (b.claims.results if b.claims else ())}
    for claim_id in dict.fromkeys([*claims_a, *claims_b]):
        known = claims_a.get(claim_id) or claims_b[claim_id]
        result.claims.append(ClaimPair(exp.name, claim_id, known.text, claims_a.get(claim_id),
                                       claims_b.get(claim_id)))
    cells_a, cells_b = _cells(a), _cells(b)
    both = [k for k in cells_a if k in cells_b]
    result.cells_both = len(both)
    result.only_a = sorted(cells_a[k][0] for k in cells_a if k not in cells_b)
    result.only_b = sorted(cells_b[k][0] for k in cells_b if k not in cells_a)
    columns = sorted(exp.metric_columns() - _spec_names(a, b))
    for column in columns:
        means_a, means_b = [], []
        for key in both:
            label, rows_a = cells_a[key]
            values_a, values_b = _numbers(rows_a, column), _numbers(cells_b[key][1], column)
            if not values_a or not values_b:
                continue
            result.metrics.append(CellMetric(exp.name, label, column, values_a, values_b,
                                             judge_cell(values_a, values_b)))
            means_a.append(statistics.fmean(values_a))
            means_b.append(statistics.fmean(values_b))
        if means_a:
            result.over_cells.append(MetricOverCells(exp.name, column, len(means_a),
                                                     judge_metric(means_a, means_b)))
    return result


def compare(a: Side, b: Side, experiments: Sequence[Experiment]) -> Comparison:
    """Both sides verified with this checkout's analysis, then set side by side."""
    notes = []
    for side in (a, b):
        side.report = verify_results([e for e in experiments
                                      if (side.results / e.name).is_dir()],
                                     side.results, side.traces)
        if not side.verdicts():
            raise CompareError(f"{side.given}: no finished runs of any experiment this "
                               "checkout knows")
        known = {cls.name for cls in experiment_classes()}
        unknown = [n for n in _present_names(side) if n not in known and n != "runs"]
        if unknown:
            notes.append(f"{side.name}: not compared, unknown to this checkout: "
                         f"{', '.join(unknown)}")
        for v in side.verdicts().values():
            if v.options_problem:
                notes.append(f"{side.name}: {v.name}: claims not judged: {v.options_problem}")
            if v.invalid:
                notes.append(f"{side.name}: {v.name}: {len(v.invalid)} finished runs invalid, "
                             "left out (./repro verify says why)")
            differ = v.count("DIFFERS")
            if differ:
                notes.append(f"{side.name}: {v.name}: {differ} runs' stored numbers differ "
                             "from their raw artifacts (./repro verify says which); the "
                             "re-derived ones are compared")
    va, vb = a.verdicts(), b.verdicts()
    if not set(va) & set(vb):
        raise CompareError(f"nothing to compare: no experiment has finished runs on both "
                           f"sides (A: {', '.join(sorted(va))}; B: {', '.join(sorted(vb))})")
    compared = [compare_experiment(e, va[e.name], vb[e.name]) for e in experiments
                if e.name in va and e.name in vb]
    for side, mine, other in ((a, va, vb), (b, vb, va)):
        alone = [n for n in mine if n not in other]
        if alone:
            notes.append(f"{ALONE}{side.name}: {', '.join(alone)}")
    facts = environment_facts(_all_records(va.values()), _all_records(vb.values()),
                              a.manifest, b.manifest)
    return Comparison(a, b, compared, facts, notes)


def _all_records(verdicts: Any) -> list:
    return [r for v in verdicts for r in v.records]


def compare_paths(a: Path, b: Path, experiments: Sequence[Experiment],
                  paths: ProjectPaths) -> Comparison:
    """Open both sides (bundles into a temporary folder, removed afterwards) and compare."""
    with tempfile.TemporaryDirectory(prefix="netrepro-compare-") as work:
        side_a = open_side("A", a, paths, Path(work))
        side_b = open_side("B", b, paths, Path(work))
        return compare(side_a, side_b, experiments)


# ----------------------------------------------------------------------------- printing


def _ours(result: ClaimResult | None) -> str:
    return "-" if result is None else result.ours


def claim_lines(c: Comparison) -> Iterator[str]:
    width = max((len(f"{p.experiment} {p.id}") for p in c.claims()), default=0)
    for p in sorted(c.claims(), key=lambda p: not p.changed):
        mark = "CHANGED" if p.changed else "same   "
        verdicts = f"{p.verdict_a} -> {p.verdict_b}" if p.changed else p.verdict_a
        yield (f"  {mark} {f'{p.experiment} {p.id}'.ljust(width)}  {verdicts:<18} "
               f"A: {_ours(p.a)} | B: {_ours(p.b)}")


def print_comparison(c: Comparison, out: Any, every_metric: bool = False) -> None:
    print(f"A: {c.a.describe()}", file=out)
    print(f"B: {c.b.describe()}", file=out)
    for note in c.notes:
        print(f"note: {note}", file=out)
    machine = [f for f in c.environment if not f.of_the_pass]
    differ = [f for f in machine if f.differs]
    same = [f.name for f in machine if not f.differs]
    print(f"environment: {len(differ)} differences between the machines and code"
          + (f"; the same on both: {', '.join(same)}" if same else ""), file=out)
    for f in differ:
        print(f"  differs: {f.name}: A {f.a} | B {f.b}", file=out)
    for f in c.environment:
        if f.of_the_pass:
            print(f"  this pass: {f.name}: A {f.a} | B {f.b}", file=out)
    print("claims (one line each, changed first: verdict A -> B, then each side's value):",
          file=out)
    for line in claim_lines(c):
        print(line, file=out)
    print(f"metrics, matched by run spec (not by id); {TESTS_TEXT}:", file=out)
    for e in c.experiments:
        judged = [m for m in e.metrics if m.judgement.test != NOT_JUDGED]
        print(f"  {e.name} ({e.mode_a} | {e.mode_b}): {e.cells_both} cells on both sides, "
              f"{len(e.only_a)} only in A, {len(e.only_b)} only in B; {len(e.metrics)} cell "
              f"metrics, {len(judged)} judged, {len(e.moved())} moved", file=out)
        for m in e.over_cells:
            if m.judgement.moved or every_metric:
                mark = "MOVED" if m.judgement.moved else "same "
                print(f"    {mark} {m.metric} over its cells: {m.judgement.why}", file=out)
        for cm in e.metrics:
            if cm.judgement.moved or every_metric:
                mark = "MOVED" if cm.judgement.moved else (
                    "-    " if cm.judgement.moved is None else "same ")
                print(f"    {mark} {cm.metric} {cm.cell}: A {cm.mean_a:.4g} B {cm.mean_b:.4g} "
                      f"({cm.change_text()}): {cm.judgement.why}", file=out)
        if not every_metric:
            unjudged = sorted((m for m in e.metrics if m.judgement.moved is None
                               and m.change is not None),
                              key=lambda m: -abs(m.change or 0))[:3]
            for cm in unjudged:
                if cm.change:
                    print(f"    largest change not judged: {cm.metric} {cm.cell}: A "
                          f"{cm.mean_a:.4g} B {cm.mean_b:.4g} ({cm.change_text()}): "
                          f"{cm.judgement.why}", file=out)
    print(f"{c.summary()} (exit {c.exit_code()})", file=out)


def emit(c: Comparison, as_json: bool, out: Any, every_metric: bool = False) -> int:
    if as_json:
        print(json.dumps(c.to_dict(), indent=2, sort_keys=True, default=str), file=out)
    else:
        print_comparison(c, out, every_metric)
    return c.exit_code()
