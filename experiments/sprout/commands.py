"""The Sprout paper's own `repro` command: `./repro outage-study`, where a run's delay comes
from through a trace's outages (experiments/sprout/outage_study.py)."""
from __future__ import annotations

import argparse
from typing import Any

from app.commands.shared import traces_of
from core.paths import ProjectPaths
from experiments.sprout import outage_study

NAME = "outage-study"


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(NAME, help="where a trace-path run's delay comes from, through "
                            "the trace's outages (Sprout Figure 7's study)",
                            description=outage_study.__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    outage_study.add_arguments(parser)


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    return outage_study.run(args, traces_of(args, paths))
