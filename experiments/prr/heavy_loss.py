"""PRR under heavy loss: what decides rate halving's collapse and PRR's speed-up here.

prr-fig2's heavy pattern (original segments 1-4 and 6-8 of IW10 dropped), 32 KB, Cubic,
10 Mbit/s, 40 ms, under rate halving and the kernel's PRR, once per *variant*: each changes
one thing this kernel still lets a run change, in the sender's namespace (loss detection)
or at the receiver (its window). Beside every variant, the transfer model
(experiments/prr/transfer_model.py) predicts the same transfer as this kernel runs it.
docs/prr-fig2.md ("Heavy loss: what decides the collapse") reads the result.

Outputs: summary.csv (one row per run), variants.csv (per variant and recovery: the medians,
the trials' values, how recovery began, the model's prediction), variants.{png,svg} and
model-vs-measured.{png,svg} (experiments/prr/heavy_loss_plot.py), and model-patterns.csv
(the model alone on all three of prr-fig2's patterns, Linux 3's sender and this kernel's,
with each receiver).
"""
from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from analysis.coverage import Coverage
from analysis.summary import write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.prr.claims import HEAVY_LOSS_CLAIMS
from experiments.prr.fig2 import (DEFAULT_BOTTLENECK_MBPS, DEFAULT_RTT_MS, OPTIONS as FIG2_OPTIONS,
                                  resolve_controller)
from experiments.prr.heavy_loss_plot import plot_model_vs_measured, plot_variants
from experiments.prr.fig2_predictions import MODEL_RECOVERY
from experiments.prr.recovery_model import Recovery
from experiments.prr.transfer_model import (PathModel, Transfer, TransferResult, linux_3,
                                            simulate_transfer, this_kernel)
from runkinds.registry import SWITCHED_PATH

log = logging.getLogger(__name__)

PATTERN = "heavy"
DROPS = frozenset({1, 2, 3, 4, 6, 7, 8})  # controllers/drop_plan.py's heavy pattern
SIZE = 32 * 1024
CC = "cubic"
RECOVERIES = ("rate-halving", "prr-kernel")
# Trials per variant and recovery: the full matrix has at least this many (transfer times
# move by tens of ms from run to run on a shared machine), the quick one --trials (1).
FULL_TRIALS = 5
# The quick pass: the default, the receiver held at 10 segments (the collapse) and
# recovery started at the first SACK (when recovery starts).
QUICK_VARIANTS = ("default", "reordering-1", "rwnd-10")


@dataclass(frozen=True)
class Variant:
    name: str
    label: str
    sysctls: str = ""  # the run option: sender settings beyond the path's own
    rwnd: int | None = None  # the run option: the receiver's window clamp, segments
    # The model's sender for this variant (this kernel's, changed as the variant changes it):
    # settings the model does not contain leave it as the default's.
    model: tuple[tuple[str, Any], ...] = ()

    def options(self) -> dict[str, Any]:
        # The variant's name too: it keeps these runs apart from prr-fig2's identical default
        # ones, whose trials would otherwise be counted in that experiment's plan.
        return {"variant": self.name, "sysctls": self.sysctls or None, "rwnd": self.rwnd}


