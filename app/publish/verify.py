"""`repro verify`: re-derive every metric and claim of a results folder from its raw
artifacts, compare with what is stored, and say whether the reproduction holds.

Exit status: 0 every claim that ran passed and every stored number was given back
(or recomputed by a newer analysis); 1 a claim failed, a stored number does not
reproduce, or a bundle's file was changed or is missing; 2 something could not be
checked (no results, unreadable artifacts, run folders gone, an unknown experiment).
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from analysis.claims.model import FAIL, NOT_RUN, PASS, ClaimReport, row_runs
from analysis.coverage import NOT_RUN as NOT_RUN_YET
from analysis.fidelity import LATE_RULE, emulator_late, worst_lateness_p99_us
from analysis.host_limits import receive_ceiling
from analysis.cpu_probe import cpus_were_missing
from analysis.host_timing import MAX_HOST_P99_US, hosts_late, worst_host_p99_us
from analysis.rederive import DIFFERS, MATCH, RECOMPUTED, UNREADABLE, MetricsCheck
from analysis.coverage import short_reason
from analysis.summary import INVALID, RunRecord, failed_records, failed_runs
from core.processes import pid_alive
from core.results import DONE, ExperimentStore, experiment_store, read_json
from core.traces import TraceSet
from runkinds.metrics import check_run
from runkinds.registry import analysis_version
from experiments.base import Experiment
from app.recorded_options import RecordError, as_recorded
from kernel.congestion_control import EBPF_PREFIX

EXIT_OK, EXIT_FAILED, EXIT_UNCHECKED = 0, 1, 2


@dataclass
class RunVerdict:
    run: str
    check: MetricsCheck
    scheme: str = ""
    late: bool = False
    hosts_late: bool = False  # its end hosts were late (analysis/host_timing.py)
    served: str = ""  # "cubic: builtin" for TCP runs
    other_impl: str = ""  # why the serving implementation is not the one requested
    lateness_p99_us: int | None = None  # the emulator's, the worse direction
    # The emulator's worst stall and how long a CPU was held over it (analysis/cpu_probe.py);
    # cpu_held_us None: no probe on record for the run.
    worst_stall_us: int | None = None
    cpu_held_us: int | None = None
    host_p99_us: int | None = None
    steal_pct: float | None = None
    # One of the runs the plan judges; False for a run on record made for another plan (the
    # quick runs of an experiment now checked in full, a batch with other options): it is
    # still re-derived, but its timing is not counted as the plan's.
    in_plan: bool = True


@dataclass
class ExperimentVerdict:
    name: str
    title: str
    present: bool  # a results folder exists for it
    mode: str = ""
    planned: int = 0
    finished: int = 0
    runs: list[RunVerdict] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (folder, reason)
    since_finished: set[str] = field(default_factory=set)  # failed folders whose run finished
    # Failed folders of runs the plan does not use (another mode's, other options'): listed,
    # not counted as the plan's failed attempts.
    failed_outside_plan: set[str] = field(default_factory=set)
    # Finished runs a rerun of the same spec replaced (`--force`): kept, and no failure.
    superseded: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (run label, reason)
    # Finished runs that are no measurement (an absurd kernel window): (folder, reason).
    invalid: list[tuple[str, str]] = field(default_factory=list)
    half_written: list[str] = field(default_factory=list)
    left_out: int = 0  # finished runs the claims could not use (their trace is not here)
    deleted: list[str] = field(default_factory=list)  # named by claims.json, now gone
    changed_claims: list[str] = field(default_factory=list)  # verdicts unlike claims.json's
    claims: ClaimReport | None = None
    # The options its runs were planned with (options.json), or why they are not known.
    options: dict[str, Any] = field(default_factory=dict)
    options_problem: str = ""
    providers: dict[str, dict[str, int]] = field(default_factory=dict)  # variant -> provider -> n
    # TCP runs by their receivers' tcp_rmem maximum (the window's ceiling): value -> n.
    tcp_rmem_max: dict[str, int] = field(default_factory=dict)
    # The plan's finished runs with their re-derived metrics, and the rows its claims were
    # judged on (`repro compare` sets two passes' side by side).
    records: list[RunRecord] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(r.check.status == status for r in self.runs)

    @property
    def judged(self) -> list[RunVerdict]:
        """The runs whose timing counts: those of the plan."""
        return [r for r in self.runs if r.in_plan]

    @property
    def outside_plan(self) -> list[RunVerdict]:
        return [r for r in self.runs if not r.in_plan]

    @property
    def late(self) -> int:
        return sum(r.late for r in self.judged)

    @property
    def hosts_late(self) -> int:
        return sum(r.hosts_late for r in self.judged)

    @property
    def lateness_p99_us(self) -> list[int]:
        return [r.lateness_p99_us for r in self.judged if r.lateness_p99_us is not None]

    @property
    def host_p99_us(self) -> list[int]:
        return [r.host_p99_us for r in self.judged if r.host_p99_us is not None]

    @property
    def steal_pct(self) -> list[float]:
        return [r.steal_pct for r in self.judged if r.steal_pct is not None]

    @property
    def failed_in_plan(self) -> list[tuple[str, str]]:
        """The failed attempts the plan's counts include."""
        return [(n, r) for n, r in self.failed if n not in self.failed_outside_plan]

    @property
    def other_impl(self) -> list[RunVerdict]:
        return [r for r in self.runs if r.other_impl]

    def claim_count(self, verdict: str) -> int:
        return 0 if self.claims is None else self.claims.counts()[verdict]

    def problems(self) -> tuple[bool, bool]:
        """(something failed, something could not be checked)."""
        failed = self.count(DIFFERS) > 0 or self.claim_count(FAIL) > 0
        unchecked = self.count(UNREADABLE) > 0 or bool(self.deleted) or bool(self.options_problem)
        return failed, unchecked

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.name, "present": self.present, "mode": self.mode,
            "options": self.options, "options_problem": self.options_problem,
            "planned": self.planned, "finished": self.finished, "late": self.late,
            "hosts_late": self.hosts_late,
            "outside_plan": {"runs": len(self.outside_plan),
                             "late": sum(r.late for r in self.outside_plan),
                             "hosts_late": sum(r.hosts_late for r in self.outside_plan)},
            "served_by_other_implementation": [
                {"run": r.run, "why": r.other_impl} for r in self.other_impl],
            "failed": [{"run": n, "reason": r, "since_finished": n in self.since_finished,
                        "in_plan": n not in self.failed_outside_plan}
                       for n, r in self.failed],
            "superseded_by_a_rerun": self.superseded,
            "missing": [{"run": n, "reason": r} for n, r in self.missing],
            "invalid": [{"run": n, "reason": r} for n, r in self.invalid],
            "half_written": self.half_written, "left_out_of_claims": self.left_out,
            "deleted_runs": self.deleted, "claims_changed_since_stored": self.changed_claims,
            "metrics": {s: self.count(s) for s in (MATCH, RECOMPUTED, DIFFERS, UNREADABLE)},
            "runs": [{"run": r.run, "status": r.check.status, "detail": r.check.describe(),
                      "late": r.late, "hosts_late": r.hosts_late, "in_plan": r.in_plan,
                      "late_cause": late_cause(r) if r.late else None,
                      "served": r.served,
                      "other_implementation": r.other_impl}
                     for r in self.runs],
            "providers": self.providers,
            "tcp_rmem_max": self.tcp_rmem_max,
            "lateness_p99_us_max": max(self.lateness_p99_us, default=None),
            "host_p99_us_max": max(self.host_p99_us, default=None),
            "cpu_steal_pct_max": max(self.steal_pct, default=None),
            "claims": None if self.claims is None else self.claims.to_dict(),
        }


