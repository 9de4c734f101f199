"""`repro verify`: every metric and paper claim re-derived from the raw artifacts, of the
results folder or of a bundle written by `repro pack` (exit 0: the reproduction holds)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.shared import traces_of
from core.errors import EXIT_USAGE
from core.paths import ProjectPaths
from core.traces import TraceSet

NAME = "verify"


def add_parser(sub: Any) -> None:
    verify = sub.add_parser(
        NAME, help="re-derive every metric and claim from the raw artifacts (exit 0 "
                   "holds, 1 a claim or number failed, 2 could not check)")
    verify.add_argument("experiment", nargs="*",
                        help="experiments to verify (default: every one)")
    verify.add_argument("--results", help="the results folder (default: results/)")
    verify.add_argument("--bundle", help="verify a bundle written by `repro pack` instead")
    verify.add_argument("--keep", metavar="DIR",
                        help="--bundle: unpack into DIR and keep it (default: a temporary "
                             "folder, removed afterwards)")
    verify.add_argument("--json", action="store_true", help="print one JSON object")


def named_experiments(names: list[str], traces: TraceSet) -> list[Any]:
    """The experiments named (an unknown name is refused), else every one."""
    from experiments.registry import all_experiments, get_experiment
    return [get_experiment(n, traces) for n in names] if names else all_experiments(traces)


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.publish.verify import emit, verify_results
    traces = traces_of(args, paths)
    experiments = named_experiments(args.experiment, traces)  # an unknown name fails first
    if args.bundle:
        from app.publish.pack import verify_bundle
        report = verify_bundle(Path(args.bundle), experiments if args.experiment else None,
                               paths, keep=Path(args.keep) if args.keep else None)
        return emit(report, args.json, sys.stdout)
    results = Path(args.results) if args.results else paths.results_dir
    if not results.is_dir():
        print(f"error: no results folder at {results}", file=sys.stderr)
        return EXIT_USAGE
    return emit(verify_results(experiments, results, traces), args.json, sys.stdout)
