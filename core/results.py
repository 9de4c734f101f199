"""The on-disk store of runs, with DONE written last.

A run's folder lives in the shared pool results/runs/<run>/, and each experiment
that asked for it holds a link to it in results/<experiment>/runs/<run>: a run id
leaves out the asking experiment, so identical runs asked for by two experiments
are run once and read by both. A store without a pool (`repro one --out DIR`)
keeps its runs in DIR/runs/ itself; folders from before the pool (real folders
in results/<experiment>/runs/) are read as they are.

A run is written into a temporary folder named after its owner's PID, renamed into
place, and marked DONE last. A folder without DONE is half-written and is moved
aside and redone. A failed run keeps its artifacts under the experiment's failed/
with its reason. A finished run replaced by a rerun of the same spec (`--force`) is no
failure: it is kept under the experiment's superseded/.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from core.processes import pid_alive
from core.runspec import RunSpec

DONE = "DONE"
FAILED = "FAILED.json"
SPEC = "spec.json"
# Why a finished run was moved aside when a rerun of its spec took its place.
SUPERSEDED = "superseded"
# results/<SHARED_RUNS>/: the pool of runs every experiment's runs/ links into.
SHARED_RUNS = "runs"


@dataclass(frozen=True)
class ExperimentStore:
    root: Path  # results/<experiment>
    pool: Path | None = None  # results/runs, where run folders live; None: in root/runs

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def failed_dir(self) -> Path:
        return self.root / "failed"

    @property
    def superseded_dir(self) -> Path:
        """Finished runs a rerun of their spec replaced (`--force`): kept, never failures."""
        return self.root / SUPERSEDED

    def run_dir(self, spec: RunSpec) -> Path:
        """The run as this experiment sees it (a link into the pool, or the folder itself)."""
        return self.runs_dir / spec.dirname()

    def home(self, spec: RunSpec) -> Path:
        """Where the run's folder really is."""
        return (self.pool or self.runs_dir) / spec.dirname()

    def is_done(self, spec: RunSpec) -> bool:
        return (self.run_dir(spec) / DONE).is_file()

    def done_elsewhere(self, spec: RunSpec) -> bool:
        """Finished in the pool (for another experiment), not yet linked here."""
        return not self.is_done(spec) and (self.home(spec) / DONE).is_file()

    def link(self, spec: RunSpec) -> Path:
        """Let this experiment see the pool's finished run (replacing a link to an older one)."""
        target = self.home(spec)
        mine = self.run_dir(spec)
        if mine == target:
            return mine
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        if mine.is_symlink():
            mine.unlink()
        elif mine.exists():
            self._move_aside(mine, SUPERSEDED)
        tmp = mine.with_name(f".link-{mine.name}-{os.getpid()}")
        if tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(os.path.relpath(target, self.runs_dir))
        os.replace(tmp, mine)
        return mine

    def was_late(self, spec: RunSpec) -> bool:
        """Finished, but its emulator was late (metrics.json says lateness_ok: false)."""
        try:
            return read_json(self.run_dir(spec) / "metrics.json").get("lateness_ok") is False
        except (OSError, ValueError):
            return False

    def new_temp_dir(self, spec: RunSpec) -> Path:
        parent = self.pool or self.runs_dir
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f".tmp-{spec.dirname()}-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        write_json(tmp / SPEC, spec.to_dict())
        return tmp

    def commit(self, tmp: Path, spec: RunSpec) -> Path:
        """Rename a finished temp folder into place, mark it DONE, link it here."""
        final = self.home(spec)
        if final.exists():
            self._move_aside(final, SUPERSEDED)
        os.replace(tmp, final)
        (final / DONE).write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
        return self.link(spec)

    def fail(self, tmp: Path, spec: RunSpec, reason: str, details: str = "") -> Path:
        write_json(tmp / FAILED, {"reason": reason, "details": details, "time": time.time()})
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        dest = self.failed_dir / f"{spec.dirname()}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        os.replace(tmp, dest)
        return dest

    def recover(self) -> list[Path]:
        """Move half-written runs (no DONE, or a temp folder of a dead process) to failed/;
        drop links whose run is gone from the pool."""
        moved: list[Path] = []
        for folder in dict.fromkeys(p for p in (self.pool, self.runs_dir) if p is not None):
            if not folder.is_dir():
                continue
            for entry in folder.iterdir():
                if entry.name.startswith((".tmp-", ".link-")):
                    owner = entry.name.rsplit("-", 1)[-1]
                    if owner.isdigit() and pid_alive(int(owner)):
                        continue
                    if entry.is_symlink():
                        entry.unlink()
                    else:
                        moved.append(self._move_aside(entry, "interrupted"))
                elif entry.is_symlink():
                    if not entry.exists():
                        entry.unlink()  # its run was superseded or moved aside
                elif entry.is_dir() and not (entry / DONE).exists():
                    moved.append(self._move_aside(entry, "half-written"))
        return moved

    def _move_aside(self, path: Path, why: str) -> Path:
        """A finished run (DONE) goes to superseded/ as it is; anything else to failed/, with
        why it was found unfinished."""
        finished = (path / DONE).is_file()
        folder = self.superseded_dir if finished else self.failed_dir
        folder.mkdir(parents=True, exist_ok=True)
        if not finished and not (path / FAILED).exists():
            write_json(path / FAILED, {"reason": f"{why}: found without a DONE marker",
                                       "details": "", "time": time.time()})
        dest = folder / f"{path.name.lstrip('.')}-{why}-{int(time.time())}"
        os.replace(path, dest)
        return dest

    def done_runs(self) -> Iterator[Path]:
        if self.runs_dir.is_dir():
            for entry in sorted(self.runs_dir.iterdir()):
                if (entry / DONE).is_file():
                    yield entry

    def failures(self) -> Iterator[Path]:
        """Failed attempts. A finished run that an earlier version of this store moved into
        failed/ when a rerun replaced it (it has DONE) is not one: superseded() lists it."""
        if self.failed_dir.is_dir():
            for entry in sorted(self.failed_dir.iterdir()):
                if (entry / FAILED).is_file() and not (entry / DONE).is_file():
                    yield entry

    def superseded(self) -> Iterator[Path]:
        """Finished runs that a rerun of their spec replaced, oldest layout included."""
        for folder in (self.superseded_dir, self.failed_dir):
            if folder.is_dir():
                for entry in sorted(folder.iterdir()):
                    if entry.is_dir() and (entry / DONE).is_file():
                        yield entry


def experiment_store(results_dir: Path, experiment: str) -> ExperimentStore:
    """An experiment's store in a results folder, sharing that folder's pool of runs."""
    if experiment == SHARED_RUNS:
        raise ValueError(f"{SHARED_RUNS!r} is the pool of shared runs, not an experiment name")
    return ExperimentStore(results_dir / experiment, pool=results_dir / SHARED_RUNS)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp + rename) so a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())
