"""Why a planned run would run: `./repro run EXP --dry-run`.

A run is done when a finished folder with its id exists. Its id hashes its spec and the
code it executes (core/code_identity.py), so a planned run that is not done is either a
spec never measured here, or one measured by other code: then the finished run's own
record of its code (meta.json `code`, file by file) names the files that changed since.
Runs made before runs recorded their code have no such record: they are made again once.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

from analysis.summary import RunRecord
from core.code_identity import run_code
from core.results import DONE, SPEC, ExperimentStore, read_json
from core.runspec import RunSpec

DONE_ALREADY = "done"
NEW_SPEC = "a new run (this spec was never measured here)"
FORCED = "--force redoes it"
LATE = "--redo-late: its emulator was late"
INVALID = "--redo-invalid: "  # followed by the experiment's reason
BEFORE_CODE_RECORDS = ("measured before runs recorded the code they ran: made again once "
                       "with its code on record")
# At most this many changed files are named in one reason (the rest are counted).
NAMED_FILES = 4


@dataclass(frozen=True)
class PlannedRun:
    spec: RunSpec
    reason: str  # DONE_ALREADY, or why it would run

    @property
    def would_run(self) -> bool:
        return self.reason != DONE_ALREADY


def finished_by_spec(stores: Iterable[ExperimentStore]) -> dict[RunSpec, list[Path]]:
    """Every finished run folder the stores (and their pool) hold, by spec (a spec compares
    without its code: runs of other code versions land together)."""
    found: dict[RunSpec, list[Path]] = {}
    seen: set[Path] = set()
    for store in stores:
        for folder in (store.pool, store.runs_dir):
            if folder is None or not folder.is_dir():
                continue
            for run_dir in folder.iterdir():
                real = run_dir.resolve()
                if real in seen or not (run_dir / DONE).is_file():
                    continue
                seen.add(real)
                try:
                    spec = RunSpec.from_dict(read_json(run_dir / SPEC))
                except (OSError, ValueError, TypeError):
                    continue
                found.setdefault(spec, []).append(run_dir)
    return found


def why_it_runs(spec: RunSpec, store: ExperimentStore, earlier: Mapping[RunSpec, list[Path]],
                force: bool = False, redo_late: bool = False,
                invalid: Callable[[RunSpec], str] | None = None) -> str:
    """DONE_ALREADY, or why `spec` would be run now (`invalid`, given with --redo-invalid,
    says why a finished run is no result: see `invalid_finder`)."""
    if force:
        return FORCED
    if store.is_done(spec) or store.done_elsewhere(spec):
        if redo_late and store.was_late(spec):
            return LATE
        why = invalid(spec) if invalid is not None else ""
        return INVALID + why if why else DONE_ALREADY
    runs = earlier.get(spec)
    if not runs:
        return NEW_SPEC
    code = run_code(spec)
    changes: list[list[str]] = []
    for run_dir in runs:
        try:
            recorded = (read_json(run_dir / "meta.json").get("code") or {}).get("files")
        except (OSError, ValueError, AttributeError):
            recorded = None
        if not isinstance(recorded, dict):
            continue
        changes.append(code.changed(recorded))
    if not changes:
        return BEFORE_CODE_RECORDS
    fewest = min(changes, key=len)  # against the nearest earlier run
    named = ", ".join(fewest[:NAMED_FILES])
    more = f" and {len(fewest) - NAMED_FILES} more" if len(fewest) > NAMED_FILES else ""
    return f"its code changed since it was measured: {named}{more}"


def plan_reasons(specs: list[RunSpec], store: ExperimentStore,
                 earlier: Mapping[RunSpec, list[Path]], force: bool = False,
                 redo_late: bool = False,
                 invalid: Callable[[RunSpec], str] | None = None) -> list[PlannedRun]:
    return [PlannedRun(s, why_it_runs(s, store, earlier, force, redo_late, invalid))
            for s in specs]


def invalid_finder(invalid_reason: Callable[[RunRecord], str],
                   store: ExperimentStore) -> Callable[[RunSpec], str]:
    """Why the finished run of a spec is no result, by an experiment's `invalid_reason`
    ("" when it is one, or when it is not finished here or cannot be read): the reason
    figures and claims leave it out with, and `--redo-invalid` runs it again for. A busy
    machine (too little CPU idle, late end hosts) makes runs invalid that a quieter pass
    measures."""
    def why(spec: RunSpec) -> str:
        run_dir = store.run_dir(spec)
        try:
            record = RunRecord(spec, read_json(run_dir / "metrics.json"),
                               read_json(run_dir / "meta.json"), run_dir)
        except (OSError, ValueError):
            return ""
        return invalid_reason(record)
    return why


def describe(name: str, planned: list[PlannedRun]) -> list[str]:
    """The dry run's lines for one experiment: the counts, then each run that would run."""
    todo = [p for p in planned if p.would_run]
    lines = [f"{name}: {len(planned)} runs planned, {len(planned) - len(todo)} done, "
             f"{len(todo)} would run"]
    for reason, count in Counter(p.reason for p in todo).most_common():
        lines.append(f"  {count} x {reason}")
    lines += [f"    {p.spec.label()}: {p.reason}" for p in todo]
    return lines
