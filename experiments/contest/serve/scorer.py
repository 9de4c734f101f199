"""The scorer: takes jobs from the state file, one at a time, and scores each exactly as
`./repro contest submit` does, by running that command (the same code path: intake,
build in a box, trials, reuse of finished trials, the leaderboard).

It runs as root (the boxes and Mininet need it). What it reads from the state file
was written by the unprivileged web process, so it trusts none of it: the team name
is checked again, the two files go through the intake's checks (Sources.of_bytes)
into a folder of its own, and the trace, trials and cluster are its own settings.

A restart after a kill: `recover` queues again what was running; the rerun's
`contest submit` reuses every trial that had finished (its run folder is committed
with DONE last), so no trial is scored twice, and the result is written only under
the attempt that produced it (Store.finish).
"""
from __future__ import annotations

import ctypes
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from core.processes import pid_alive, stop_child, stop_pid
from experiments.contest.serve.store import Job, Store
from schemes.submission.api import SubmissionRefused
from schemes.submission.sources import Sources
from schemes.submission.untrusted_text import log_text, reason as shown

log = logging.getLogger(__name__)

TEAM_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
LOG_CHARS = 64 * 1024  # the build log a submission page shows
OUTPUT_LINES = 400  # stdout lines of one submit kept for the log
IDLE_S = 0.5
ORPHAN_GRACE_S = 120.0  # a killed scorer's submit tears its network down in this time
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Outcome:
    state: str  # scored | failed
    result: dict[str, Any] | None
    reason: str
    log: str


class Runner(Protocol):
    def __call__(self, job: Job, folder: Path, progress: Callable[[str], None]) -> Outcome: ...


@dataclass
class SubmitRunner:
    """Runs `repro contest submit` on a job's folder, reading its progress from its output."""

    repro: Path
    trace: str
    trials: int
    cluster: str | None = None
    allow_without_cgroups: bool = False
    child_file: Path | None = None  # where the running submit's pid is kept (for a restart)
    env: dict[str, str] = field(default_factory=dict)

    def command(self, job: Job, folder: Path) -> list[str]:
        cmd = [str(self.repro), "contest", "submit", str(folder), "--name", job.team,
               "--trace", self.trace, "--trials", str(self.trials), "--json"]
        if self.cluster:
            cmd += ["--cluster", self.cluster]
        if self.allow_without_cgroups:
            cmd.append("--allow-without-cgroups")
        return cmd

    def __call__(self, job: Job, folder: Path, progress: Callable[[str], None]) -> Outcome:
        proc = subprocess.Popen(self.command(job, folder), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace",
                                start_new_session=True, preexec_fn=_die_with_parent,
                                env={**os.environ, **self.env})
        if self.child_file is not None:
            self.child_file.write_text(f"{proc.pid}\n")
        lines: list[str] = []
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines = (lines + [line.rstrip("\n")])[-OUTPUT_LINES:]
                step = progress_of(line, self.trials)
                if step:
                    progress(step)
            code = proc.wait()
        finally:
            if proc.poll() is None:
                stop_child(proc, ORPHAN_GRACE_S, group=True)
            if self.child_file is not None:
                self.child_file.unlink(missing_ok=True)
        return outcome_of(code, lines, self.trials)


def progress_of(line: str, trials: int) -> str:
    """What a line of `contest submit` says about where it is, or ""."""
    if line.startswith("submission  "):
        return "building"
    if line.startswith("built ") or line.startswith("build       on the workers"):
        return f"trial 1 of {trials}"
    m = re.match(r"trial (\d+) ", line)
    if m:
        done = int(m.group(1))
        return f"trial {done + 1} of {trials}" if done < trials else "ranking"
    return ""


def outcome_of(code: int, lines: list[str], trials: int) -> Outcome:
    result = None
    if lines:
        try:
            parsed = json.loads(lines[-1])
            result = parsed if isinstance(parsed, dict) else None
        except ValueError:
            result = None
    # The JSON line and the board's line name the machine's folders: the team gets
    # public_result (its rank included) instead.
    kept = [line for line in (lines[:-1] if result is not None else lines)
            if not line.startswith("leaderboard ")]
    text = log_text("\n".join(kept), LOG_CHARS)
    if code == 0 and result is not None and result.get("ok"):
        return Outcome("scored", public_result(result), "", text)
    if result is not None:
        return Outcome("failed", public_result(result), shown(str(result.get("reason", ""))),
                       text)
    tail = shown("; ".join(line for line in lines[-3:] if line.strip()))
    if code == 2:
        return Outcome("failed", None, f"refused: {tail}", text)
    if code == 3:
        return Outcome("failed", None, f"the server could not score it ({tail}): tell the "
                       "teacher", text)
    return Outcome("failed", None, f"contest submit ended with status {code}: {tail}", text)


