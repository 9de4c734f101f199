"""`repro compare A B`: does one pass agree with another? Two results folders or bundles,
claim by claim and metric by metric, with where their machines differ (exit 0 they agree,
1 they differ, 2 they could not be compared)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.verify import named_experiments
from core.paths import ProjectPaths, display

NAME = "compare"


def add_parser(sub: Any) -> None:
    compare = sub.add_parser(
        NAME, help="two passes side by side, results folders or bundles: claims, metrics "
                   "beyond run-to-run noise, machines (exit 0 agree, 1 differ, 2 could not "
                   "compare)")
    compare.add_argument("a", help="a results folder or a bundle from `repro pack`")
    compare.add_argument("b", help="another")
    compare.add_argument("experiment", nargs="*",
                         help="experiments to compare (default: every one on either side)")
    compare.add_argument("--json", action="store_true", help="print one JSON object")
    compare.add_argument("--metrics", action="store_true",
                         help="print every metric of every cell, not only those that moved")
    compare.add_argument("--html", metavar="FILE",
                         help="write the page here (default: compare.html in the results "
                              "folder, beside the report)")
    compare.add_argument("--no-html", action="store_true", help="write no page")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.publish.compare import EXIT_UNCOMPARABLE, CompareError, compare_paths, emit
    from app.publish.compare_page import write_page
    from core.traces import TraceSet
    # An unknown name is refused first, in one line (exit 2).
    experiments = named_experiments(args.experiment, TraceSet.for_project(paths.root))
    try:
        comparison = compare_paths(Path(args.a), Path(args.b), experiments, paths)
    except CompareError as e:
        print(f"cannot compare: {e}", file=sys.stderr)
        return EXIT_UNCOMPARABLE
    code = emit(comparison, args.json, sys.stdout, every_metric=args.metrics)
    if not args.no_html:
        page = write_page(comparison, Path(args.html) if args.html else
                          paths.results_dir / "compare.html")
        print(f"wrote {display(page)}", file=sys.stderr if args.json else sys.stdout)
    return code