@dataclass
class VerifyReport:
    experiments: list[ExperimentVerdict]
    analysis_version: str
    notes: list[str] = field(default_factory=list)  # e.g. a bundle's findings
    bundle_failed: bool = False
    bundle_unchecked: bool = False

    def exit_code(self) -> int:
        flags = [e.problems() for e in self.experiments]
        if self.bundle_failed or any(f for f, _ in flags):
            return EXIT_FAILED
        ran = [e for e in self.experiments if e.present and e.finished]
        if self.bundle_unchecked or any(u for _, u in flags) or not ran:
            return EXIT_UNCHECKED
        return EXIT_OK

    def holds(self) -> str:
        code = self.exit_code()
        if code == EXIT_OK:
            judged = sum(v.claim_count(PASS) for v in self.experiments)
            not_run = sum(v.claim_count(NOT_RUN) for v in self.experiments)
            # A grader must not read "holds" as "every claim was judged".
            scope = f" for the {judged} claim(s) judged ({not_run} NOT RUN: their runs are " \
                    "missing or invalid, listed above)" if not_run else ""
            return f"the reproduction holds{scope}: every claim that ran passed, every " \
                   "stored number was given back by the raw artifacts"
        failed = [f"{v.name}: {r.id}" for v in self.experiments if v.claims
                  for r in v.claims.results if r.verdict == FAIL]
        differ = sum(v.count(DIFFERS) for v in self.experiments)
        unreadable = sum(v.count(UNREADABLE) for v in self.experiments)
        gone = sum(len(v.deleted) for v in self.experiments)
        parts = [f"{len(failed)} claim(s) FAIL ({', '.join(failed)})"] if failed else []
        parts += [f"{differ} run(s) whose stored numbers DIFFER"] if differ else []
        parts += ["the bundle's files do not match its manifest"] if self.bundle_failed else []
        if code == EXIT_FAILED:
            return "the reproduction does not hold: " + "; ".join(parts)
        parts += [f"{unreadable} run(s) unreadable"] if unreadable else []
        parts += [f"{gone} run folder(s) gone"] if gone else []
        parts += ["the bundle could not be read"] if self.bundle_unchecked else []
        unknown = [v.name for v in self.experiments if v.options_problem]
        parts += [f"the options {', '.join(unknown)} ran with are not on record or "
                  "unreadable"] if unknown else []
        if not any(e.present and e.finished for e in self.experiments) and not unknown:
            parts.append("no finished runs to check")
        return "could not check everything: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"analysis_version": self.analysis_version, "exit": self.exit_code(),
                "holds": self.exit_code() == EXIT_OK, "summary": self.holds(),
                "notes": self.notes, "experiments": [e.to_dict() for e in self.experiments]}


