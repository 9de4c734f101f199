"""The shared bottleneck: N long TCP flows, one per sender, into one switch port.

kind.py plans a run (no Mininet), network.py builds it (N senders, a Linux bridge, the
bridge's port towards the receiver through netrepro-link), measure.py measures it, and
metrics.py reads its per-packet queue log and the flows' records. A run takes the whole
pool (`slots`): at 100 Mbit/s the emulator logs every packet and up to 40 iperf3 pairs run
beside it, which side by side with a pool's worth of other runs on two cores would move its
queue.

Options (RunSpec.options): topology (this kind's name), flows (N), rtt_ms (the emulated
round trip: data direction rtt_ms // 2 after the queue, the ACKs the rest; the spec's
delay_ms must be rtt_ms // 2), marking (emulator or red; with red the spec's queue,
ecn:k=K,packets=N, sets RED's threshold and buffer, and the emulator's own queue is
droptail:packets=N), warmup_s (left out of the scored window), and optionally k (the
queue's marking threshold again, so the run's label names it; checked against the queue).
The spec's traces are `rate:<Mbit/s>` both ways; its duration is each flow's.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core.errors import UsageError
from core.paths import ProjectPaths
from core.run_kind import WHOLE_POOL, RunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from runkinds.shared_bottleneck.metrics import shared_bottleneck_metrics
from runkinds.shared_bottleneck.options import (NAME, SETUP_PER_FLOW_S, SETUP_PER_HOST_S,
                                                bottleneck_options, layout, serve_margin_s)
from schemes.registry import scheme_needs

log = logging.getLogger(__name__)


class SharedBottleneckKind(RunKind):
    name = NAME
    measure_module = "runkinds.shared_bottleneck.measure"
    metrics_module = "runkinds.shared_bottleneck.metrics"

    def check(self, spec: RunSpec, traces: TraceSet) -> None:
        bottleneck_options(spec)
        from schemes.registry import TCP_VARIANTS, check_params
        if spec.scheme not in TCP_VARIANTS:
            raise UsageError(f"{NAME}: the flows are TCP ({', '.join(TCP_VARIANTS)}), not "
                             f"{spec.scheme!r}")
        check_params(spec)

    def planned_seconds(self, spec: RunSpec, traces: TraceSet) -> float:
        flows = int(spec.option("flows", 1))
        hosts = layout(dict(spec.options, flows=flows, rtt_ms=spec.option("rtt_ms", 0))).hosts
        spread = float(spec.option("start_spread_s", 0.0) or 0.0) + \
            float(spec.option("start_interval_s", 0.0) or 0.0) * (flows - 1)
        return float(spec.duration_s or 0) + serve_margin_s(flows, spread) + \
            SETUP_PER_HOST_S * hosts + SETUP_PER_FLOW_S * flows

    def worker_needs(self, spec: RunSpec,
                     traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
        return dict(scheme_needs(spec)), {}

    def slots(self, spec: RunSpec) -> int:
        return WHOLE_POOL

    def measure(self, spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                meta: dict[str, Any]) -> None:
        # Mininet, the kernel's facilities and the endpoints are needed only here.
        from runkinds.shared_bottleneck.measure import measure
        measure(spec, out, paths, traces, meta)

    def metrics(self, run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
        return shared_bottleneck_metrics(run_dir, spec, meta)

    def missing_artifacts(self, run_dir: Path) -> str | None:
        return None if (run_dir / "data-queue.log").is_file() else "data-queue.log is missing"
