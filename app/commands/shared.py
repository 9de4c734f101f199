"""What several commands need from the parsed command line: the trace set, root, the
number of runs side by side, figures refreshed from the artifacts."""
from __future__ import annotations

import argparse
import os
from typing import Any

from core.errors import Unavailable
from core.paths import ProjectPaths
from core.traces import TraceSet


def traces_of(args: argparse.Namespace, paths: ProjectPaths) -> TraceSet:
    return TraceSet.for_project(paths.root, extra_dir=args.traces_dir)


def require_root() -> None:
    if os.geteuid() != 0:
        raise Unavailable("this command needs root (network namespaces, raw sockets, BPF): "
                          "run it with sudo")


def jobs_of(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """--jobs, else this machine's default; the plan says where the number comes from."""
    from core.jobs import default_jobs
    if args.jobs is not None:
        print(f"jobs: {args.jobs} runs side by side (--jobs)", flush=True)
        return int(args.jobs)
    default = default_jobs(paths.state_dir)
    print(f"jobs: {default.jobs} runs side by side ({default.source})", flush=True)
    return default.jobs


def refresh_figures_input(store: Any, exp: Any) -> bool:
    """Shared runs linked in, stale metrics recomputed from the logs, before the figures;
    False if some run's metrics could not be computed."""
    from app.refresh import refresh
    done = refresh(store, exp)
    for line in done.lines(exp.name):
        print(line, flush=True)
    return not done.failed
