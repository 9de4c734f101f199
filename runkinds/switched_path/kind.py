"""The switched path: one TCP transfer of N bytes through Open vSwitch under an OpenFlow
controller that drops chosen original segments, then a fixed-rate bottleneck.

A run's options name its drop pattern, transfer size, recovery, controller, bottleneck rate
and round trip (OPTIONS; optionally the sender's loss-detection sysctls and a receiver
window cap: OPTIONAL). kind.py plans a run (no Mininet), network.py builds the path,
measure.py measures it, and transfer_run.py reads its artifacts into metrics (the drop
verdict among them: a run whose drops were not exactly the plan is invalid).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core.checks import Check
from core.paths import ProjectPaths
from core.run_kind import RunKind
from core.runspec import RunSpec
from core.traces import TraceSet
from runkinds.switched_path.options import RUN_EXPECTED_S, switched_path_options
from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics

log = logging.getLogger(__name__)

# What a cluster worker offers this kind's runs (docs/cluster.md): a running Open vSwitch,
# and each OpenFlow controller that can start there.
OPENFLOW = "openflow-switch"
CONTROLLER = "controller:"  # + pox / os-ken


class SwitchedPathKind(RunKind):
    name = "openflow-switch"
    measure_module = "runkinds.switched_path.measure"
    metrics_module = "runkinds.switched_path.transfer_run"

    def check(self, spec: RunSpec, traces: TraceSet) -> None:
        switched_path_options(spec)

    def planned_seconds(self, spec: RunSpec, traces: TraceSet) -> float:
        return RUN_EXPECTED_S

    def worker_needs(self, spec: RunSpec,
                     traces: TraceSet) -> tuple[dict[str, float], dict[str, str]]:
        needs: dict[str, float] = {OPENFLOW: 1}
        # Decided before planning (pox or os-ken); `auto` only when this client has neither,
        # and then the worker decides, and its meta.json says which served.
        controller = spec.option("controller")
        if controller in ("pox", "os-ken"):
            needs[CONTROLLER + str(controller)] = 1
        return needs, {}

    judged_by_metrics = True

    def invalid(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str | None:
        """A run where the controller dropped something else than the plan (or nothing) is no
        measurement of the plan."""
        problems = list((meta.get("controller") or {}).get("plan_problems") or [])
        if metrics.get("drops_as_planned") and not problems:
            return None
        reasons = [] if metrics.get("drops_as_planned") else [str(metrics.get("drop_verdict"))]
        return "drops not as planned: " + "; ".join(
            reasons + [f"controller: {p}" for p in problems])

    def worker_offers(self, paths: ProjectPaths) -> list[str]:
        """A running Open vSwitch, and each OpenFlow controller that can start here (a run
        names the one it was planned with)."""
        from controllers import pox_install
        from controllers.launcher import osken_available
        from runkinds.switched_path.network import OvsUnavailable, check_ovs
        tokens = []
        try:
            check_ovs()
            tokens.append(OPENFLOW)
        except OvsUnavailable as e:
            log.info("no switched-path runs here: %s", e)
        if pox_install.installed() is not None:
            tokens.append(CONTROLLER + "pox")
        if osken_available() is None:
            tokens.append(CONTROLLER + "os-ken")
        return tokens

    def explain_need(self, resource: str) -> str | None:
        if resource == OPENFLOW:
            return ("Open vSwitch running (the switched path's switch: ./setup/install.sh and "
                    "./setup/start-ovs.sh there, then restart its `repro worker`)")
        if resource.startswith(CONTROLLER):
            return (f"the OpenFlow controller {resource[len(CONTROLLER):]} (./setup/install.sh "
                    "there; or plan the run with the other one: --controller)")
        return None

    def doctor_checks(self, paths: ProjectPaths) -> list[Check]:
        from runkinds.switched_path import doctor
        return doctor.checks(paths)

    def measure(self, spec: RunSpec, out: Path, paths: ProjectPaths, traces: TraceSet,
                meta: dict[str, Any]) -> None:
        # Open vSwitch, Mininet and the controllers are needed only here.
        from runkinds.switched_path.measure import measure
        measure(spec, out, paths, traces, meta)

    def metrics(self, run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
        return transfer_metrics(load_transfer_run(run_dir, meta), meta)
