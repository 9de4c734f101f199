"""`repro bench`: benchmarks that print their figures, ratios against a baseline measured in
the same run (bench/; docs/benchmarks.md)."""
from __future__ import annotations

import argparse
import importlib
from typing import Any

from app.commands.shared import require_root, traces_of
from core.paths import ProjectPaths
from core.settings import Setting, for_argparse

NAME = "bench"
BENCHMARKS = ("link", "cc", "concurrency", "cluster")
SECONDS = Setting("seconds", float, "a shorter or longer measurement", minimum=0.1,
                  maximum=3600, unit="seconds")
MAX_JOBS = Setting("max_jobs", int, "concurrency: the highest level to try (levels 2..N)",
                   minimum=2, maximum=256)


def _levels(text: str) -> list[int]:
    try:
        levels = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected levels like 8,10,12: {text}") from None
    if not levels or levels[0] < 2:
        raise argparse.ArgumentTypeError(f"levels are 2 or more runs side by side: {text}")
    return levels


def add_parser(sub: Any) -> None:
    bench = sub.add_parser(NAME, help="benchmarks that print their figures (JSON last line)")
    bench.add_argument("what", choices=BENCHMARKS)
    bench.add_argument("--seconds", type=SECONDS.argtype(), default=None,
                       help=for_argparse(SECONDS.help))
    bench.add_argument("--data-path", choices=("rings", "mmsg"), default=None,
                       help="link: the emulator's receive path (native/link/README.md; default: "
                            "its own, mmsg; rings: the PACKET_MMAP ring)")
    bench.add_argument("--variant", help="cc: the TCP variant to compare (e.g. vegas)")
    bench.add_argument("--max-jobs", type=MAX_JOBS.argtype(), default=None,
                       help=for_argparse(MAX_JOBS.help))
    bench.add_argument("--levels", type=_levels, default=None,
                       help="concurrency: only these levels, e.g. 8,10,12 (those below the "
                            "lowest are taken to hold: contention only grows with the level)")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    require_root()
    module = importlib.import_module(f"bench.{args.what}")
    return int(module.main(paths, traces_of(args, paths), args))