VARIANTS: tuple[Variant, ...] = (
    Variant("default", "this kernel's receiver, tcp_recovery=1, tcp_reordering=3, TLP off "
            "(prr-fig2's today-receiver variant)"),
    Variant("recovery-0", "tcp_recovery=0 (bit 0x1, RACK, no longer turns it off)",
            sysctls="tcp_recovery=0"),
    Variant("static-reo", "tcp_recovery=3 (0x2: a static reordering window)",
            sysctls="tcp_recovery=3"),
    Variant("no-dupthresh", "tcp_recovery=5 (0x4: no DUPACK threshold in RACK)",
            sysctls="tcp_recovery=5", model=(("rack_dupthresh", False),)),
    Variant("reordering-1", "tcp_reordering=1", sysctls="tcp_reordering=1",
            model=(("reordering", 1),)),
    Variant("reordering-10", "tcp_reordering=10", sysctls="tcp_reordering=10",
            model=(("reordering", 10),)),
    Variant("tlp", "tcp_early_retrans=3 (tail loss probe on, the kernel's default)",
            sysctls="tcp_early_retrans=3"),
    Variant("rwnd-10", "receiver window 10 segments (a Linux < 3.12 receiver's first window: "
            "prr-fig2's reference set-up)", rwnd=10),
    Variant("rwnd-10-reordering-1", "receiver window 10 segments and tcp_reordering=1",
            sysctls="tcp_reordering=1", rwnd=10, model=(("reordering", 1),)),
)
BY_NAME = {v.name: v for v in VARIANTS}

SUMMARY_COLUMNS = [
    "variant", "recovery", "trial", "transfer_time_s", "cwnd_entry", "ssthresh_entry",
    "cwnd_exit", "cwnd_min_recovery", "recovery_trigger", "entry_ack", "entry_dupacks",
    "entry_after_first_sack_ms", "rwnd_segments_before_recovery", "recovery_episodes",
    "timeouts", "tcp_loss_probes_counter", "retransmissions", "path_delay_max_ms",
    "drops_as_planned", "tcp_recovery", "tcp_reordering", "tcp_early_retrans",
    "receiver_window", "run"]
VARIANT_COLUMNS = [
    "variant", "recovery", "trials", "transfer_ms_median", "transfer_ms_trials",
    "cwnd_exit_median", "cwnd_exit_trials", "cwnd_min_trials", "triggers", "entry_acks",
    "model_transfer_ms", "model_cwnd_exit", "model_cwnd_min", "model_entry",
    "linux3_transfer_ms", "linux3_cwnd_exit", "label"]


