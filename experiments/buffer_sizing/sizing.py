"""Sizing Router Buffers (SIGCOMM'04): the buffer a router needs for n long TCP flows.

Every run is a shared bottleneck (runkinds/shared_bottleneck/): Reno flows from sender
hosts through a Linux bridge whose port towards the receiver is netrepro-link at a fixed
rate with a drop-tail buffer of B packets, every packet logged. Two studies:

- `sawtooth`: one flow, 10 Mbit/s, RTT 50 ms (RTT x C = 42 packets), B = 0.25, 1 and 4
  times RTT x C: the window and the queue over time (the paper's Figures 4-6), the
  sawtooth's period against the fluid model's B^2/(2C) + RTT B, the queue's low point in
  every period, and the utilization against the model's U(k).
- `sweep`: n = 1 to 100 flows, 50 Mbit/s, four sender hosts at 80, 93, 107 and 120 ms
  (mean 100 ms: RTT x C = 416 packets; one host at 100 ms for n = 1, two at 93 and 107 for
  n = 2), each flow started at a random moment in the first 5 s (seeded by the trial), B
  a few multiples of RTT x C / sqrt(n): the minimum buffer for 98%, 99.5% and 99.9%
  utilization against n (the paper's Figure 11, beside RTT x C / sqrt(n) and RTT x C),
  and the utilization table for n = 32, 64, 100 (Figure 15's layout).

A run counts only when it measured the path (`invalid_reason`): no flow held back by its
windows over 1% of its time, the emulator and the end hosts on time (p99 within 2 ms),
90% of the bottleneck's departure gaps within 10% of a packet's time while it was
backlogged, and a machine with 30% of its CPU time idle.

`--quick`: the sawtooth at B = RTT x C (30 s), and n = 64 at three buffers (25 s each).
Docs: docs/buffer-sizing.md.
"""
from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Mapping

from analysis.coverage import Coverage, missing_notes
from analysis.fidelity import LATE_RULE, late_reason, lateness_ok
from analysis.host_timing import hosts_late
from analysis.summary import RunRecord, write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.settings import Setting
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.buffer_sizing import figures, model, sawtooth
from experiments.buffer_sizing.claims import CLAIMS, MIN_BUFFER, SAWTOOTH, SWEEP, TARGETS
from experiments.buffer_sizing.minimum import EXACT, minimum_buffer
from runkinds.registry import SHARED_BOTTLENECK
from runkinds.shared_bottleneck.metrics import load_window

log = logging.getLogger(__name__)

# The sawtooth: one flow, small enough a BDP for many periods in a minute.
SAWTOOTH_RATE_MBPS = 10
SAWTOOTH_RTT_MS = 50
SAWTOOTH_MULTIPLES = (0.25, 1.0, 4.0)  # of RTT x C
SAWTOOTH_S = {0.25: 40.0, 1.0: 60.0, 4.0: 80.0}
SAWTOOTH_WARMUP_S = 10.0
# The sweep: the spec's set-up scaled for a 2-core machine.
RATE_MBPS = 50
RTT_MS = 100
HOST_RTTS = {1: "100", 2: "93,107"}  # fewer flows than hosts: hosts of the same mean
ALL_HOSTS = "80,93,107,120"
# `--hosts 16`: sixteen round trips, 55 to 145 ms (mean 100), for n >= 16: more of the RTT
# diversity the paper's 25-300 ms had, so less synchronization (docs/buffer-sizing.md).
SIXTEEN_HOSTS = ",".join(str(55 + 6 * i) for i in range(16))
HOST_CHOICES = (4, 16)
FLOW_COUNTS = (1, 2, 4, 8, 16, 32, 64, 100)
TABLE_FLOWS = (32, 64, 100)
MULTIPLES = (0.25, 0.5, 1.0, 2.0)  # of RTT x C / sqrt(n), for n < 32
TABLE_MULTIPLES = (0.5, 1.0, 2.0, 3.0)  # n >= 32: the table's, the last for 99.9%
SINGLE_FLOW_MULTIPLES = (0.5, 0.75, 1.0)  # n = 1: around the model's 0.6-0.7 for 98%
START_SPREAD_S = 5.0
# (duration, warm-up) by n: the scored part (duration - spread - warm-up) holds several of
# the flows' sawtooth periods, which grow with their windows ((RTT C + B) / n).
TIMING = {1: (150.0, 30.0), 2: (75.0, 20.0), 4: (60.0, 15.0), 8: (45.0, 10.0)}
MANY_FLOWS_TIMING = (35.0, 10.0)
QUICK_FLOWS = 64
QUICK_MULTIPLES = (0.5, 1.0, 2.0)  # the table's, and the crossing of 98%
QUICK_TIMING = (25.0, 5.0)
QUICK_SPREAD_S = 3.0
QUICK_SAWTOOTH_S = 30.0
# What a run must show to count as a measurement of the path (the spec's fidelity guard).
GAPS_WITHIN_10PCT_MIN = 0.90
CPU_IDLE_MIN_PCT = 30.0

