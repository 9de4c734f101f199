"""A submission's sources shipped with each of its trials, built on the worker that runs it.

The client compiles nothing: each trial's task carries the two source files and
their sha256 (Sources.sha256; the run id holds its first 16 hex digits, the
digest). The worker checks the hash and the API generation, then builds the
sources with the build a local submit uses (schemes.submission.build: in a box of
its own, with limits) into its own var/contest-builds/<digest>/, where the
scheme `submission` of its run process finds the binary. One build per hash and
version of the trial's code (core/code_identity.py: the code a submission's run
executes) on a worker: trials arriving side by side wait on a lock and reuse the
binary (build.json beside it records the full hash and the code version it was
built from). A compile error fails the trial with the compiler's message;
nothing else is tried in its place.
"""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from core.code_identity import run_code
from core.file_lock import exclusive_lock
from core.paths import ProjectPaths
from core.results import read_json, write_json
from core.runspec import RunSpec
from schemes.base import SchemeUnavailable
from schemes.submission.api import SubmissionRefused
from schemes.submission.build import BuildResult, binary_path, build, builds_dir
from schemes.submission.sources import Sources

BUILD_RECORD = "build.json"
MESSAGE_CHARS = 4000  # of the compiler's output, in a failed trial's reason

Builder = Callable[[Sources, int, ProjectPaths], BuildResult]


@dataclass(frozen=True)
class ShippedSubmission:
    """What a trial's task carries: the two files as submitted, and their sha256."""
    header: bytes
    body: bytes
    sha256: str

    @classmethod
    def of(cls, sources: Sources) -> "ShippedSubmission":
        return cls(sources.header, sources.body, sources.sha256)

    def sources(self) -> Sources:
        """The two files, checked by the intake as a local submit's are."""
        return Sources.of_bytes({"controller.hh": self.header, "controller.cc": self.body},
                                "the sources shipped with the task")


@dataclass(frozen=True)
class WorkerBuild:
    ok: bool
    reason: str  # one paragraph, when not ok: the compiler's message included
    log: str  # every build command and what it printed (empty when nothing was built)
    facts: dict[str, Any] = field(default_factory=dict)  # for the run's meta.json


def sandbox_build(sources: Sources, api: int, paths: ProjectPaths) -> BuildResult:
    """The local submit's build: in a box of its own, with the build's limits."""
    return build(sources, api, paths)


def compiler_message(log: str) -> str:
    """What the failing step printed: the build log after its last command."""
    lines = log.rstrip().splitlines()
    last = max((i for i, line in enumerate(lines) if line.startswith("$ ")), default=-1)
    text = "\n".join(lines[last + 1:]).strip() or "(nothing)"
    if len(text) > MESSAGE_CHARS:
        text = text[:MESSAGE_CHARS] + f"\n[... {len(text) - MESSAGE_CHARS} more characters]"
    return text


def build_on_worker(shipped: ShippedSubmission, spec: RunSpec, paths: ProjectPaths,
                    builder: Builder | None = None, host: str | None = None) -> WorkerBuild:
    """The submission the trial `spec` runs, built on this machine (or built here before,
    from the same hash and code version), or the reason it is not. `builder`:
    sandbox_build."""
    builder = builder or sandbox_build
    digest = str(spec.param("submission", ""))
    host = host or socket.gethostname()
    facts: dict[str, Any] = {"host": host, "sha256": shipped.sha256, "digest": digest}

    def failed(reason: str, log: str = "", built: str = "failed") -> WorkerBuild:
        return WorkerBuild(False, reason, log, dict(facts, built=built))

    try:
        sources = shipped.sources()
    except SubmissionRefused as e:
        return failed(f"refused on worker {host}: {e}", built="refused")
    if sources.sha256 != shipped.sha256:
        return failed(f"the submission's sources arrived on worker {host} with sha256 "
                      f"{sources.sha256[:16]}..., the client sent {shipped.sha256[:16]}...: "
                      "damaged on the way, not built", built="refused")
    if sources.digest != digest:
        return failed(f"the sources shipped are submission {sources.digest}, the run asks "
                      f"for {digest}: not built", built="refused")
    try:
        api = sources.api()
    except SubmissionRefused as e:
        return failed(f"refused on worker {host}: {e}", built="refused")
    binary = binary_path(paths, digest)
    record_path = binary.parent / BUILD_RECORD
    version = run_code(spec).version
    facts.update(api_generation=api, binary=str(binary), code_version=version)
    # One build of a digest at a time on this machine (worker processes and threads).
    with exclusive_lock(builds_dir(paths) / f".{digest}.lock"):
        record = _read_record(record_path)
        same = record.get("sha256") == shipped.sha256 and record.get("code_version") == version
        if same and record.get("ok", True) and binary.is_file():
            return WorkerBuild(True, "", "", dict(facts, built="reused",
                                                  built_at=record.get("built_at")))
        if same and record.get("ok") is False:
            # A compile error is the sources' own: every trial of them would repeat it.
            return failed(f"{record.get('reason')} (compiled on {record.get('built_at')}; "
                          "the same sources and code are not compiled again)",
                          str(record.get("log", "")), built="failed-before")
        record_path.unlink(missing_ok=True)
        started = time.monotonic()
        try:
            result = builder(sources, api, paths)
        except (SchemeUnavailable, OSError) as e:
            return failed(f"submission {digest} cannot be built on worker {host}: {e}")
        facts["build_s"] = round(time.monotonic() - started, 2)
        built_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        record = {"sha256": shipped.sha256, "digest": digest, "code_version": version,
                  "api_generation": api, "host": host, "built_at": built_at, "ok": result.ok}
        if not result.ok:
            reason = (f"does not compile on worker {host}: {result.reason}; the compiler "
                      f"said: {compiler_message(result.log)}")
            record_path.parent.mkdir(parents=True, exist_ok=True)
            write_json(record_path, dict(record, reason=reason, log=result.log))
            return failed(reason, result.log)
        write_json(record_path, record)
        return WorkerBuild(True, "", result.log, dict(facts, built="here", built_at=built_at))


def _read_record(path: Path) -> dict[str, Any]:
    try:
        record = read_json(path)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
