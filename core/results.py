"""The on-disk store of runs: results/<experiment>/runs/<run>/ with DONE written last.

A run is written into a temporary folder named after its owner's PID, renamed into
place, and marked DONE last. A folder without DONE is half-written and is moved
aside and redone. A failed run keeps its artifacts under failed/ with its reason.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from core.runspec import RunSpec

DONE = "DONE"
FAILED = "FAILED.json"
SPEC = "spec.json"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class ExperimentStore:
    root: Path  # results/<experiment>

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def failed_dir(self) -> Path:
        return self.root / "failed"

    def run_dir(self, spec: RunSpec) -> Path:
        return self.runs_dir / spec.dirname()

    def is_done(self, spec: RunSpec) -> bool:
        return (self.run_dir(spec) / DONE).is_file()

    def was_late(self, spec: RunSpec) -> bool:
        """Finished, but its emulator was late (metrics.json says lateness_ok: false)."""
        try:
            return read_json(self.run_dir(spec) / "metrics.json").get("lateness_ok") is False
        except (OSError, ValueError):
            return False

    def adopt(self, run_dir: Path) -> Path:
        """A copy of another experiment's finished run (the same spec: the run id leaves the
        experiment out), so each experiment's store holds every run of its figure."""
        dest = self.runs_dir / run_dir.name
        if not (dest / DONE).is_file():
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.runs_dir / f".adopt-{run_dir.name}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(run_dir, tmp)
            shutil.rmtree(dest, ignore_errors=True)
            tmp.replace(dest)
        return dest

    def new_temp_dir(self, spec: RunSpec) -> Path:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.runs_dir / f".tmp-{spec.dirname()}-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        write_json(tmp / SPEC, spec.to_dict())
        return tmp

    def commit(self, tmp: Path, spec: RunSpec) -> Path:
        """Rename a finished temp folder into place, then mark it DONE."""
        final = self.run_dir(spec)
        if final.exists():
            self._move_aside(final, "superseded")
        os.replace(tmp, final)
        (final / DONE).write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
        return final

    def fail(self, tmp: Path, spec: RunSpec, reason: str, details: str = "") -> Path:
        write_json(tmp / FAILED, {"reason": reason, "details": details, "time": time.time()})
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        dest = self.failed_dir / f"{spec.dirname()}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        os.replace(tmp, dest)
        return dest

    def recover(self) -> list[Path]:
        """Move half-written runs (no DONE, or a temp folder of a dead process) to failed/."""
        moved: list[Path] = []
        if not self.runs_dir.is_dir():
            return moved
        for entry in self.runs_dir.iterdir():
            if entry.name.startswith(".tmp-"):
                owner = entry.name.rsplit("-", 1)[-1]
                if owner.isdigit() and pid_alive(int(owner)):
                    continue
                moved.append(self._move_aside(entry, "interrupted"))
            elif entry.is_dir() and not (entry / DONE).exists():
                moved.append(self._move_aside(entry, "half-written"))
        return moved

    def _move_aside(self, path: Path, why: str) -> Path:
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        if not (path / FAILED).exists():
            write_json(path / FAILED, {"reason": f"{why}: found without a DONE marker",
                                       "details": "", "time": time.time()})
        dest = self.failed_dir / f"{path.name.lstrip('.')}-{why}-{int(time.time())}"
        os.replace(path, dest)
        return dest

    def done_runs(self) -> Iterator[Path]:
        if self.runs_dir.is_dir():
            for entry in sorted(self.runs_dir.iterdir()):
                if (entry / DONE).is_file():
                    yield entry

    def failures(self) -> Iterator[Path]:
        if self.failed_dir.is_dir():
            for entry in sorted(self.failed_dir.iterdir()):
                if (entry / FAILED).is_file():
                    yield entry


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp + rename) so a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())
