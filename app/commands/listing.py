"""`repro list`: the experiments with their options, the schemes, the traces."""
from __future__ import annotations

import argparse
from typing import Any

from app.commands.shared import traces_of
from core.errors import EXIT_OK
from core.paths import ProjectPaths

NAME = "list"


def add_parser(sub: Any) -> None:
    sub.add_parser(NAME, help="list experiments, schemes and traces")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from experiments.registry import all_experiments
    from schemes.registry import known_schemes
    traces = traces_of(args, paths)
    print("experiments:")
    for exp in all_experiments(traces):
        full = exp.matrix(quick=False)
        quick = exp.matrix(quick=True)
        print(f"  {exp.name:22s} {exp.title}")
        print(f"  {'':22s} {len(full)} runs in full mode; --quick: {len(quick)} runs "
              f"({exp.quick_note})")
        for option in exp.options:
            print(f"  {'':22s} option {option.describe()}")
    print("schemes:")
    for info in known_schemes():
        print(f"  {info.name:22s} [{info.family}] {info.description}")
        if info.flags:
            print(f"  {'':22s} takes {', '.join(info.flags)} (see `repro one --help`)")
    print("traces:")
    for name in traces.known_traces():
        print(f"  {name}")
    return EXIT_OK