OPTIONS: tuple[Setting, ...] = (
    Setting("tcp", str, "the flows' congestion control: reno as the paper (ns2's Reno), or "
            "cubic as an extra with its own expectation (docs/buffer-sizing.md)",
            default="reno", choices=("reno", "cubic")),
    Setting("hosts", int, "sender hosts with their own round trips for n >= 16: 4 at 80-120 ms "
            "(the spec's set-up), or 16 at 55-145 ms (more RTT diversity, less "
            "synchronization)", default=4, choices=HOST_CHOICES),
)

SUMMARY_COLUMNS = [
    "study", "scheme", "flows", "trial", "buffer_packets", "planned", "multiple", "rule_packets",
    "bdp_packets", "utilization", "model_utilization", "eq6_lower_bound", "throughput_mbps",
    "queue_mean", "queue_std", "queue_std_bound", "queue_median", "queue_p1", "queue_p99",
    "drops", "tcp_timeouts", "tcp_retransmitted", "sawtooth_periods", "period_median_s",
    "model_period_s", "period_ratio", "period_min_queue_max", "period_min_queue_min",
    "concave_share",
    "window_limited_max_pct", "jain_fairness", "flow_goodput_min_mbps",
    "flow_goodput_max_mbps", "gaps_within_10pct", "lateness_p99_us", "lateness_ok",
    "host_timing_ok", "cpu_idle_pct", "cpu_steal_pct", "cc_used", "cc_provider", "scored_s",
    "run"]
PLANNED_MULTIPLES = tuple(sorted(set(MULTIPLES) | set(TABLE_MULTIPLES)
                                 | set(SINGLE_FLOW_MULTIPLES)))
MIN_BUFFER_COLUMNS = ["flows", "target", "min_buffer_packets", "bound", "min_buffer_rule",
                      "min_buffer_bdp", "rule_packets", "bdp_packets", "over_98",
                      "outside_between_bdp", "points", "runs"]
MISSING_COLUMNS = ["study", "flows", "buffer_packets", "duration_s", "trial", "reason"]


def study_of(spec: RunSpec) -> str:
    return SAWTOOTH if spec.data_trace == f"rate:{SAWTOOTH_RATE_MBPS}" else SWEEP


def rule_of(flows: int) -> float:
    return model.rule_packets(RATE_MBPS, RTT_MS, flows)


