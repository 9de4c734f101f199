"""PRR (IMC 2011) Figure 2: one TCP flow, deterministic losses, the recoveries side by side.

Sender -- Open vSwitch under an OpenFlow controller that drops chosen original
data segments -- receiver, over a fixed-rate bottleneck; one transfer of
exactly N bytes per run, IW10. For each loss pattern (light: segments 1-5;
heavy: 1-4 and 6-8; base: 11-14) and size (32 KB, 64 KB), the recoveries run
on this one kernel: Linux <= 3.1 rate halving, RFC 3517 and PRR as eBPF
cong_control, and the kernel's own PRR (kernel/recovery.py); Cubic by
default, Reno selectable. Outputs per pattern and size a figure
(experiments/prr/plot.py) and summary.csv; the paper's claims are declared in
experiments/prr/claims.py and evaluated by the shared mechanism
(analysis/claims/) on the summary rows of the runs of the matrix.

Run options (each part of the run's id, see OPTIONS): pattern, size,
recovery, cc, controller, bottleneck, rtt, receiver. The spec's data/ack traces
(`rate:<bottleneck>`) and delay (rtt / 2) are derived from them so the run's
label says what the path was; the run checks that they agree.

The receiver: the claims are judged on the reference's set-up, a receiver that does not
open its window on out-of-order data (Linux < 3.12). Where every loss falls in the first
window (light, heavy), such a receiver offered its first 10 segments and no more until the
holes were filled: those runs hold the receiver's window at 10 segments (the switched path's
`rwnd`). This kernel's receiver, which grows its window with every out-of-order segment, runs
beside them as a labelled variant with its own figures and claims (ours). Where the first
window arrives in order (base), a receiver before 3.12 had opened its window as far as the
sender may send, so the two set-ups are one run (docs/prr-fig2.md, "The receiver").
"""
from __future__ import annotations

import fnmatch
import logging
from pathlib import Path
from typing import Any, Mapping

from analysis.coverage import Coverage
from controllers.drop_plan import DropPlan, DropPlanError
from experiments.prr.plot import plot_recoveries
from runkinds.switched_path.transfer_run import load_transfer_run, transfer_metrics
from analysis.summary import finished_runs, latest_per_run, write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.settings import Setting
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.prr.claims import (CLAIMS, HELD_RWND_SEGMENTS, REFERENCE, TODAY,
                                    acks_waited)
from experiments.prr.fig2_predictions import COLUMNS as MODEL_COLUMNS, predict
from runkinds.registry import SWITCHED_PATH, kind_of

log = logging.getLogger(__name__)

PATTERNS = ("light", "heavy", "base")
SIZES = (32 * 1024, 64 * 1024)
RECOVERIES = ("rate-halving", "rfc3517", "prr-kernel", "prr-bpf")
CCS = ("cubic", "reno")
CONTROLLERS = ("auto", "pox", "os-ken")
DEFAULT_BOTTLENECK_MBPS = 10
DEFAULT_RTT_MS = 40
QUICK_SIZES = (32 * 1024,)
RECOVERY_LABELS = {"rate-halving": "rate halving (Linux <= 3.1)", "rfc3517": "RFC 3517",
                   "prr-kernel": "PRR (kernel)", "prr-bpf": "PRR (eBPF check)"}
# The initial window (route initcwnd): a loss at or below it is in the first window.
IW_SEGMENTS = 10
BOTH = "both"
TODAY_STEM = "-today-receiver"  # the variant's figures: prr-heavy-32k-cubic-pox-today-receiver
RECEIVER_TEXT = {
    REFERENCE: f"receiver window held at {HELD_RWND_SEGMENTS} segments (a receiver before "
               "Linux 3.12: the reference's set-up)",
    TODAY: "THIS KERNEL'S RECEIVER (grows its window on out-of-order data): a variant, not "
           "the reference's set-up"}


ALL = "all"
# The run options prr-fig2 takes on the command line (`repro run prr-fig2 --pattern heavy`).
# "all" (the default) expands into one run per value in the matrix.


def _check_pattern(text: str) -> None:
    if text != ALL:
        from controllers.drop_plan import DropPlan
        DropPlan.parse(text)  # an unknown pattern or a bad list is refused here


def _check_rtt(rtt: int) -> None:
    if rtt % 2:
        raise ValueError(f"{rtt} is odd: the RTT is split evenly between the directions")


