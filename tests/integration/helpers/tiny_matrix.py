"""A three-run matrix driven through the real runner, for the interrupt/resume test.

Usage: tiny_matrix.py TRACE  (results go to $NETREPRO_RESULTS/itest-tiny)
Prints one JSON line with what the runner did.
"""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from app.cli import _interrupt_once  # noqa: E402
from core.paths import ProjectPaths  # noqa: E402
from app.runner import MatrixRunner  # noqa: E402
from core.runspec import RunSpec, make_params  # noqa: E402
from core.traces import TraceSet  # noqa: E402
from experiments.base import Experiment  # noqa: E402


class Tiny(Experiment):
    name = "itest-tiny"
    title = "three short fixed-window runs"

    def __init__(self, trace: str) -> None:
        self.trace = trace

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return [RunSpec(experiment=self.name, scheme="fixed-window", data_trace=self.trace,
                        ack_trace=self.trace, delay_ms=20, duration_s=4.0,
                        params=make_params(window=w)) for w in (2, 4, 8)]

    def make_figures(self, store, out_dir):
        return []


if __name__ == "__main__":
    signal.signal(signal.SIGINT, _interrupt_once)
    exp = Tiny(sys.argv[1])
    result = MatrixRunner(ProjectPaths(), TraceSet.for_project(), jobs=1).run(
        exp, exp.matrix(quick=True))
    print(json.dumps({"succeeded": len(result.succeeded), "failed": len(result.failed),
                      "skipped": result.skipped, "interrupted": result.interrupted}))
