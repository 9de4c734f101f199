"""Execute one RunSpec: network up, emulator and scheme, artifacts, metrics, DONE.

A run either ends in runs/<run>/ with DONE, or in failed/<run>-<time>/ with
FAILED.json naming the reason; its partial artifacts are kept either way.
"""
from __future__ import annotations

import logging
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.run_metrics import compute_run_metrics
from app.planning import link_side, planned_duration_s
from core.active_runs import ActiveRun
from core.cpu_steal import StealMeter
from core.environment import environment
from core.paths import ProjectPaths
from core.results import ExperimentStore, read_json, write_json
from core.runspec import RunSpec
from core.traces import TraceSet
from schemes.base import Endpoints, StillRunning
from schemes.registry import make_scheme
from topologies.trace_path import RECEIVER_IP, TracePath, new_prefix

log = logging.getLogger(__name__)

# The link serves nothing after the span (the run's duration, or the trace with --once), so
# every scheme is measured over the same span. A sender still running this long after it (TCP
# waiting for data stuck in its own queue, say) is stopped: the measurement is over.
SPAN_SETTLE_S = 1.0
POLL_S = 0.5
SENDER_EXITED = "exited by itself"
SENDER_STOPPED = "stopped at the end of the span"


@dataclass(frozen=True)
class RunOutcome:
    spec: RunSpec
    ok: bool
    path: Path
    reason: str = ""
    metrics: dict[str, Any] | None = None


def execute(spec: RunSpec, store: ExperimentStore, paths: ProjectPaths,
            traces: TraceSet) -> RunOutcome:
    tmp = store.new_temp_dir(spec)
    meta: dict[str, Any] = {"spec": spec.to_dict(), "run_id": spec.run_id(),
                            "environment": environment(), "started": time.time()}
    try:
        steal = StealMeter()
        _measure(spec, tmp, paths, traces, meta)
        meta["cpu_steal_pct"] = steal.percent()
        metrics = compute_run_metrics(tmp, spec, meta)
        write_json(tmp / "metrics.json", metrics)
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        return RunOutcome(spec, True, store.commit(tmp, spec), metrics=metrics)
    except KeyboardInterrupt:
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        store.fail(tmp, spec, "interrupted by the user (Ctrl-C)")
        raise
    except Exception as e:  # the run fails; the matrix goes on
        reason = f"{type(e).__name__}: {e}"
        log.error("run %s failed: %s", spec.label(), reason)
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        dest = store.fail(tmp, spec, reason, traceback.format_exc())
        return RunOutcome(spec, False, dest, reason=reason)


def _measure(spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
             meta: dict[str, Any]) -> None:
    data = link_side(spec.data_trace, traces)
    ack = link_side(spec.ack_trace, traces)
    duration_s = planned_duration_s(spec, traces)
    meta["traces"] = {"data": data.describe(), "ack": ack.describe()}
    meta["duration_s"] = duration_s
    scheme = make_scheme(spec, paths)
    meta["scheme"] = scheme.describe()
    emulator = paths.native_binary("link", "netrepro-link")
    with ExitStack() as stack:
        meta["provider"] = scheme.prepare(stack)
        active = ActiveRun(paths.state_dir / "active", new_prefix())
        stack.callback(active.close)
        meta["prefix"] = active.prefix
        path = stack.enter_context(TracePath(
            data=data, ack=ack, emulator=emulator,
            log_dir=out, delay_ms=spec.delay_ms, queue=spec.queue, once=spec.once,
            span_ms=None if spec.once else round(duration_s * 1000), active=active))
        assert path.link is not None
        ends = Endpoints(path.sender, path.receiver, RECEIVER_IP, out, active.add,
                         run_tag=active.prefix)
        stack.callback(scheme.stop)
        scheme.start_receiver(ends)
        path.link.start()
        span_end = time.monotonic() + duration_s
        scheme.start_sender(ends, duration_s)
        meta["sender_end"] = SENDER_EXITED
        while True:
            try:
                scheme.wait_sender(POLL_S)
                break
            except StillRunning:
                path.link.check_alive()
                if time.monotonic() > span_end + SPAN_SETTLE_S:
                    scheme.stop_sender()
                    meta["sender_end"] = SENDER_STOPPED
                    break
        # Emulator first: everything it put on the wire has then reached the receiver,
        # so the receiver's count can be checked against the emulator's.
        path.link.check_alive()
        path.link.stop_emulator()
        scheme.stop()
        meta["verification"] = scheme.verify(ends)
    stats = out / "link-stats.json"
    meta["link"] = read_json(stats) if stats.exists() else None