OPTIONS: tuple[Setting, ...] = (
    Setting("pattern", str, "loss pattern: light, heavy, base, or original segment numbers "
            "such as 1,2,3 (all: the three patterns)", default=ALL, validate=_check_pattern),
    Setting("size", int, "transfer size in bytes (0: 32768 and 65536; quick: 32768)",
            default=0, minimum=0, maximum=64 * 1024 * 1024),
    Setting("recovery", str, "fast recovery (all: every one)", default=ALL,
            choices=(ALL,) + RECOVERIES),
    Setting("cc", str, "base congestion control", default="cubic", choices=CCS),
    Setting("controller", str, "OpenFlow controller: pox, os-ken, or auto (POX if installed, "
            "else os-ken; the run records which)", default="auto", choices=CONTROLLERS),
    Setting("bottleneck", float, "bottleneck rate in Mbit/s (100 as in the 2015 "
            "reproduction)", default=float(DEFAULT_BOTTLENECK_MBPS), minimum=0.1,
            maximum=1000),
    Setting("rtt", int, "round-trip time in ms, an even number (20 ms each way by default)",
            default=DEFAULT_RTT_MS, minimum=0, maximum=2000, validate=_check_rtt),
    Setting("receiver", str, "the receiver where every loss falls in the first window: "
            f"{REFERENCE} (the claims' set-up: its window held at {HELD_RWND_SEGMENTS} "
            f"segments, as a receiver before Linux 3.12 held it), {TODAY} (this kernel's, "
            f"which grows its window on out-of-order data: a variant with claims of our own), "
            f"or {BOTH}", default=BOTH, choices=(BOTH, REFERENCE, TODAY)),
)

SUMMARY_COLUMNS = [
    "pattern", "size_bytes", "recovery", "cc", "receiver", "rwnd_segments", "trial",
    "transfer_time_s",
    "time_in_recovery_s", "cwnd_entry", "ssthresh_entry", "cwnd_exit", "ssthresh_exit",
    "retransmissions", "timeouts", "drops_as_planned", "controller", "datapath", "provider",
    "recovery_episodes", "new_in_recovery", "recovery_acks", "acks_before_new", "acks_waited",
    "max_burst",
    "unsent_at_recovery_bytes", "handshake_s", "entry_after_fack_ms", "acks_after_fack",
    "entry_after_dupthresh_ms", "acks_after_dupthresh", "path_delay_median_ms",
    "path_delay_max_ms",
    "total_retrans_tcp_info", "bottleneck_mbps", "rtt_ms", "controller_latency_ms",
    "tcp_recovery_sysctl", "rwnd_segments_before_recovery"] + MODEL_COLUMNS + ["run"]


