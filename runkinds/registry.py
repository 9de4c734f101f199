"""Every run kind, by the name a run's `topology` option gives: the only place it is read."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.paths import ProjectPaths
from core.run_kind import TOPOLOGY_OPTION, RunKind, UnknownRunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from runkinds.shared_bottleneck import SharedBottleneckKind
from runkinds.switched_path import SwitchedPathKind
from runkinds.trace_path import TracePathKind

TRACE_PATH = TracePathKind()
SWITCHED_PATH = SwitchedPathKind()
SHARED_BOTTLENECK = SharedBottleneckKind()
KINDS: dict[str, RunKind] = {kind.name: kind
                             for kind in (TRACE_PATH, SWITCHED_PATH, SHARED_BOTTLENECK)}


def kind_of(spec: RunSpec) -> RunKind:
    """The run's kind of network: the trace path when its options name none."""
    name = str(spec.option(TOPOLOGY_OPTION, TRACE_PATH.name))
    try:
        return KINDS[name]
    except KeyError:
        raise UnknownRunKind(f"unknown topology {name!r} in the run's options; known: "
                             + ", ".join(KINDS)) from None


def measure_network(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                    meta: dict[str, Any]) -> None:
    """Measure `spec` on its kind's network (the executor's default measurement)."""
    kind = kind_of(spec)
    meta["topology_kind"] = kind.name
    kind.measure(spec, out, paths, traces, meta)
