"""Commands the suite runs itself, not a user: one run of a matrix in a child process
(`_execute`), the traces the experiments need (`_required-traces`, for setup), and the
generated tables of docs/ARCHITECTURE.md rewritten (`_docs`, for whoever adds a paper or a
kind: a unit test says when they are stale)."""
from __future__ import annotations

import argparse
import json
from typing import Any

from app.commands.shared import traces_of
from core.errors import EXIT_FAILED, EXIT_OK
from core.paths import ProjectPaths
from core.runspec import RunSpec

EXECUTE, REQUIRED_TRACES, DOCS = "_execute", "_required-traces", "_docs"


def add_parsers(sub: Any) -> None:
    sub.add_parser(REQUIRED_TRACES)
    sub.add_parser(DOCS)
    ex = sub.add_parser(EXECUTE)
    ex.add_argument("--experiment", required=True)
    ex.add_argument("--spec-json", required=True)


def execute(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """One run of a matrix, in a child process of `repro run`."""
    from app.executor import execute as execute_run
    from core.results import experiment_store
    spec = RunSpec.from_dict(json.loads(args.spec_json))
    store = experiment_store(paths.results_dir, args.experiment)
    outcome = execute_run(spec, store, paths, traces_of(args, paths))
    print(json.dumps({"ok": outcome.ok, "reason": outcome.reason, "path": str(outcome.path),
                      "lateness_ok": (outcome.metrics or {}).get("lateness_ok")}))
    return EXIT_OK if outcome.ok else EXIT_FAILED


def docs(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """Rewrite docs/ARCHITECTURE.md's generated tables (papers, kinds) from the code."""
    from app.architecture import write
    print(f"wrote {write(paths.root)}")
    return EXIT_OK


def required_traces(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """The trace names the experiments need, one per line."""
    from app.commands.doctor import required_traces as needed
    for name in sorted(needed(traces_of(args, paths))):
        print(name)
    return EXIT_OK
