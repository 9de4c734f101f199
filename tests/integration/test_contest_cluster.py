"""`repro contest submit --cluster local:2`: the sources built on the workers, not here.

The same 10-second cut of Verizon-LTE-short as tests/integration/test_contest_submit.py.
Each trial's task carries the sources and their sha256; a worker process builds them
(as the sandbox user) into var/contest-builds/<digest>/ and runs the trial; the
trials come home and are ranked as local ones are. A compile error on a worker fails
the trials with the compiler's message.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.paths import ProjectPaths
from schemes.submission.sources import Sources
from tests.integration.test_contest_submit import (TODAY, TRACE, last_json, submit,  # noqa: F401
                                                   tiny_traces, variant)

pytest.importorskip("distributed")

CLUSTER = ("--cluster", "local:2")


def test_a_submission_is_built_and_run_on_the_workers_and_ranked(
        tiny_traces: Path, tmp_path: Path) -> None:  # noqa: F811
    results = tmp_path / "results"
    sources = Sources.collect([TODAY])
    done = submit(TODAY, results, tiny_traces, "--name", "remote", "--trials", "2", *CLUSTER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "built       " not in done.stdout  # nothing was compiled by the client
    result = last_json(done.stdout)
    assert isinstance(result["score"], float) and result["rank"] is not None
    assert len(result["trials"]) == 2 and all(t["ok"] for t in result["trials"])
    builds = []
    for trial in result["trials"]:
        run = results / "contest" / trial["run"]
        assert (run / "DONE").is_file() and not run.is_symlink()
        worker = json.loads((run / "meta.json").read_text())["worker"]
        assert trial["worker"] == worker["host"]
        build = worker["build"]
        assert build["sha256"] == sources.sha256 and build["host"] == worker["host"]
        assert build["built"] in ("here", "reused") and build["api_generation"] == 3
        builds.append(build["built"])
    assert "here" in builds  # at least one trial was built by its worker
    record = json.loads((ProjectPaths().state_dir / "contest-builds" / sources.digest
                         / "build.json").read_text())
    assert record["sha256"] == sources.sha256
    rows = (results / "contest" / f"leaderboard-{TRACE}.csv").read_text().splitlines()
    row = next(r for r in rows if ",remote," in r)
    assert ",scored," in row and sources.digest in row


def test_a_compile_error_on_a_worker_fails_the_trials_with_the_compilers_message(
        tiny_traces: Path, tmp_path: Path) -> None:  # noqa: F811
    results = tmp_path / "results"
    folder = variant(tmp_path, "typo-remote", {"return window_;": "return window_ +;"})
    done = submit(folder, results, tiny_traces, "--name", "typo-remote", "--trials", "2",
                  *CLUSTER)
    assert done.returncode == 1, done.stdout + done.stderr
    result = last_json(done.stdout)
    assert result["ok"] is False and "score" not in result
    assert "does not compile on worker" in result["reason"]
    assert "controller.cc:" in result["reason"] and "error:" in result["reason"]
    assert all("compile controller.cc failed" in t["reason"] for t in result["trials"])
    submission = Path(result["submission_dir"])
    assert "error:" in (submission / "build.log").read_text()
    assert not (results / "contest" / "runs").exists()
    board = (results / "contest" / f"leaderboard-{TRACE}.csv").read_text()
    assert ",failed," in next(r for r in board.splitlines() if ",typo-remote," in r)