class PrrHeavyLoss(Experiment):
    name = "prr-heavy-loss"
    title = ("PRR under heavy loss: rate halving's collapse and PRR's speed-up against what "
             "this kernel lets one change")
    quick_note = "3 of the 9 variants (default, reordering-1, rwnd-10) once"
    claims = HEAVY_LOSS_CLAIMS
    options = tuple(o for o in FIG2_OPTIONS if o.name == "controller")

    def __init__(self, traces: TraceSet | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        super().__init__(traces or TraceSet([], Path("/nonexistent"), manifest={}), options)
        self.controller = str(self.chosen["controller"])

    def resolved_options(self) -> dict[str, Any]:
        return {**self.chosen, "controller": resolve_controller(self.controller)}

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """One row per finished run of the matrix: its metrics, its variant and recovery,
        and the model's prediction for them."""
        models = model_predictions()
        rows = []
        for record in cov.records():
            variant = variant_of(record.spec)
            if variant is None:
                continue
            recovery = str(record.spec.option("recovery"))
            row = summary_row(variant, recovery, record, dict(record.metrics))
            row["model_cwnd_exit"] = models[(variant.name, recovery)]["rack"].exit_cwnd
            rows.append(row)
        return rows

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        rate = f"rate:{float(DEFAULT_BOTTLENECK_MBPS):g}"
        controller = resolve_controller(self.controller)
        return [RunSpec(experiment=self.name, scheme=CC, data_trace=rate, ack_trace=rate,
                        delay_ms=DEFAULT_RTT_MS // 2, queue="infinite", duration_s=None,
                        trial=t,
                        options=make_params(topology=SWITCHED_PATH.name, pattern=PATTERN,
                                            size=SIZE, recovery=recovery,
                                            controller=controller,
                                            bottleneck=float(DEFAULT_BOTTLENECK_MBPS),
                                            rtt=DEFAULT_RTT_MS, **variant.options()))
                for t in range(1, (trials if quick else max(trials, FULL_TRIALS)) + 1)
                for variant in VARIANTS if not quick or variant.name in QUICK_VARIANTS
                for recovery in RECOVERIES]

    # ------------------------------------------------------------------ figures

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics
        runs: list[tuple[Variant, str, Any, dict[str, Any], Any]] = []
        for record in self.coverage(store).records():  # the runs of the matrix on record
            variant = variant_of(record.spec)
            if variant is None:
                continue
            try:
                run = load_transfer_run(record.path, record.meta)
                metrics = transfer_metrics(run, record.meta)
            except Exception as e:  # noqa: BLE001 - an unreadable run: say so, use the rest
                log.warning("%s: left out: %s", record.path.name, e)
                continue
            if not metrics.get("drops_as_planned") or metrics.get("window_valid") is False:
                log.warning("%s: left out: %s", record.path.name,
                            metrics.get("drop_verdict") or metrics.get("window_verdict"))
                continue
            runs.append((variant, str(record.spec.option("recovery")), record, metrics, run))
        if not runs:
            return []
        rows = [summary_row(v, rec, record, m) for v, rec, record, m, _ in runs]
        rows.sort(key=lambda r: (VARIANTS.index(BY_NAME[r["variant"]]),
                                 RECOVERIES.index(r["recovery"]), r["trial"]))
        models = model_predictions()
        table = variant_rows(rows, models)
        files = [write_csv(out_dir / "summary.csv", rows, SUMMARY_COLUMNS),
                 write_csv(out_dir / "variants.csv", table, VARIANT_COLUMNS)]
        files += plot_variants(table, [v.name for v in VARIANTS], out_dir)
        traces = {(v.name, rec): [] for v in VARIANTS for rec in RECOVERIES}  # type: ignore
        for v, rec, record, _, run in sorted(runs, key=lambda r: r[2].spec.trial):
            traces[(v.name, rec)].append(run)
        files += plot_model_vs_measured(traces, models, out_dir)
        files.append(write_csv(out_dir / "model-patterns.csv", model_patterns(),
                               MODEL_PATTERN_COLUMNS))
        return files


def variant_of(spec: RunSpec) -> Variant | None:
    """The variant a run was made for (None: not one of ours, or its settings are not the
    variant's)."""
    variant = BY_NAME.get(str(spec.option("variant")))
    if variant is None or str(spec.option("sysctls") or "") != variant.sysctls \
            or spec.option("rwnd") != variant.rwnd:
        return None
    return variant


def summary_row(variant: Variant, recovery: str, record: Any,
                metrics: dict[str, Any]) -> dict[str, Any]:
    sysctls = record.meta.get("sysctls") or {}
    config = ((record.meta.get("topology") or {}).get("config") or {})
    row = {k: metrics.get(k) for k in SUMMARY_COLUMNS}
    row.update(variant=variant.name, recovery=recovery, trial=record.spec.trial,
               tcp_recovery=sysctls.get("net.ipv4.tcp_recovery"),
               tcp_reordering=sysctls.get("net.ipv4.tcp_reordering"),
               tcp_early_retrans=sysctls.get("net.ipv4.tcp_early_retrans"),
               receiver_window=config.get("receiver_window"), run=record.path.name)
    return row


def model_predictions(path: PathModel = PathModel(rate_mbps=DEFAULT_BOTTLENECK_MBPS,
                                                  rtt_ms=DEFAULT_RTT_MS)
                      ) -> dict[tuple[str, str], dict[str, TransferResult]]:
    """Per (variant, recovery): the model of this kernel as the variant sets it ("rack"),
    and of the paper's kernel (Linux 3: FACK) with the variant's receiver ("fack")."""
    out: dict[tuple[str, str], dict[str, TransferResult]] = {}
    for variant in VARIANTS:
        transfer = Transfer(size_bytes=SIZE, drops=DROPS, rwnd_segments=variant.rwnd)
        for recovery in RECOVERIES:
            how = MODEL_RECOVERY[recovery]
            out[(variant.name, recovery)] = {
                "rack": simulate_transfer(this_kernel(how, **dict(variant.model)), transfer,
                                          path),
                "fack": simulate_transfer(linux_3(how), transfer, path)}
    return out


MODEL_PATTERN_COLUMNS = ["pattern", "kernel", "receiver", "recovery", "transfer_ms",
                         "cwnd_exit", "cwnd_min", "entry", "acks_before_entry", "timeouts"]
KERNELS = (("linux-3 (FACK)", linux_3), ("this kernel (RACK)", this_kernel))
RECEIVERS = (("grows (this kernel)", None), ("10 segments (Linux < 3.12)", 10))
PATTERN_RECOVERIES = (("rate-halving", Recovery.RATE_HALVING), ("prr", Recovery.PRR),
                      ("rfc3517", Recovery.RFC6675))


def model_patterns(path: PathModel = PathModel(rate_mbps=DEFAULT_BOTTLENECK_MBPS,
                                               rtt_ms=DEFAULT_RTT_MS)) -> list[dict[str, Any]]:
    """The model on prr-fig2's three patterns (32 KB): each kernel's sender, each receiver."""
    from controllers.drop_plan import PATTERNS
    rows = []
    for pattern, drops in PATTERNS.items():
        for kernel, profile in KERNELS:
            for receiver, rwnd in RECEIVERS:
                transfer = Transfer(size_bytes=SIZE, drops=frozenset(drops), rwnd_segments=rwnd)
                for name, recovery in PATTERN_RECOVERIES:
                    result = simulate_transfer(profile(recovery), transfer, path)
                    entry = result.entry
                    rows.append({
                        "pattern": pattern, "kernel": kernel, "receiver": receiver,
                        "recovery": name, "transfer_ms": result.transfer_ms,
                        "cwnd_exit": result.exit_cwnd,
                        "cwnd_min": result.min_cwnd_in_recovery(),
                        "entry": None if entry is None else f"{entry.kind} {entry.time_ms:.1f} ms",
                        "acks_before_entry": result.acks_before_entry,
                        "timeouts": result.timeouts})
    return rows


def variant_rows(rows: list[dict[str, Any]],
                 models: dict[tuple[str, str], dict[str, TransferResult]]
                 ) -> list[dict[str, Any]]:
    table = []
    for variant in VARIANTS:
        for recovery in RECOVERIES:
            mine = [r for r in rows if r["variant"] == variant.name and r["recovery"] == recovery]
            if not mine:
                continue
            times = [r["transfer_time_s"] * 1000 for r in mine
                     if r["transfer_time_s"] is not None]
            exits = [r["cwnd_exit"] for r in mine if r["cwnd_exit"] is not None]
            rack, fack = (models[(variant.name, recovery)][k] for k in ("rack", "fack"))
            entry = rack.entry
            table.append({
                "variant": variant.name, "recovery": recovery, "trials": len(mine),
                "transfer_ms_median": statistics.median(times) if times else None,
                "transfer_ms_trials": " ".join(f"{t:.0f}" for t in times),
                "cwnd_exit_median": statistics.median(exits) if exits else None,
                "cwnd_exit_trials": " ".join(str(e) for e in exits),
                "cwnd_min_trials": " ".join(str(r["cwnd_min_recovery"]) for r in mine),
                "triggers": " ".join(str(r["recovery_trigger"]) for r in mine),
                "entry_acks": " ".join(str(r["entry_ack"]) for r in mine),
                "model_transfer_ms": rack.transfer_ms, "model_cwnd_exit": rack.exit_cwnd,
                "model_cwnd_min": rack.min_cwnd_in_recovery(),
                "model_entry": (None if entry is None else
                                f"{entry.kind} {entry.time_ms:.1f} ms"),
                "linux3_transfer_ms": fack.transfer_ms, "linux3_cwnd_exit": fack.exit_cwnd,
                "label": variant.label})
    return table
