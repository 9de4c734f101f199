"""`repro pack`: one compressed archive of the results with a manifest of hashes, for
`repro verify --bundle` on another machine."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.commands.shared import traces_of
from app.commands.verify import named_experiments
from core.errors import EXIT_OK, EXIT_USAGE
from core.paths import ProjectPaths

NAME = "pack"


def add_parser(sub: Any) -> None:
    pack = sub.add_parser(NAME, help="one compressed archive of the results, with a "
                                     "manifest, for `repro verify --bundle` elsewhere")
    pack.add_argument("experiment", nargs="*",
                      help="experiments to pack (default: every one with results)")
    pack.add_argument("--out", help="the archive (default: results/netrepro-bundle-<time>.tar.xz)")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.publish.pack import pack
    traces = traces_of(args, paths)
    experiments = named_experiments(args.experiment, traces)
    out = pack(paths, experiments, traces, Path(args.out) if args.out else None,
               explicit=bool(args.experiment))
    return EXIT_OK if out is not None else EXIT_USAGE