# ----------------------------------------------------------------------------- checks


def _other_impl(spec_params: dict[str, Any], metrics: dict[str, Any]) -> str:
    """Why a TCP run was served otherwise than requested ("" when it was not)."""
    requested, used = metrics.get("cc_requested"), metrics.get("cc_used")
    if requested is None:
        return ""
    impl, provider = spec_params.get("cc_impl"), metrics.get("cc_provider")
    # The kernel names the eBPF implementation of X bpf_X; built-in and module keep X.
    expected = f"{EBPF_PREFIX}{requested}" if provider == "ebpf" else requested
    if used != expected:
        return f"{requested} requested ({provider} provider), {used} ran"
    if impl == "kernel" and provider not in ("builtin", "module"):
        return f"{requested}: the kernel's was requested, {provider} served it"
    if impl == "ebpf" and provider != "ebpf":
        return f"{requested}: eBPF was requested, {provider} served it"
    return ""


def late_cause(run: RunVerdict) -> str:
    """Whose the emulator's worst stall was, as the CPU probe saw it."""
    if run.worst_stall_us is None:
        return "no lateness file to place its worst stall"
    held = f"the emulator's worst departure was {run.worst_stall_us / 1000:.1f} ms late"
    missing = cpus_were_missing(run.worst_stall_us, run.cpu_held_us)
    if missing is None:
        return f"{held}; no CPU probe on record for this run"
    if missing:
        return (f"{held}, and a CPU was held {(run.cpu_held_us or 0) / 1000:.1f} ms over the same "
                "interval: the machine's CPUs were not there")
    return (f"{held}, and no CPU was held more than {(run.cpu_held_us or 0) / 1000:.1f} ms "
            "then: the CPUs were there; the emulator's own process was held")


def half_written(store: ExperimentStore) -> list[str]:
    """Run folders without DONE (the runner moves them aside on its next run)."""
    if not store.runs_dir.is_dir():
        return []
    found = []
    for p in sorted(store.runs_dir.iterdir()):
        if p.is_dir() and not (p / DONE).is_file():
            owner = p.name.rsplit("-", 1)[-1]
            running = p.name.startswith(".tmp-") and owner.isdigit() and pid_alive(int(owner))
            found.append(p.name + (" (still running)" if running else ""))
    return found


