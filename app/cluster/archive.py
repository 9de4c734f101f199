"""A run's folder as an archive with a hash: packed where it ran, committed at home once.

A worker packs the folder its run built (DONE left out: only the home store marks
a run done); the client checks the hash, unpacks into a temporary folder of its
own pool, checks that the folder is the run it asked for, adds which worker ran
it to meta.json, and commits it with the store's own rename-then-DONE. A run
whose id was already committed during this session (the same run arriving a
second time) is not committed again: it is counted as a duplicate.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from core.file_lock import exclusive_lock
from core.results import DONE, ExperimentStore, experiment_store, read_json, write_json
from core.runspec import RunSpec

LOCK_NAME = ".commit.lock"


class ArchiveError(RuntimeError):
    """An archive that is not the whole, expected run: refused, nothing committed."""


@dataclass(frozen=True)
class RunArchive:
    data: bytes  # a gzip'd tar of the folder's files, paths relative to it, DONE left out
    sha256: str

    def verify(self) -> None:
        actual = hashlib.sha256(self.data).hexdigest()
        if actual != self.sha256:
            raise ArchiveError(f"the archive's hash is {actual[:16]}..., the worker said "
                               f"{self.sha256[:16]}...: damaged on the way, not committed")


def pack(folder: Path) -> RunArchive:
    """Every regular file and folder under `folder`, except DONE."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if rel.as_posix() == DONE or path.is_symlink():
                continue
            if path.is_file() or path.is_dir():
                tar.add(path, arcname=rel.as_posix(), recursive=False)
    data = buffer.getvalue()
    return RunArchive(data, hashlib.sha256(data).hexdigest())


def unpack(archive: RunArchive, dest: Path) -> None:
    """Verify the hash, then extract regular files and folders only, inside `dest`."""
    archive.verify()
    with tarfile.open(fileobj=io.BytesIO(archive.data), mode="r:gz") as tar:
        members = tar.getmembers()
        for m in members:
            name = PurePosixPath(m.name)
            if name.is_absolute() or ".." in name.parts or not (m.isfile() or m.isdir()):
                raise ArchiveError(f"the archive holds {m.name!r}, which is not a plain file "
                                   "or folder inside the run: refused")
            if name.as_posix() == DONE:
                raise ArchiveError("the archive holds a DONE marker: only home marks runs done")
        for m in members:
            target = dest / m.name
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(m)
            assert source is not None
            with source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
            os.utime(target, (m.mtime, m.mtime))


@dataclass
class Committer:
    """Commits arriving runs into a results folder: once per run id in this session."""
    results_dir: Path
    started: float = field(default_factory=time.time)
    committed: dict[str, Path] = field(default_factory=dict)  # run id -> its folder
    duplicates: list[str] = field(default_factory=list)  # labels of runs that came again
    # Stores of their own (a paper's command may keep its runs outside the shared pool:
    # submitted code's trials); any other experiment's is its pool-sharing store.
    stores: dict[str, ExperimentStore] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def store(self, experiment: str) -> ExperimentStore:
        return self.stores.get(experiment) or experiment_store(self.results_dir, experiment)

    def commit_run(self, experiment: str, spec: RunSpec, archive: RunArchive,
                   worker: dict[str, Any]) -> tuple[Path, bool]:
        """(the run's folder as the experiment sees it, True if it was a duplicate).

        Raises ArchiveError when the archive is damaged or is not this run."""
        store = self.store(experiment)
        run_id = spec.run_id()
        with self._lock, exclusive_lock(_pool_lock_path(store)):
            if run_id in self.committed or self._committed_by_another(store, spec):
                self.duplicates.append(spec.label())
                return (store.link(spec) if (store.home(spec) / DONE).is_file()
                        else store.run_dir(spec)), True
            tmp = store.new_temp_dir(spec)
            try:
                unpack(archive, tmp)
                _check_is_run(tmp, spec)
                meta = read_json(tmp / "meta.json")
                meta["worker"] = dict(worker, archive_sha256=archive.sha256,
                                      archive_bytes=len(archive.data))
                write_json(tmp / "meta.json", meta)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            path = store.commit(tmp, spec)
            self.committed[run_id] = path
            return path, False

    def _committed_by_another(self, store: ExperimentStore, spec: RunSpec) -> bool:
        """Marked DONE after this session started (by another client of the same results)."""
        done = store.home(spec) / DONE
        try:
            return done.stat().st_mtime >= self.started
        except FileNotFoundError:
            return False

    def commit_failure(self, experiment: str, spec: RunSpec, archive: RunArchive,
                       worker: dict[str, Any], reason: str) -> Path:
        """A failed run's artifacts into the experiment's failed/, as a local failure is."""
        store = self.store(experiment)
        store.failed_dir.mkdir(parents=True, exist_ok=True)
        host = str(worker.get("host", "worker")).replace("/", "_")
        dest = store.failed_dir / (f"{spec.dirname()}-{time.strftime('%Y%m%d-%H%M%S')}-"
                                   f"{host}-{os.getpid()}")
        tmp = dest.with_name("." + dest.name)
        unpack(archive, tmp)
        failed = tmp / "FAILED.json"
        record = read_json(failed) if failed.is_file() else {"reason": reason, "details": ""}
        record["worker"] = worker
        write_json(failed, record)
        os.replace(tmp, dest)
        return dest


def _check_is_run(folder: Path, spec: RunSpec) -> None:
    for name in ("spec.json", "meta.json"):
        if not (folder / name).is_file():
            raise ArchiveError(f"the archive lacks {name}: not a whole run")
    theirs = RunSpec.from_dict(read_json(folder / "spec.json"))
    meta = read_json(folder / "meta.json")
    if theirs != spec or meta.get("run_id") != spec.run_id():
        raise ArchiveError(f"the archive holds run {meta.get('run_id')} "
                           f"({theirs.label()}), not {spec.run_id()} ({spec.label()})")


def _pool_lock_path(store: ExperimentStore) -> Path:
    """The lock held while checking and committing one run, so two clients committing the
    same run into one results folder commit it once."""
    return (store.pool or store.runs_dir) / LOCK_NAME


def files_of(folder: Path) -> Iterator[str]:
    """The relative paths of a folder's files (for comparisons in tests and the bench)."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path.relative_to(folder).as_posix()