class PrrFig2(Experiment):
    name = "prr-fig2"
    title = "PRR Figure 2: rate halving, RFC 3517 and PRR under deterministic losses"
    options = OPTIONS

    quick_note = "32 KB only, every pattern and recovery"
    claims = CLAIMS
    headline = ("prr-heavy-32k-cubic-*", "prr-heavy-*")
    headline_caption = ("Figure 2, heavy loss, the reference's receiver: each recovery's "
                        "time-sequence plot and window")

    def __init__(self, traces: TraceSet | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        # No trace is read: the path is a fixed-rate link (its rate and RTT are options).
        super().__init__(traces or TraceSet([], Path("/nonexistent"), manifest={}), options)
        o = self.chosen
        self.pattern = None if o["pattern"] == ALL else str(o["pattern"])
        self.size = int(o["size"]) or None
        self.recovery = None if o["recovery"] == ALL else str(o["recovery"])
        self.cc, self.controller = str(o["cc"]), str(o["controller"])
        self.bottleneck, self.rtt = float(o["bottleneck"]), int(o["rtt"])
        self.receiver = str(o.get("receiver", BOTH))

    def headline_figure(self, folder: Path) -> tuple[Path, str] | None:
        """The heavy pattern's figure in the reference's set-up; the variant's, said so, when
        the reference's runs are not on record."""
        drawn = sorted(folder.glob("*.png"))
        for variant in (False, True):
            for pattern in self.headline:
                for path in drawn:
                    if fnmatch.fnmatchcase(path.stem, pattern) and \
                            (TODAY_STEM in path.stem) == variant:
                        return path, (self.headline_caption if not variant else
                                      "Figure 2, heavy loss, with this kernel's receiver: a "
                                      "variant (the reference's runs are not on record)")
        return None

    def resolved_options(self) -> dict[str, Any]:
        """`--controller auto` decided: the controller that serves on this machine."""
        return {**self.chosen, "controller": resolve_controller(self.controller)}

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        patterns = (self.pattern,) if self.pattern else PATTERNS
        sizes = (self.size,) if self.size else (QUICK_SIZES if quick else SIZES)
        recoveries = (self.recovery,) if self.recovery else RECOVERIES
        rate = f"rate:{self.bottleneck:g}"
        controller = resolve_controller(self.controller)
        return [RunSpec(experiment=self.name, scheme=self.cc, data_trace=rate, ack_trace=rate,
                        delay_ms=self.rtt // 2, queue="infinite", duration_s=None, trial=t,
                        options=make_params(topology=SWITCHED_PATH.name, pattern=pattern,
                                            size=size, recovery=recovery,
                                            controller=controller, bottleneck=self.bottleneck,
                                            rtt=self.rtt, rwnd=rwnd))
                for t in range(1, trials + 1) for pattern in patterns
                for rwnd in self._windows(pattern) for size in sizes
                for recovery in recoveries]

    def _windows(self, pattern: str) -> tuple[int | None, ...]:
        """The receiver windows to hold for a pattern (None: this kernel's receiver)."""
        if not losses_in_first_window(pattern):
            return (None,)  # the two set-ups are one run
        held = {REFERENCE: (HELD_RWND_SEGMENTS,), TODAY: (None,)}
        return held.get(self.receiver, (HELD_RWND_SEGMENTS, None))

    # ------------------------------------------------------------- figures

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        records = [r for r in latest_per_run(finished_runs(store))
                   if kind_of(r.spec) is SWITCHED_PATH]
        metrics = {r.path: _metrics(r) for r in records}
        # A run finished before the window check existed may still show an absurd window:
        # it is left out of every table and figure, with its reason in the log.
        for r in [r for r in records if metrics[r.path].get("window_valid") is False]:
            log.warning("%s: left out: %s", r.path.name, metrics[r.path].get("window_verdict"))
            records.remove(r)
        if not records:
            return []
        rows = [summary_row(r.spec, metrics[r.path], r.meta, r.path.name) for r in records]
        rows.sort(key=lambda row: (row["pattern"], row["size_bytes"], row["cc"],
                                   row["receiver"], _order(row["recovery"]), row["trial"]))
        files = [write_csv(out_dir / "summary.csv", rows, SUMMARY_COLUMNS)]
        files += self._figures(records, out_dir)
        for old in [*out_dir.glob("prr-*.png"), *out_dir.glob("prr-*.svg")]:
            if old not in files:  # a figure of runs no longer on record, or of an older layout
                old.unlink()
                log.info("removed %s: no run on record draws it now", old.name)
        stale = out_dir / "claims.csv"  # written by this experiment's former evaluator
        if stale.is_file():
            stale.unlink()
            log.info("removed %s: the claims are in claims.json and claims.md", stale)
        return files

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """summary.csv's rows for the runs of the matrix (the claims take the medians over
        trials per cell themselves)."""
        return [summary_row(r.spec, dict(r.metrics), r.meta, r.path.name)
                for r in cov.records()]

    def _figures(self, records: list, out_dir: Path) -> list[Path]:
        groups: dict[tuple, list] = {}
        for r in records:
            o = dict(r.spec.options)
            key = (o["pattern"], o["size"], r.spec.scheme, o["bottleneck"], o["rtt"],
                   o["controller"], receiver_of(r.spec))
            groups.setdefault(key, []).append(r)
        files: list[Path] = []
        for (pattern, size, cc, bottleneck, rtt, controller, receiver), recs in sorted(
                groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
            panels = []
            first: dict[str, Any] = {}
            for r in sorted(recs, key=lambda r: r.spec.trial):
                first.setdefault(r.spec.option("recovery"), r)
            for recovery in sorted(first, key=_order):
                r = first[recovery]
                try:
                    run = load_transfer_run(r.path, r.meta)
                except Exception as e:  # a run's artifacts unreadable: say so, draw the rest
                    log.warning("%s: cannot draw: %s", r.path.name, e)
                    continue
                m = r.metrics
                label = (f"{RECOVERY_LABELS.get(recovery, recovery)} [{_provider(r.meta)}]\n"
                         f"transfer {_ms(m.get('transfer_time_s'))}, cwnd exit "
                         f"{_n(m.get('cwnd_exit'))} / ssthresh {_n(m.get('ssthresh_exit'))}")
                panels.append((label, run))
            if not panels:
                continue
            meta = recs[0].meta
            title = (f"PRR Fig. 2: pattern {pattern} (drop {_plan(meta)}), {size // 1024} KB, "
                     f"{cc}, IW10, {bottleneck:g} Mbit/s, RTT {rtt} ms; controller "
                     f"{_controller(meta)}, OVS {_datapath(meta)} datapath; loss detection "
                     f"{_loss_detection(meta)}")
            if losses_in_first_window(pattern):
                title += f"\n{RECEIVER_TEXT[receiver]}"
            stem = f"prr-{pattern.replace(',', '_')}-{size // 1024}k-{cc}-{controller}"
            if (bottleneck, rtt) != (DEFAULT_BOTTLENECK_MBPS, DEFAULT_RTT_MS):
                stem += f"-{bottleneck:g}mbit-{rtt}ms"
            if receiver == TODAY:
                stem += TODAY_STEM
            files += plot_recoveries(panels, title, out_dir, stem)
        return files


def losses_in_first_window(pattern: str) -> bool:
    """Whether every planned loss falls in the initial window: there a receiver before Linux
    3.12 offered its first window and no more until the holes were filled (False for a
    pattern that does not parse: such a run fails on its own)."""
    try:
        segments = DropPlan.parse(pattern).segments
    except DropPlanError:
        return False
    return bool(segments) and max(segments) <= IW_SEGMENTS


def receiver_of(spec: RunSpec) -> str:
    """The set-up a run's receiver belongs to: this kernel's where the reference's would
    have held its window, else the reference's (a held window, or a pattern where the two
    are one run)."""
    pattern = str(spec.option("pattern", ""))
    held = spec.option("rwnd") is not None
    return TODAY if losses_in_first_window(pattern) and not held else REFERENCE


def resolve_controller(requested: str) -> str:
    """`auto` becomes the controller that would serve (POX if installed, else os-ken), so the
    run's id names what ran; when neither can, it stays `auto` and the run fails saying why."""
    if requested != "auto":
        return requested
    from controllers.launcher import ControllerUnavailable, choose_controller
    try:
        return choose_controller("auto").kind
    except ControllerUnavailable:
        return requested


def _metrics(record: Any) -> dict[str, Any]:
    """The run's metrics derived again from its artifacts (so a fix in the analysis reaches
    finished runs); the stored metrics.json when the artifacts cannot be read."""
    try:
        return transfer_metrics(load_transfer_run(record.path, record.meta), record.meta)
    except Exception as e:  # noqa: BLE001 - any unreadable artifact: say so, keep the row
        log.warning("%s: metrics from metrics.json (artifacts unreadable: %s)",
                    record.path.name, e)
        return dict(record.metrics)


def summary_row(spec: RunSpec, metrics: dict[str, Any], meta: dict[str, Any],
                run: str) -> dict[str, Any]:
    o = dict(spec.options)
    row = dict(metrics)
    row.update(pattern=o.get("pattern"), size_bytes=o.get("size"), recovery=o.get("recovery"),
               cc=spec.scheme, receiver=receiver_of(spec), rwnd_segments=o.get("rwnd"),
               trial=spec.trial, controller=_controller(meta),
               datapath=_datapath(meta), provider=_provider(meta),
               bottleneck_mbps=o.get("bottleneck"), rtt_ms=o.get("rtt"),
               controller_latency_ms=(meta.get("controller") or {}).get("added_latency_ms"),
               tcp_recovery_sysctl=(meta.get("sysctls") or {}).get("net.ipv4.tcp_recovery"),
               run=run)
    row["acks_waited"] = acks_waited(row)
    row.update(predict(row["pattern"], row["size_bytes"], row["cc"], row["recovery"],
                       row["bottleneck_mbps"], row["rtt_ms"], o.get("rwnd")))
    return row


def _order(recovery: str) -> int:
    return RECOVERIES.index(recovery) if recovery in RECOVERIES else len(RECOVERIES)


def _controller(meta: dict[str, Any]) -> str:
    return str((meta.get("controller") or {}).get("name") or "?")


def _datapath(meta: dict[str, Any]) -> str:
    return str((meta.get("topology") or {}).get("datapath") or "?")


def _provider(meta: dict[str, Any]) -> str:
    return str((meta.get("provider") or {}).get("cc_provider") or "?")


def _plan(meta: dict[str, Any]) -> str:
    segments = (meta.get("drop_plan") or {}).get("segments") or []
    return ",".join(str(s) for s in segments) or "?"


def _loss_detection(meta: dict[str, Any]) -> str:
    sysctls = meta.get("sysctls") or {}
    value = sysctls.get("net.ipv4.tcp_recovery")
    return "RACK" if value is None else f"tcp_recovery={value} (RACK only on this kernel)"


def _ms(seconds: Any) -> str:
    return "-" if seconds is None else f"{float(seconds) * 1000:.0f} ms"


def _n(value: Any) -> str:
    return "-" if value is None else f"{value}"