def verify_as_run(exp: Experiment, results_dir: Path) -> ExperimentVerdict:
    """`exp` verified against the options its results were run with (their options.json,
    app/recorded_options.py), never against what this machine would choose; when
    those are not known, every run is still re-derived but the plan and claims are not
    judged."""
    store = experiment_store(results_dir, exp.name)
    if not store.root.is_dir():
        return verify_experiment(exp, results_dir)
    try:
        planned = as_recorded(exp, store.root)
    except RecordError as e:
        return verify_experiment(exp, results_dir, options_problem=str(e))
    return verify_experiment(planned, results_dir)


def verify_experiment(exp: Experiment, results_dir: Path,
                      options_problem: str = "") -> ExperimentVerdict:
    """`exp`'s runs and claims, judged against `exp`'s plan as given (verify_as_run rebuilds
    it from the record first); with `options_problem`, the runs only."""
    store = experiment_store(results_dir, exp.name)
    verdict = ExperimentVerdict(exp.name, exp.title, present=store.root.is_dir())
    if not verdict.present:
        return verdict
    verdict.half_written = half_written(store)
    records: list[RunRecord] = []
    for run_dir in store.done_runs():
        check, spec, meta, derived = check_run(run_dir)
        run = RunVerdict(run_dir.name, check)
        if spec is not None and meta is not None and derived is not None:
            records.append(RunRecord(spec, derived, meta, run_dir))
            run.scheme = spec.scheme
            run.late = emulator_late(derived)
            run.hosts_late = hosts_late(derived)
            run.host_p99_us = worst_host_p99_us(derived)
            run.other_impl = _other_impl(dict(spec.params), derived)
            if derived.get("cc_requested"):
                variant, provider = derived["cc_requested"], str(derived.get("cc_provider"))
                run.served = f"{variant}: {provider}"
                slot = verdict.providers.setdefault(variant, {})
                slot[provider] = slot.get(provider, 0) + 1
                ceiling = receive_ceiling(meta)
                verdict.tcp_rmem_max[ceiling] = verdict.tcp_rmem_max.get(ceiling, 0) + 1
            run.lateness_p99_us = worst_lateness_p99_us(derived)
            run.worst_stall_us = derived.get("emulator_worst_stall_us")
            run.cpu_held_us = derived.get("cpu_held_during_it_us")
            if meta.get("cpu_steal_pct") is not None:
                run.steal_pct = float(meta["cpu_steal_pct"])
        verdict.runs.append(run)
    verdict.invalid = [(r.path.name, exp.invalid_reason(r)) for r in records
                       if exp.invalid_reason(r)]
    verdict.failed = failed_runs(store)
    finished_specs = {r.spec for r in records}
    failures = failed_records(store)
    verdict.since_finished = {f.path.name for f in failures if f.spec in finished_specs}
    verdict.superseded = [p.name for p in store.superseded()]
    if options_problem:
        verdict.options_problem = options_problem
        _compare_stored_claims(verdict, store, {p.name for p in store.done_runs()})
        return verdict
    verdict.options = dict(exp.chosen)
    cov = exp.coverage(store, records)
    verdict.mode = "quick" if cov.quick else "full"
    verdict.planned = len(cov.cells)
    verdict.finished = sum(c.done for c in cov.cells)
    verdict.missing = [(c.spec.label(), c.reason) for c in cov.missing()]
    planned_runs = {r.path.name for r in cov.runs_on_record()}
    for run in verdict.runs:
        run.in_plan = run.run in planned_runs
    planned_specs = {c.spec for c in cov.cells}
    verdict.failed_outside_plan = {f.path.name for f in failures if f.spec not in planned_specs}
    rows = exp.claim_rows(cov)
    verdict.records, verdict.rows = cov.records(), rows
    in_rows = set().union(*(row_runs(row) for row in rows))
    verdict.left_out = sum(r.path.name not in in_rows for r in cov.records())
    verdict.claims = exp.claims_on(cov, rows)
    _compare_stored_claims(verdict, store, {p.name for p in store.done_runs()})
    return verdict


def _runs_in_summary(store: ExperimentStore) -> set[str]:
    """The run folders summary.csv was drawn from (its `run` column)."""
    path = store.root / "summary.csv"
    if not path.is_file():
        return set()
    with open(path, newline="") as f:
        return {row["run"] for row in csv.DictReader(f) if row.get("run")}


