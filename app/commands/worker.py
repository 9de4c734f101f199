"""`repro worker`: serve runs to a Dask scheduler (docs/cluster.md)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from app.commands.shared import jobs_of, require_root, traces_of
from app.validation import JOBS
from core.paths import ProjectPaths

NAME = "worker"


def add_parser(sub: Any) -> None:
    worker = sub.add_parser(NAME, help="serve runs to a Dask scheduler (docs/cluster.md)")
    worker.add_argument("--scheduler", required=True, help="tcp://HOST:8786 or tls://HOST:8786")
    worker.add_argument("--jobs", type=JOBS.argtype(), default=None,
                        help="runs side by side (default: this machine's measured level)")
    worker.add_argument("--listen", default=None,
                        help="the address to listen on (default: the one facing the scheduler)")
    worker.add_argument("--name", default=None, help="the worker's name (default: its address)")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.cluster.worker import serve_worker
    require_root()
    if args.traces_dir:  # the runs' child processes look there too
        os.environ["NETREPRO_TRACES"] = str(Path(args.traces_dir).resolve())
    return serve_worker(args.scheduler, paths, traces_of(args, paths), jobs_of(args, paths),
                        listen=args.listen, name=args.name)
