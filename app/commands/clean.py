"""`repro clean`: remove leftovers of our own killed runs, and nothing else."""
from __future__ import annotations

import argparse
from typing import Any

from app.commands.shared import require_root
from core.active_runs import clean_leftovers
from core.errors import EXIT_OK
from core.paths import ProjectPaths

NAME = "clean"


def add_parser(sub: Any) -> None:
    sub.add_parser(NAME, help="remove leftovers of our own killed runs (never anything else)")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    require_root()
    for line in clean_ours(paths):
        print(line)
    return EXIT_OK


def clean_ours(paths: ProjectPaths) -> list[str]:
    report = clean_leftovers(paths.state_dir / "active")
    from kernel.congestion_control import CongestionControlResolver
    for state in (paths.cc_state_dir, paths.legacy_cc_state_dir):
        resolver = CongestionControlResolver.for_project(paths, state_dir=state)
        report += [f"congestion control: {line}" for line in resolver.cleanup_stale()]
    from kernel.tcp_probe_recorder import TcpProbeSetup
    report += [f"tcp_probe: {line}"
               for line in TcpProbeSetup(paths.state_dir / "tcp-probe").cleanup_stale()]
    from schemes.submission.box import clean_unheld
    report += clean_unheld()
    return report or ["nothing of ours was left over"]