def _compare_stored_claims(verdict: ExperimentVerdict, store: ExperimentStore,
                           present: set[str]) -> None:
    """Runs the stored claims.json and summary.csv were drawn from that are gone;
    verdicts that changed since claims.json was written."""
    named = _runs_in_summary(store)
    path = store.root / "claims.json"
    stored = None
    if path.is_file() and verdict.claims is not None:
        try:
            stored = ClaimReport.from_dict(read_json(path))
        except (OSError, ValueError, TypeError) as e:
            verdict.changed_claims.append(f"claims.json unreadable: {e}")
    if stored is not None:
        named |= {run for result in stored.results for run in result.runs}
    verdict.deleted = sorted(named - present)
    if stored is None or verdict.claims is None:
        return
    ours = {r.id: r.verdict for r in verdict.claims.results}
    for result in stored.results:
        now = ours.get(result.id)
        if now is not None and now != result.verdict:
            verdict.changed_claims.append(f"{result.id}: stored {result.verdict}, now {now}")


def verify_results(experiments: Sequence[Experiment], results_dir: Path,
                   traces: TraceSet | None = None) -> VerifyReport:
    """Every experiment's runs and claims under `results_dir`."""
    verdicts = [verify_as_run(exp.with_traces(traces) if traces else exp, results_dir)
                for exp in experiments]
    return VerifyReport(verdicts, analysis_version())


# ----------------------------------------------------------------------------- printing


def _table(rows: list[list[str]], out: TextIO, widths: Iterable[int] = ()) -> None:
    limits = list(widths)
    cols = len(rows[0])
    width = [max(len(r[i]) for r in rows) for i in range(cols)]
    for i, limit in enumerate(limits):
        width[i] = min(width[i], limit)
    for row in rows:
        cells = [c if len(c) <= width[i] or i == cols - 1 else c[:width[i] - 1] + "…"
                 for i, c in enumerate(row)]
        print("  " + "  ".join(c.ljust(width[i]) for i, c in enumerate(cells)).rstrip(),
              file=out)


