"""The trace path: sender -- the trace-driven link emulator -- receiver.

One host sends through netrepro-link to another: each direction a cellular trace (looping,
or with `trace_play=once` played once) or a fixed rate, a fixed delay, the run's queue. The
span a run plays is core/run_span.py's; the measurement is measure.py's, the network
network.py's, the metrics metrics.py's. Planning needs none of them: this module loads
without Mininet.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.code_identity import EVERY_RUN_NATIVE, CodeRoots
from core.errors import UsageError
from core.paths import ProjectPaths
from core.run_kind import ALONE_OPTION, WHOLE_POOL, RunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from core.worker_resources import file_sha256, trace_resource
from kernel import socket_samples
from runkinds.trace_path.metrics import trace_path_metrics
from runkinds.trace_path.span import span_of
from schemes.registry import SCHEME_REGISTRY, scheme_module, scheme_needs
from topologies.link_conditions import link_conditions, parse_rate_steps
from topologies.link_side import FIXED_RATE_PREFIX, link_side

# The pool's default level (core/jobs.py) was measured with cellular traces of a few Mbit/s.
# A fixed rate above this takes the whole pool: eight 100 Mbit/s runs side by side on the
# 2-core VM left 0.2% of the CPU idle and 24-44% of their backlogged departures within 10%
# of schedule (docs/bbr.md, "Which runs count").
ALONE_ABOVE_MBPS = 20.0


def fixed_rate_peak_mbps(spec: RunSpec) -> float | None:
    """The highest fixed rate of either direction, its rate steps' included; None when
    both directions play traces."""
    rates = []
    for trace in (spec.data_trace, spec.ack_trace):
        if trace.startswith(FIXED_RATE_PREFIX):
            try:
                rates.append(float(trace[len(FIXED_RATE_PREFIX):]))
            except ValueError:  # check() refuses it
                continue
    steps = spec.option("rate_steps")
    if steps and rates:
        try:
            rates += [rate for _, rate in parse_rate_steps(str(steps))]
        except ValueError:  # check() refuses it
            pass
    return max(rates) if rates else None


class TracePathKind(RunKind):
    name = "trace-path"
    measure_module = "runkinds.trace_path.measure"
    metrics_module = "runkinds.trace_path.metrics"

    def check(self, spec: RunSpec, traces: TraceSet) -> None:
        link_side(spec.data_trace, traces)
        link_side(spec.ack_trace, traces)
        link_conditions(spec, span_of(spec, traces).span_ms)
        if spec.option(socket_samples.OPTION) is not None:
            try:
                socket_samples.check_interval(spec.option(socket_samples.OPTION))
            except ValueError as e:
                raise UsageError(str(e)) from None

    def planned_seconds(self, spec: RunSpec, traces: TraceSet) -> float:
        return span_of(spec, traces).span_ms / 1000.0

    def slots(self, spec: RunSpec) -> int:
        if spec.option(ALONE_OPTION):
            return WHOLE_POOL
        peak = fixed_rate_peak_mbps(spec)
        return WHOLE_POOL if peak is not None and peak > ALONE_ABOVE_MBPS else 1

    def code_roots(self, spec: RunSpec | None) -> CodeRoots:
        # The scheme comes from the scheme registry, which imports every family: the run's
        # own family is hashed, not the others.
        if spec is None:
            return super().code_roots(spec)
        return CodeRoots((self.measure_module, scheme_module(spec.scheme)),
                         stop_at=(SCHEME_REGISTRY,), native=EVERY_RUN_NATIVE)

    def worker_needs(self, spec: RunSpec,
                     traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
        needs: dict[str, float] = dict(scheme_needs(spec))
        files: dict[str, str] = {}
        for trace in (spec.data_trace, spec.ack_trace):
            if trace.startswith(FIXED_RATE_PREFIX):
                continue
            entry = traces.manifest.get(trace)
            if entry is not None:
                needs[trace_resource(trace, entry.git_blob_sha1)] = 1
            else:  # a path, or a name found in a trace directory: the worker checks its hash
                files[trace] = file_sha256(traces.resolve(trace))
        return needs, files

    def measure(self, spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                meta: dict[str, Any]) -> None:
        # Mininet is needed only here: planning and the analysis load without it.
        from runkinds.trace_path.measure import measure
        measure(spec, out, paths, traces, meta)

    def metrics(self, run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
        return trace_path_metrics(run_dir, spec, meta)

    def missing_artifacts(self, run_dir: Path) -> str | None:
        return None if (run_dir / "data.log").is_file() else "data.log is missing"