PUBLIC_KEYS = ("throughput_mbps", "p95_e2e_delay_ms", "p95_signal_delay_ms", "power", "score",
               "utilization", "window_capped", "lateness_ok", "rank", "best_trial", "trace",
               "role", "source_hash", "api_generation")
TRIAL_KEYS = ("trial", "ok", "score", "throughput_mbps", "p95_e2e_delay_ms", "reason",
              "reused", "lateness_ok")


def public_result(result: dict[str, Any]) -> dict[str, Any]:
    """What a team may see of its result: numbers and reasons, no paths of the machine."""
    kept: dict[str, Any] = {k: result.get(k) for k in PUBLIC_KEYS if k in result}
    given = result.get("trials")
    trials = []
    for t in given if isinstance(given, list) else []:
        if isinstance(t, dict):
            trial = {k: t.get(k) for k in TRIAL_KEYS if k in t}
            why = trial.get("reason")
            if isinstance(why, str):
                trial["reason"] = shown(why, 500)
            trials.append(trial)
    kept["trials"] = trials
    if result.get("submission_dir"):
        kept["folder"] = Path(str(result["submission_dir"])).name
    return kept


def _die_with_parent() -> None:
    """In the child: SIGTERM (a clean teardown) when the scorer dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class Scorer:
    """The loop: recover, then take the next job by turns, score it, write it back."""

    def __init__(self, store: Store, runner: Runner, scratch: Path,
                 refresh_boards: Callable[[Store], None] | None = None,
                 child_file: Path | None = None) -> None:
        self.store = store
        self.runner = runner
        self.scratch = scratch
        self.refresh_boards = refresh_boards
        self.child_file = child_file
        self.stopping = False

    def start(self) -> None:
        """After a restart: the previous scorer's submit is waited for (it got SIGTERM when
        its parent died), then what was running goes back to the queue."""
        self.scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.scratch.chmod(0o700)
        self._reap_orphan()
        for job_id, became in self.store.recover(time.time()):
            log.warning("submission %d was running when the scorer stopped: %s again",
                        job_id, became)
            print(f"scorer      submission {job_id} was running when the scorer stopped: "
                  f"{became}", flush=True)
        self._boards()

    def _reap_orphan(self) -> None:
        if self.child_file is None or not self.child_file.is_file():
            return
        try:
            pid = int(self.child_file.read_text().strip())
        except ValueError:
            pid = 0
        if pid > 1 and pid_alive(pid) and _is_submit(pid):
            print(f"scorer      waiting up to {ORPHAN_GRACE_S:.0f} s for the previous "
                  f"scorer's contest submit (pid {pid}) to tear down", flush=True)
            stop_pid(pid, ORPHAN_GRACE_S)
        self.child_file.unlink(missing_ok=True)

    def once(self) -> bool:
        """Score the next job; False when the queue was empty."""
        job = self.store.claim(time.time())
        if job is None:
            return False
        print(f"scorer      submission {job.id} of {job.team}: attempt {job.attempt}",
              flush=True)
        outcome = self._score(job)
        # The boards first: a submission that reads "scored" is already on them.
        self._boards()
        wrote = self.store.finish(job, outcome.state, outcome.result, outcome.reason,
                                  outcome.log, time.time())
        print(f"scorer      submission {job.id} of {job.team}: {outcome.state}"
              f"{'' if wrote else ' (already written: kept as it was)'}"
              f"{': ' + outcome.reason if outcome.reason else ''}", flush=True)
        return True

    def _boards(self) -> None:
        """Draw the boards; a drawing that fails is said, and scoring goes on (the board
        stays as it was drawn last)."""
        if self.refresh_boards is None:
            return
        try:
            self.refresh_boards(self.store)
        except Exception as e:
            log.exception("boards not drawn")
            print(f"scorer      boards not drawn: {shown(str(e), 500)}", file=sys.stderr,
                  flush=True)

    def _score(self, job: Job) -> Outcome:
        if not TEAM_RE.fullmatch(job.team):
            return Outcome("failed", None, "team name refused by the scorer", "")
        try:
            sources = Sources.of_bytes({"controller.hh": job.header, "controller.cc": job.body},
                                       f"submission {job.id}")
        except SubmissionRefused as e:
            return Outcome("failed", None, shown(str(e)), "")
        if sources.sha256 != job.sha256:
            return Outcome("failed", None, "the stored sources do not match their hash", "")
        folder = Path(tempfile.mkdtemp(prefix=f"job-{job.id}-", dir=self.scratch))
        try:
            sources.write(folder)
            return self.runner(job, folder, lambda text: self._progress(job, text))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _progress(self, job: Job, text: str) -> None:
        self.store.progress(job, text)

    def run(self, deadline: float | None = None) -> None:
        """Until stopped (or `deadline`, a monotonic time, for tests)."""
        self.start()
        while not self.stopping and (deadline is None or time.monotonic() < deadline):
            if not self.once():
                time.sleep(IDLE_S)


def _is_submit(pid: int) -> bool:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"contest" in words and b"submit" in words