def print_experiment(v: ExperimentVerdict, out: TextIO) -> None:
    print(f"== {v.name}", file=out)
    if not v.present:
        print(f"  not run: no results folder (`./repro run {v.name} --quick`)", file=out)
        return
    late = (f"{v.late} late (emulator: {LATE_RULE}); "
            f"{v.hosts_late} with late end hosts (p99 above {MAX_HOST_P99_US / 1000:g} ms)")
    if v.options_problem:
        print(f"  NOT CHECKED: the plan its runs were made for is unknown: {v.options_problem}",
              file=out)
    elif v.options:
        print("  judged against the options it was run with (options.json): "
              + " ".join(f"{k}={val}" for k, val in sorted(v.options.items())), file=out)
    planned = f"{v.mode} mode: {v.finished} of {v.planned} planned runs finished" \
        if not v.options_problem else f"{len(v.runs)} finished runs, matched to no plan"
    outside = v.outside_plan
    if outside:
        late += (f" (not counted: {len(outside)} finished runs on record that this plan does "
                 "not use, made in another mode, with other options or redone since: "
                 f"{sum(r.late for r in outside)} of them late, "
                 f"{sum(r.hosts_late for r in outside)} with late end hosts)")
    failed = v.failed_in_plan
    failed_text = (f"{len(failed)} failed attempts on record "
                   f"({sum(n in v.since_finished for n, _ in failed)} since finished)")
    if v.failed_outside_plan:
        failed_text += (f" (not counted: {len(v.failed_outside_plan)} failed attempts at runs "
                        "this plan does not use)")
    if v.superseded:
        failed_text += (f"; {len(v.superseded)} earlier runs replaced by a rerun of the same "
                        "spec (--force), kept in superseded/, not failures")
    print(f"  {planned}; {failed_text}; "
          f"{late}; "
          f"{len(v.other_impl)} served by another implementation than requested; "
          f"{len(v.invalid)} finished but invalid (left out of figures and claims)", file=out)
    print(f"  metrics re-derived from the raw artifacts: {v.count(MATCH)} match, "
          f"{v.count(RECOMPUTED)} recomputed (stored by an older analysis), "
          f"{v.count(DIFFERS)} DIFFER, {v.count(UNREADABLE)} unreadable", file=out)
    for r in v.runs:
        if r.check.status != MATCH:
            print(f"    {r.check.status}: {r.run}: {r.check.describe()}", file=out)
    for r in v.other_impl:
        print(f"    served otherwise: {r.run}: {r.other_impl}", file=out)
    if v.providers:
        served = "; ".join(f"{variant} by {', '.join(f'{p} ({n})' for p, n in ps.items())}"
                           for variant, ps in sorted(v.providers.items()))
        print(f"  TCP variants served: {served}", file=out)
    if v.tcp_rmem_max:
        ceilings = "; ".join(f"{c} ({n})" for c, n in sorted(v.tcp_rmem_max.items()))
        print(f"  TCP receive buffer maximum (tcp_rmem; caps the window over an infinite "
              f"queue): {ceilings}", file=out)
    if v.lateness_p99_us or v.steal_pct:
        print(f"  emulator p99 lateness: worst {max(v.lateness_p99_us, default=0)} us; "
              f"CPU steal: worst {max(v.steal_pct, default=0.0):.1f}%", file=out)
    if v.host_p99_us:
        print(f"  end hosts' p99 (reaction or wake-up, docs/metrics.md): worst "
              f"{max(v.host_p99_us)} us over {len(v.host_p99_us)} runs", file=out)
    for r in v.judged:
        if r.late:
            print(f"    late: {r.run}: {late_cause(r)}", file=out)
    for name in v.half_written:
        print(f"    half-written run (no DONE marker, not counted): {name}", file=out)
    for name, reason in v.failed:
        later = " (this run finished on a later attempt)" if name in v.since_finished else ""
        apart = " (not this plan's run: not counted)" if name in v.failed_outside_plan else ""
        print(f"    failed: {name}: {short_reason(reason)}{later}{apart}", file=out)
    for name, reason in v.invalid:
        print(f"    invalid: {name}: {short_reason(reason, 300)}", file=out)
    not_yet = sum(reason == NOT_RUN_YET for _, reason in v.missing)
    invalid = sum(reason.startswith(INVALID) for _, reason in v.missing)
    if v.missing:
        print(f"  missing: {len(v.missing)} planned runs have no result "
              f"({not_yet} never run, {invalid} invalid, "
              f"{len(v.missing) - not_yet - invalid} failed)", file=out)
    if v.left_out:
        print(f"  {v.left_out} finished runs left out of the claims (their trace is not on "
              "this machine: pass --traces-dir)", file=out)
    for name in v.deleted:
        print(f"    run folder gone (named by the stored claims.json or summary.csv): {name}",
              file=out)
    for change in v.changed_claims:
        print(f"    claim changed since claims.json was written: {change}", file=out)
    if v.options_problem:
        print("  claims not evaluated (the plan is unknown, above)", file=out)
        return
    if v.claims is None or not v.claims.results:
        print("  no claims declared", file=out)
        return
    rows = [["CLAIM", "VERDICT", "PAPER", "OURS", "TOLERANCE", "RUNS", "WHY"]]
    for c in v.claims.results:
        rows.append([c.id, c.verdict, c.paper, c.ours, c.tolerance, c.runs_text(), c.why])
    _table(rows, out, widths=(34, 8, 26, 30, 26, 24))
    counts = v.claims.counts()
    print(f"  claims: {counts[PASS]} PASS, {counts[FAIL]} FAIL, {counts[NOT_RUN]} NOT RUN",
          file=out)


def print_report(report: VerifyReport, out: TextIO) -> None:
    for note in report.notes:
        print(note, file=out)
    for v in report.experiments:
        print_experiment(v, out)
    totals = {k: sum(v.claim_count(k) for v in report.experiments) for k in (PASS, FAIL, NOT_RUN)}
    print(f"== in all: {totals[PASS]} PASS, {totals[FAIL]} FAIL, {totals[NOT_RUN]} NOT RUN; "
          f"analysis {report.analysis_version}", file=out)
    print(f"{report.holds()} (exit {report.exit_code()})", file=out)


def emit(report: VerifyReport, as_json: bool, out: TextIO) -> int:
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True, default=str), file=out)
    else:
        print_report(report, out)
    return report.exit_code()
