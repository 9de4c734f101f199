"""DCTCP (SIGCOMM'10) Figures 1 and 13 as Mininet-HiFi (CoNEXT'12) reproduced them: the
queue at a switch port shared by long flows, TCP against DCTCP.

Every run is a shared bottleneck (runkinds/shared_bottleneck/): N senders, one per
flow, through a Linux bridge whose port towards the receiver is netrepro-link at
100 Mbit/s with a 425-packet buffer, the queue logged at every packet. Three studies:

- `compare`: N = 2, RTT 1 ms (the emulator's; Mininet-HiFi's links added ~0.15 ms, the
  analysis's numbers at 100 Mbit/s are worked for ~1 ms): Reno and Cubic over drop-tail
  (droptail:packets=425) against DCTCP over the marking queue (ecn:k=20,packets=425);
- `flows`: DCTCP at N = 2, 10, 40 (same path): the peak K + N and the amplitude against
  the analysis;
- `k-sweep`: DCTCP at N = 10, RTT 10 ms, K = 3 to 48. At RTT 1 ms C RTT / 7 is ~1.3
  packets, so every K satisfies the bound and a sweep shows nothing (the paper: at
  1 Gbit/s results do not depend on K); at 10 ms C RTT is ~84 packets and the bound 12,
  and N = 10 is near the flow count at which the analysis's trough is lowest
  ((C RTT + K) / 8 ~ 12): below the bound it predicts the queue empties.

`--quick`: the comparison's Reno and DCTCP only (the pair of Figure 1), 20 s each; the
full run adds Cubic, the two sweeps, and 60 s per comparison run (30 s per K).
`--rate 1000` runs the comparison (Figures 1 and 13) at the paper's own 1 Gbit/s instead,
judged against the hardware's numbers by the `*-1g-*` claims; the sweeps stay at 100 Mbit/s.
`--queue red` makes the kernel's RED mark DCTCP's runs instead of the emulator (where the
kernel has RED; elsewhere those runs fail naming it). `--segments one` makes TCP at the
senders build one-segment packets instead of TSO-sized bursts (docs/dctcp.md, "The senders'
bursts").

Figures (PNG and SVG) in results/dctcp/: fig1-queue (the queue over time), fig13-queue-cdf
(its CDF beside Mininet-HiFi's and the hardware's published statistics), alpha-over-time,
throughput-per-flow, flows-sweep, k-sweep; summary.csv, missing.csv; the claims
(experiments/dctcp/claims.py) in claims.md and claims.json. Docs: docs/dctcp.md.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

from analysis.coverage import Coverage, missing_notes
from analysis.summary import write_csv
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.settings import Setting
from core.traces import TraceSet
from experiments.base import Experiment
from experiments.dctcp import figures, model
from experiments.dctcp.claims import CLAIMS, COMPARE, COMPARE_1G, FLOWS, K_SWEEP
from runkinds.registry import SHARED_BOTTLENECK

log = logging.getLogger(__name__)

RATE_MBPS = 100
PAPER_RATE_MBPS = 1000
BUFFER = 425
K = 20
RTT_MS = 1
K_SWEEP_RTT_MS = 10
K_SWEEP_FLOWS = 10
K_VALUES = (3, 6, 9, 15, 24, 48)
FLOW_COUNTS = (2, 10, 40)
TCPS = ("reno", "cubic")
QUICK_TCPS = ("reno",)
QUICK_S = 20.0
FULL_S = 60.0
K_SWEEP_S = 30.0
WARMUP_S = 2.0
QUEUES = ("ecn", "red")
SEGMENT_CHOICES = ("gso", "one")

OPTIONS: tuple[Setting, ...] = (
    Setting("queue", str, "which queue marks DCTCP's runs: ecn (netrepro-link's threshold "
            "marking) or red (the kernel's tc RED, where the kernel has it)",
            default="ecn", choices=QUEUES),
    Setting("rate", int, "the bottleneck's rate in Mbit/s: 100 (Mininet-HiFi's: every study) "
            "or 1000 (the paper's own: Figures 1 and 13 only)",
            default=RATE_MBPS, choices=(RATE_MBPS, PAPER_RATE_MBPS)),
    Setting("segments", str, "what TCP at the senders builds: gso (the kernel's default: "
            "multi-segment packets, sent in TSO-sized bursts) or one (one segment per packet, "
            "as from a NIC without TSO; docs/dctcp.md, \"The senders' bursts\")",
            default="gso", choices=SEGMENT_CHOICES),
)

SUMMARY_COLUMNS = [
    "study", "scheme", "flows", "k", "rtt_ms", "trial", "marking", "queue_median", "queue_p5",
    "queue_p95", "queue_p1", "queue_p99", "queue_peak", "queue_max", "queue_in_k_band",
    "queue_gap_to_95pct_buffer_s", "queue_amplitude", "drops", "marks", "marked_fraction",
    "goodput_mbps", "throughput_mbps", "utilization", "flow_goodput_min_mbps",
    "flow_goodput_max_mbps", "jain_fairness", "alpha_mean", "theory_q_max", "theory_q_min",
    "theory_amplitude", "amplitude_ratio", "theory_alpha", "bdp_packets", "k_bound", "k_side",
    "gaps_within_10pct", "gap_p1_us", "gap_p50_us", "gap_p99_us", "lateness_p99_us",
    "lateness_ok", "host_timing_ok", "cpu_steal_pct", "cc_used", "cc_provider",
    "flow1_cwnd_median", "flow1_cwnd_min", "flow1_srtt_median_us", "scored_s", "run"]
MISSING_COLUMNS = ["study", "scheme", "flows", "queue", "rtt_ms", "duration_s", "trial", "reason"]


def study_of(spec: RunSpec) -> str:
    """Which study a run belongs to (the N = 2 DCTCP run serves the comparison and the
    flows' sweep; the claims read it as `compare`)."""
    if spec.data_trace == f"rate:{PAPER_RATE_MBPS}":
        return COMPARE_1G
    if int(spec.option("rtt_ms", RTT_MS)) == K_SWEEP_RTT_MS:
        return K_SWEEP
    return COMPARE if int(spec.option("flows", 2)) == 2 else FLOWS


def theory(row: Mapping[str, Any]) -> dict[str, Any]:
    """The analysis's values for a run's row (K None: drop-tail, no analysis)."""
    rate, rtt, flows, k = row.get("rate_mbps"), row.get("rtt_ms"), row.get("flows"), row.get("k")
    if rate is None or rtt is None or flows is None:
        return {}
    bdp = model.bdp_packets(float(rate), float(rtt))
    out: dict[str, Any] = {"bdp_packets": bdp, "k_bound": model.k_bound(bdp)}
    if k is None:
        return out
    k, flows = float(k), int(flows)
    amplitude = model.amplitude(bdp, k, flows)
    out.update(theory_q_max=model.q_max(k, flows), theory_q_min=model.q_min(bdp, k, flows),
               theory_amplitude=amplitude, theory_alpha=model.alpha_steady(bdp, k, flows),
               k_side="above" if k > model.k_bound(bdp) else "below")
    measured = row.get("queue_amplitude")
    if measured is not None and amplitude > 0:
        out["amplitude_ratio"] = float(measured) / amplitude
    return out


class DctcpQueue(Experiment):
    name = "dctcp"
    title = ("DCTCP Figures 1 and 13: the queue at a shared switch port, TCP against DCTCP "
             "(as Mininet-HiFi reproduced them)")
    quick_note = "Reno and DCTCP at N = 2 only, 20 s each, each run alone"
    options = OPTIONS
    claims = CLAIMS
    headline = ("fig13-queue-cdf", "fig1-queue")
    headline_caption = ("Figure 13: the queue's CDF, TCP against DCTCP, ours beside the "
                        "paper's hardware and Mininet-HiFi's published numbers")

    def __init__(self, traces: TraceSet | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        # No trace is read: the bottleneck is a fixed-rate port.
        super().__init__(traces or TraceSet([], Path("/nonexistent"), manifest={}), options)
        self.marking = "red" if self.chosen["queue"] == "red" else "emulator"
        self.rate_mbps = int(self.chosen["rate"])
        # Only when asked for, so the default runs keep their ids.
        self.one_segment = True if self.chosen["segments"] == "one" else None

    # ------------------------------------------------------------------ the matrix

    def run_spec(self, scheme: str, flows: int, k: int | None, rtt_ms: int, duration_s: float,
                 trial: int) -> RunSpec:
        queue = f"ecn:k={k},packets={BUFFER}" if k is not None else f"droptail:packets={BUFFER}"
        # A drop-tail run marks nothing: which marker DCTCP's runs use does not change it.
        marking = self.marking if k is not None else "emulator"
        rate = f"rate:{self.rate_mbps}"
        return RunSpec(experiment=self.name, scheme=scheme, data_trace=rate, ack_trace=rate,
                       delay_ms=rtt_ms // 2, queue=queue, duration_s=duration_s, trial=trial,
                       options=make_params(topology=SHARED_BOTTLENECK.name, flows=flows,
                                           k=k, rtt_ms=rtt_ms, marking=marking,
                                           warmup_s=WARMUP_S,
                                           one_segment_packets=self.one_segment))

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        specs: list[RunSpec] = []
        for t in range(1, trials + 1):
            seconds = QUICK_S if quick else FULL_S
            for tcp in (QUICK_TCPS if quick else TCPS):
                specs.append(self.run_spec(tcp, 2, None, RTT_MS, seconds, t))
            specs.append(self.run_spec("dctcp", 2, K, RTT_MS, seconds, t))
            if quick or self.rate_mbps != RATE_MBPS:
                continue
            specs += [self.run_spec("dctcp", n, K, RTT_MS, FULL_S, t)
                      for n in FLOW_COUNTS if n != 2]
            specs += [self.run_spec("dctcp", K_SWEEP_FLOWS, k, K_SWEEP_RTT_MS, K_SWEEP_S, t)
                      for k in K_VALUES]
        return specs

    # ------------------------------------------------------------------ rows

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        return [summary_row(r.spec, dict(r.metrics), r.path.name) for r in cov.records()]

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if all(not c.done and c.reason == "not run yet" for c in cov.cells):
            return []
        rows = self.claim_rows(cov)
        order = {COMPARE: 0, COMPARE_1G: 0, FLOWS: 1, K_SWEEP: 2}
        rows.sort(key=lambda r: (order[r["study"]], r["scheme"] != "reno", r["scheme"],
                                 r["flows"], r.get("k") or 0, r["trial"]))
        files = [write_csv(out_dir / "summary.csv", rows, SUMMARY_COLUMNS),
                 self.write_missing(cov, out_dir)]
        notes = missing_notes(cov.cells, lambda s: f"{s.scheme} N={s.option('flows')} "
                                                   f"{s.queue} RTT {s.option('rtt_ms')} ms")
        files += figures.draw_all(cov, rows, out_dir, notes, quick=cov.quick)
        return files

    @staticmethod
    def write_missing(cov: Coverage, out_dir: Path) -> Path:
        rows = [{"study": study_of(c.spec), "scheme": c.spec.scheme,
                 "flows": c.spec.option("flows"), "queue": c.spec.queue,
                 "rtt_ms": c.spec.option("rtt_ms"), "duration_s": c.spec.duration_s,
                 "trial": c.spec.trial, "reason": c.reason} for c in cov.missing()]
        return write_csv(out_dir / "missing.csv", rows, MISSING_COLUMNS)


def summary_row(spec: RunSpec, metrics: dict[str, Any], run: str) -> dict[str, Any]:
    """A run's row: its metrics, its study, the analysis's values, its parameters."""
    row = {**dict(spec.options), **dict(spec.params), **metrics}
    row.update(scheme=spec.scheme, trial=spec.trial, run=run, study=study_of(spec))
    row.update(theory(row))
    return row
