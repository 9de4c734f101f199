"""A short fixed-window matrix run through `--cluster local:2`, for the cluster fault tests.

Usage: cluster_matrix.py TRACE SECONDS RUNS  (results go to $NETREPRO_RESULTS/itest-cluster)
Two workers, one run each at a time. Prints one JSON line with what the runner did.
"""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from app.cli import _interrupt_once  # noqa: E402
from app.cluster.backend import open_cluster  # noqa: E402
from app.runner import MatrixRunner  # noqa: E402
from core.paths import ProjectPaths  # noqa: E402
from core.runspec import RunSpec, make_params  # noqa: E402
from core.traces import TraceSet  # noqa: E402
from experiments.base import Experiment  # noqa: E402


class ClusterTiny(Experiment):
    name = "itest-cluster"
    title = "short fixed-window runs on two local workers"

    def __init__(self, trace: str, seconds: float, runs: int) -> None:
        self.trace, self.seconds, self.runs = trace, seconds, runs

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        return [RunSpec(experiment=self.name, scheme="fixed-window", data_trace=self.trace,
                        ack_trace=self.trace, delay_ms=20, duration_s=self.seconds,
                        params=make_params(window=2 + w)) for w in range(self.runs)]

    def make_figures(self, store, out_dir):
        return []


if __name__ == "__main__":
    signal.signal(signal.SIGINT, _interrupt_once)
    exp = ClusterTiny(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))
    paths, traces = ProjectPaths(), TraceSet.for_project()
    backend = open_cluster("local:2", paths, traces, jobs=2)
    try:
        result = MatrixRunner(paths, traces, jobs=backend.slots, backend=backend).run(
            exp, exp.matrix(quick=True))
        summary = backend.summary()
    finally:
        for line in backend.close():
            print(line, flush=True)
    print(json.dumps({"succeeded": len(result.succeeded), "failed": len(result.failed),
                      "reasons": [r for _, r in result.failed], "skipped": result.skipped,
                      "interrupted": result.interrupted, **summary}))
