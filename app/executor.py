"""Execute one RunSpec: its measurement (by its kind: runkinds/), then metrics, then DONE.

A run either ends in runs/<run>/ with DONE, or in failed/<run>-<time>/ with
FAILED.json naming the reason; its partial artifacts are kept either way. A run
whose measurement finished is committed even when its analysis raises: the
error is recorded in meta.json (`analysis_error`), metrics.json is left out, and
`./repro report` computes it again from the artifacts.
"""
from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from analysis.tcp_window_check import check_tcp_windows
from core.code_identity import run_code
from core.cpu_probe import CpuProbe, CpuProbeFailed
from core.cpu_steal import StealMeter
from core.environment import environment
from core.errors import RunInvalid
from core.paths import ProjectPaths
from core.results import ExperimentStore, write_json
from core.runspec import RunSpec
from core.traces import TraceSet
from runkinds.metrics import stamped_metrics
from runkinds.registry import analysis_version_of, kind_of, measure_network

log = logging.getLogger(__name__)

# (spec, the run's folder, paths, traces, meta to fill): measures and leaves artifacts.
Measure = Callable[[RunSpec, Path, ProjectPaths, TraceSet, dict[str, Any]], None]


@dataclass(frozen=True)
class RunOutcome:
    spec: RunSpec
    ok: bool
    path: Path
    reason: str = ""
    metrics: dict[str, Any] | None = None


def execute(spec: RunSpec, store: ExperimentStore, paths: ProjectPaths,
            traces: TraceSet, measure: Measure | None = None) -> RunOutcome:
    """Run `spec` into `store`; `measure` defaults to the real network of its kind."""
    # The CPU probe goes beside a real network's measurement, not beside a stand-in's.
    probe_cpus = measure is None
    if measure is None:
        measure = measure_network
    tmp = store.new_temp_dir(spec)
    # The code the run executes, file by file: what its id hashes, and what `--dry-run`
    # names when a later edit makes it a new run.
    meta: dict[str, Any] = {"spec": spec.to_dict(), "run_id": spec.run_id(),
                            "code": run_code(spec).to_dict(),
                            "environment": environment(), "started": time.time()}
    try:
        steal = StealMeter()
        # The CPUs' own availability, beside the run (core/cpu_probe.py): a late run can then
        # be told apart from a machine that was not there.
        probe = (CpuProbe(paths.native_binary("probe", "netrepro-cpu-probe"), tmp).start()
                 if probe_cpus else None)
        try:
            measure(spec, tmp, paths, traces, meta)
        finally:
            try:
                if probe is not None:
                    probe.stop()
            except CpuProbeFailed as e:  # the measurement stands; its record says what broke
                meta["cpu_probe_error"] = str(e)
        meta["cpu_steal_pct"] = steal.percent()
        meta["cpu_idle_pct"] = steal.idle_percent()
        metrics, reason = _metrics(tmp, spec, meta)
        judge(spec, metrics, meta, reason)
        meta["wall_time_s"] = time.time() - meta["started"]
        write_json(tmp / "meta.json", meta)
        return RunOutcome(spec, True, store.commit(tmp, spec), reason=reason, metrics=metrics)
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


def judge(spec: RunSpec, metrics: dict[str, Any] | None, meta: dict[str, Any],
          why_no_metrics: str = "") -> None:
    """RunInvalid when a run that finished measured something else than its spec asks, read
    from the verdicts its metrics carry (the artifacts are parsed once): its kind's own (a
    switched-path run whose drops were not the plan), then a TCP flow whose kernel window
    was absurd and so ran no congestion control. A kind judged by its metrics fails a run
    whose metrics could not be derived."""
    kind = kind_of(spec)
    if metrics is None:
        if kind.judged_by_metrics:
            raise RunInvalid("its metrics, which say whether it measured what it should, "
                             f"could not be derived: {why_no_metrics}")
        return
    why = kind.invalid(metrics, meta)
    if why:
        raise RunInvalid(why)
    check_tcp_windows(metrics)


def _metrics(run_dir: Path, spec: RunSpec,
             meta: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(metrics, "") written to metrics.json; or (None, why) when the analysis raised, with
    the error in meta: the measurement is kept, and `./repro report` computes them again."""
    try:
        metrics = stamped_metrics(run_dir, spec, meta)
        write_json(run_dir / "metrics.json", metrics)
        return metrics, ""
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
        log.error("run %s: its metrics failed (kept, `./repro report` retries): %s",
                  spec.label(), error)
        meta["analysis_error"] = {"error": error, "details": traceback.format_exc(),
                                  "analysis_version": analysis_version_of(spec)}
        return None, f"measured, but its metrics failed ({error}); `./repro report` retries"