class BufferSizing(Experiment):
    name = "buffer-sizing"
    title = ("Sizing Router Buffers: the buffer n long TCP flows need, RTT x C / sqrt(n) "
             "against RTT x C")
    quick_note = ("the single flow's sawtooth at B = RTT x C, and 64 flows at three buffers, "
                  "each run alone")
    options = OPTIONS
    claims = CLAIMS
    headline = ("min-buffer", "sawtooth")
    headline_caption = ("Figure 11: the buffer n flows need, ours beside RTT x C / sqrt(n) "
                        "and the rule of thumb")

    def __init__(self, traces: TraceSet | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        # No trace is read: the bottleneck is a fixed-rate port.
        super().__init__(traces or TraceSet([], Path("/nonexistent"), manifest={}), options)
        self.cc = str(self.chosen["tcp"])
        self.hosts = int(self.chosen["hosts"])

    # ------------------------------------------------------------------ the matrix

    def sawtooth_spec(self, multiple: float, duration_s: float, trial: int) -> RunSpec:
        bdp = model.bdp_packets(SAWTOOTH_RATE_MBPS, SAWTOOTH_RTT_MS)
        rate = f"rate:{SAWTOOTH_RATE_MBPS}"
        buffer = max(1, round(multiple * bdp))
        return RunSpec(experiment=self.name, scheme=self.cc, data_trace=rate, ack_trace=rate,
                       delay_ms=SAWTOOTH_RTT_MS // 2, queue=f"droptail:packets={buffer}",
                       duration_s=duration_s, trial=trial,
                       options=make_params(topology=SHARED_BOTTLENECK.name, flows=1,
                                           buffer=buffer, rtt_ms=SAWTOOTH_RTT_MS,
                                           marking="emulator", warmup_s=SAWTOOTH_WARMUP_S))

    def sweep_spec(self, flows: int, multiple: float, timing: tuple[float, float],
                   spread_s: float, trial: int) -> RunSpec:
        duration_s, warmup_s = timing
        rate = f"rate:{RATE_MBPS}"
        buffer = max(1, round(multiple * rule_of(flows)))
        return RunSpec(experiment=self.name, scheme=self.cc, data_trace=rate, ack_trace=rate,
                       delay_ms=RTT_MS // 2, queue=f"droptail:packets={buffer}",
                       duration_s=duration_s, trial=trial,
                       options=make_params(topology=SHARED_BOTTLENECK.name, flows=flows,
                                           buffer=buffer, rtt_ms=RTT_MS, marking="emulator",
                                           warmup_s=warmup_s,
                                           host_rtts=self.host_rtts(flows),
                                           start_spread_s=spread_s if flows > 1 else None))

    def host_rtts(self, flows: int) -> str:
        if self.hosts == 16 and flows >= 16:
            return SIXTEEN_HOSTS
        return HOST_RTTS.get(flows, ALL_HOSTS)

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        specs: list[RunSpec] = []
        for t in range(1, trials + 1):
            if quick:
                specs.append(self.sawtooth_spec(1.0, QUICK_SAWTOOTH_S, t))
                specs += [self.sweep_spec(QUICK_FLOWS, m, QUICK_TIMING, QUICK_SPREAD_S, t)
                          for m in QUICK_MULTIPLES]
                continue
            specs += [self.sawtooth_spec(m, SAWTOOTH_S[m], t) for m in SAWTOOTH_MULTIPLES]
            for n in FLOW_COUNTS:
                multiples = SINGLE_FLOW_MULTIPLES if n == 1 else \
                    TABLE_MULTIPLES if n in TABLE_FLOWS else MULTIPLES
                timing = TIMING.get(n, MANY_FLOWS_TIMING)
                specs += [self.sweep_spec(n, m, timing, START_SPREAD_S, t) for m in multiples]
        return specs

    # ------------------------------------------------------------------ validity

    def invalid_reason(self, record: RunRecord) -> str:
        """The platform's rules, then the spec's fidelity guard: late emulator or end hosts,
        departures off their schedule, a machine without idle time."""
        why = record.invalid
        if why:
            return why
        m = record.metrics
        if m.get("lateness_ok") is False:
            return (f"the emulator was late ({late_reason(m) or LATE_RULE}): "
                    "no measurement of the path")
        if hosts_late(m):
            return "the end hosts were late (p99 over 2 ms): no measurement of the path"
        gaps = m.get("gaps_within_10pct")
        if gaps is not None and gaps < GAPS_WITHIN_10PCT_MIN:
            return (f"{100 * gaps:.1f}% of the bottleneck's departure gaps within 10% of a "
                    f"packet's time (under {100 * GAPS_WITHIN_10PCT_MIN:g}%)")
        idle = m.get("cpu_idle_pct")
        if idle is not None and idle < CPU_IDLE_MIN_PCT:
            return f"the machine had {idle:.0f}% of its CPU time idle (under " \
                   f"{CPU_IDLE_MIN_PCT:g}%): it measured the machine as much as the path"
        return ""

    # ------------------------------------------------------------------ rows

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        runs = [run_row(r) for r in cov.records()]
        return runs + min_buffer_rows(runs)

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if all(not c.done and c.reason == "not run yet" for c in cov.cells):
            return []
        rows = self.claim_rows(cov)
        runs = sorted((r for r in rows if r["study"] != MIN_BUFFER),
                      key=lambda r: (r["study"] != SAWTOOTH, r["flows"], r["buffer_packets"],
                                     r["trial"]))
        minima = [r for r in rows if r["study"] == MIN_BUFFER]
        files = [write_csv(out_dir / "summary.csv", runs, SUMMARY_COLUMNS),
                 write_csv(out_dir / "min-buffer.csv", minima, MIN_BUFFER_COLUMNS),
                 self.write_missing(cov, out_dir)]
        notes = missing_notes(cov.cells, lambda s: f"{study_of(s)} n={s.option('flows')} "
                                                   f"{s.queue}")
        files += figures.draw_all(cov, runs, minima, out_dir, notes)
        return files

    @staticmethod
    def write_missing(cov: Coverage, out_dir: Path) -> Path:
        rows = [{"study": study_of(c.spec), "flows": c.spec.option("flows"),
                 "buffer_packets": c.spec.queue.rsplit("=", 1)[-1],
                 "duration_s": c.spec.duration_s, "trial": c.spec.trial, "reason": c.reason}
                for c in cov.missing()]
        return write_csv(out_dir / "missing.csv", rows, MISSING_COLUMNS)


def run_row(record: RunRecord) -> dict[str, Any]:
    """A run's row: its metrics, its study, the models' values beside them."""
    spec, m = record.spec, dict(record.metrics)
    row = {**dict(spec.options), **dict(spec.params), **m}
    flows, buffer = int(spec.option("flows")), int(m.get("buffer_packets") or 0)
    row.update(scheme=spec.scheme, trial=spec.trial, run=record.path.name,
               study=study_of(spec), flows=flows, buffer_packets=buffer,
               lateness_ok=lateness_ok(record.meta.get("link")) if m.get("lateness_ok") is None
               else m["lateness_ok"])
    if row["study"] == SAWTOOTH:
        bdp = model.bdp_packets(SAWTOOTH_RATE_MBPS, SAWTOOTH_RTT_MS)
        k = buffer / bdp
        row.update(bdp_packets=bdp, rule_packets=bdp, multiple=k,
                   planned=nearest(k, SAWTOOTH_MULTIPLES),
                   model_utilization=model.single_flow_utilization(k),
                   model_period_s=model.sawtooth_period_s(buffer, SAWTOOTH_RATE_MBPS,
                                                          SAWTOOTH_RTT_MS))
        row.update(sawtooth_of(record))
        if row.get("period_median_s") and row.get("model_period_s"):
            row["period_ratio"] = row["period_median_s"] / row["model_period_s"]
    else:
        bdp, rule = model.bdp_packets(RATE_MBPS, RTT_MS), rule_of(flows)
        row.update(bdp_packets=bdp, rule_packets=rule, multiple=buffer / rule,
                   planned=nearest(buffer / rule, PLANNED_MULTIPLES),
                   eq6_lower_bound=model.utilization_lower_bound(bdp, buffer, flows),
                   queue_std_bound=model.queue_spread_bound(bdp, buffer, flows))
        if flows == 1:
            row["model_utilization"] = model.single_flow_utilization(buffer / bdp)
    return row


def nearest(multiple: float, planned: tuple[float, ...]) -> float:
    """The planned multiple a buffer (rounded to whole packets) stands for."""
    return min(planned, key=lambda m: abs(m - multiple))


def sawtooth_of(record: RunRecord) -> dict[str, Any]:
    """The single flow's periods, from its run's queue log (empty when it cannot be read)."""
    try:
        window = load_window(record.path, record.spec, record.meta)
    except (OSError, ValueError) as e:
        log.warning("%s: its sawtooth cannot be read: %s", record.path.name, e)
        return {}
    # A loss event's drops come within two round trips with the buffer full.
    buffer = int(record.metrics.get("buffer_packets") or 0)
    rtt_s = SAWTOOTH_RTT_MS / 1000.0 + buffer / model.packets_per_s(SAWTOOTH_RATE_MBPS)
    return sawtooth.summarize(sawtooth.periods(window.log, 2 * rtt_s, end_s=window.end_s,
                                               start_s=window.start_s)).to_dict()


def min_buffer_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per n and target utilization: the smallest buffer that reaches it."""
    rows: list[dict[str, Any]] = []
    by_flows: dict[int, list[dict[str, Any]]] = {}
    for r in runs:
        if r["study"] == SWEEP and r.get("utilization") is not None:
            by_flows.setdefault(int(r["flows"]), []).append(r)
    bdp = model.bdp_packets(RATE_MBPS, RTT_MS)
    for flows, members in sorted(by_flows.items()):
        points = [(float(r["buffer_packets"]), float(r["utilization"])) for r in members]
        rule = rule_of(flows)
        found = {t: minimum_buffer(points, t) for t in TARGETS}
        for target, m in found.items():
            if m is None:
                continue
            rows.append({"study": MIN_BUFFER, "flows": flows, "target": target,
                         "min_buffer_packets": m.packets, "bound": m.bound,
                         "min_buffer_rule": m.packets / rule, "min_buffer_bdp": m.packets / bdp,
                         "rule_packets": rule, "bdp_packets": bdp,
                         "points": len({p[0] for p in points}),
                         "runs": " ".join(r["run"] for r in members),
                         "late_trials": sum(1 for r in members if r.get("lateness_ok") is False)})
            base = found[TARGETS[0]]
            if target == TARGETS[-1] and m.exact and base is not None and base.exact:
                rows[-1]["over_98"] = m.packets / base.packets
    single = next((r for r in rows if r["flows"] == 1 and r["target"] == TARGETS[0]
                   and r["bound"] == EXACT), None)
    for r in rows:
        if r["target"] == TARGETS[0] and r["flows"] in (2, 4) and single is not None \
                and r["bound"] == EXACT:
            ends = sorted((1 / math.sqrt(int(r["flows"])), float(single["min_buffer_bdp"])))
            value = r["min_buffer_bdp"]
            r["outside_between_bdp"] = max(0.0, ends[0] - value, value - ends[1])
    return rows
