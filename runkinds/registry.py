"""Every run kind, by the name a run's `topology` option gives: the only place it is read.

It also says which code each run executes (core/code_identity.py: what its id hashes), and
installs that when imported, so any run id asked for afterwards hashes the right code.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from core import code_identity
from core.code_identity import CodeIdentity, CodeRoots
from core.paths import ProjectPaths
from core.run_kind import TOPOLOGY_OPTION, RunKind, UnknownRunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from runkinds.shared_bottleneck.kind import SharedBottleneckKind
from runkinds.switched_path.kind import SwitchedPathKind
from runkinds.trace_path.kind import TracePathKind

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


# ------------------------------------------------------------------ the code a run executes

def code_roots(spec: RunSpec) -> CodeRoots:
    """Where the code of `spec`'s run starts: its kind says (its measurement, its scheme)."""
    return kind_of(spec).code_roots(spec)


def metrics_roots(kind: RunKind) -> CodeRoots:
    """Where the code of a kind's metrics starts: its metrics module, and what every run's
    metrics get beside (runkinds/metrics.py)."""
    return CodeRoots((kind.metrics_module, "runkinds.metrics"),
                     stop_at=("runkinds.registry",))


def analysis_version_of(spec: RunSpec) -> str:
    """The version of the code that derives `spec`'s metrics, stamped into metrics.json."""
    return code_identity.identity(metrics_roots(kind_of(spec))).version


@functools.lru_cache(maxsize=1)
def measurement_version() -> str:
    """Every kind's measurement code at once: what a cluster worker must share with its
    client (a run's own version, a part of it, is checked again when it arrives)."""
    return _union(code_identity.identity(kind.code_roots(None)) for kind in KINDS.values())


@functools.lru_cache(maxsize=1)
def analysis_version() -> str:
    """Every kind's metrics code at once, for the record of a whole pass (verify, pack)."""
    return _union(code_identity.identity(metrics_roots(kind)) for kind in KINDS.values())


def explain_need(resource: str) -> str | None:
    """What a worker lacking `resource` lacks and the fix, as the kind or scheme family that
    needs it says (None: nobody's)."""
    from schemes.registry import explain_need as scheme_explains
    for kind in KINDS.values():
        text = kind.explain_need(resource)
        if text:
            return text
    return scheme_explains(resource)


def native_programs() -> list[tuple[str, str]]:
    """(component, program) of every native program some kind of run starts."""
    components: set[str] = set()
    for kind in KINDS.values():
        components.update(code_identity.identity(kind.code_roots(None)).native)
    return [(c, name) for c in sorted(components) for name in code_identity.native_executables(c)]


def _union(identities: Any) -> str:
    files: dict[str, str] = {}
    for ident in identities:
        files.update(ident.files)
    return CodeIdentity(files).version


code_identity.install(code_roots)
