"""`repro report`: every experiment's figures and results/index.html, from the artifacts
alone (stale metrics recomputed from the logs first; nothing is rerun)."""
from __future__ import annotations

import argparse
from typing import Any

from app.commands.shared import refresh_figures_input, traces_of
from core.errors import EXIT_FAILED, EXIT_OK
from core.paths import ProjectPaths, display

NAME = "report"


def add_parser(sub: Any) -> None:
    sub.add_parser(NAME, help="regenerate figures and results/index.html from artifacts")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.publish.report import write_report
    from app.recorded_options import RecordError, as_recorded
    from core.results import experiment_store
    from experiments.registry import all_experiments
    experiments = all_experiments(traces_of(args, paths))
    status = EXIT_OK
    for exp in experiments:
        store = experiment_store(paths.results_dir, exp.name)
        try:  # the plan its runs were made for, not this machine's choices
            exp = as_recorded(exp, store.root) if store.root.is_dir() else exp
        except RecordError as e:
            print(f"{exp.name}: figures not redrawn, the plan is unknown: {e}", flush=True)
            continue
        if not refresh_figures_input(store, exp):
            status = EXIT_FAILED  # some run's metrics could not be computed (listed above)
        for f in exp.make_figures(store, store.root):
            print(f"wrote {display(f)}")
    print(f"wrote {display(write_report(paths, experiments))}")
    return status
