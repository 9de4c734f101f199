"""The `repro verify` and `repro pack` subcommands: their arguments and what they run."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.paths import ProjectPaths
from core.traces import TraceSet


def add_verify_parser(sub: Any) -> None:
    verify = sub.add_parser(
        "verify", help="re-derive every metric and claim from the raw artifacts (exit 0 "
                       "holds, 1 a claim or number failed, 2 could not check)")
    verify.add_argument("experiment", nargs="*",
                        help="experiments to verify (default: every one)")
    verify.add_argument("--results", help="the results folder (default: results/)")
    verify.add_argument("--bundle", help="verify a bundle written by `repro pack` instead")
    verify.add_argument("--keep", metavar="DIR",
                        help="--bundle: unpack into DIR and keep it (default: a temporary "
                             "folder, removed afterwards)")
    verify.add_argument("--json", action="store_true", help="print one JSON object")


def add_pack_parser(sub: Any) -> None:
    pack = sub.add_parser("pack", help="one compressed archive of the results, with a "
                                       "manifest, for `repro verify --bundle` elsewhere")
    pack.add_argument("experiment", nargs="*",
                      help="experiments to pack (default: every one with results)")
    pack.add_argument("--out", help="the archive (default: results/netrepro-bundle-<time>.tar.xz)")


def _experiments(names: list[str], traces: TraceSet) -> list[Any]:
    from experiments.registry import all_experiments, get_experiment
    return [get_experiment(n, traces) for n in names] if names else all_experiments(traces)


def run_verify(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet) -> int:
    from app.verify import emit, verify_results
    experiments = _experiments(args.experiment, traces)  # an unknown name fails first
    if args.bundle:
        from app.pack import verify_bundle
        report = verify_bundle(Path(args.bundle), experiments if args.experiment else None,
                               paths, keep=Path(args.keep) if args.keep else None)
        return emit(report, args.json, sys.stdout)
    results = Path(args.results) if args.results else paths.results_dir
    if not results.is_dir():
        print(f"error: no results folder at {results}", file=sys.stderr)
        return 2
    return emit(verify_results(experiments, results, traces), args.json, sys.stdout)


def run_pack(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet) -> int:
    from app.pack import pack
    experiments = _experiments(args.experiment, traces)
    out = pack(paths, experiments, traces, Path(args.out) if args.out else None,
               explicit=bool(args.experiment))
    return 0 if out is not None else 2
