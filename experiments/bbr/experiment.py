"""BBR: Congestion-Based Congestion Control (ACM Queue 2016): its one-machine figures, with
Linux's built-in BBR (v1, the paper's algorithm) against Cubic.

Runs of two kinds, each logging every packet at the bottleneck and sampling the sender's
sockets (the kernel's own record of BBR's state, kernel/socket_samples.py):

- the trace path (runkinds/trace_path/): one flow through netrepro-link at a fixed rate,
  - `startup`: 10 Mbit/s, 40 ms, a 150-packet buffer (4.5 BDP, as [R2]'s two-VM set-up),
    BBR for 30 s (its first second is Fig. 4, its first 8 s Fig. 5, its steady state Fig. 2)
    and Cubic for 10 s (Figs. 4 and 5);
  - `step`: BBR at 10 Mbit/s doubling to 20 at 20 s and back to 10 at 40 s (the link's own
    rate steps), 60 s, 200 packets (Fig. 3);
  - `loss`: BBR and Cubic for 60 s at 100 Mbit/s, 100 ms, 2 BDP of buffer (1662 packets),
    random loss after the data direction's queue from 0.001% to 50% (Fig. 8);
- the shared bottleneck (runkinds/shared_bottleneck/): `convergence`, five BBR flows from
  five hosts joining 2 s apart at 100 Mbit/s, 10 ms, 1024 packets, 50 s each (Fig. 6).

A run counts only when it measured the path (`invalid_reason`): its emulator and its end
hosts on time (p99 lateness within 2 ms), no flow held back by its windows, 95% of the
link's backlogged departures within 10% of their schedule, 30% of the CPUs idle.

`--quick`: the startup pair, the steps 10 s apart (30 s), and BBR and Cubic at three losses
for 20 s each. A run at 100 Mbit/s takes the whole pool (runkinds/trace_path/kind.py).
Docs: docs/bbr.md.
"""
from __future__ import annotations

import logging
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
from experiments.bbr import figures, model, rows
from experiments.bbr.claims import CLAIMS
from experiments.bbr.studies import study_of
from kernel import tcp_buffers
from kernel.socket_samples import OPTION as SOCKET_SAMPLE_MS
from runkinds.registry import SHARED_BOTTLENECK
from topologies import queue_log

log = logging.getLogger(__name__)

# Figs 2-5: the paper's path.
RATE_MBPS = 10
RTT_MS = 40
STARTUP_BUFFER = 150
BBR_STARTUP_S = 30.0
CUBIC_STARTUP_S = 10.0
SAMPLE_MS = 10
# Fig 3.
STEP_BUFFER = 200
STEPS = "20:20,40:10"
STEP_S = 60.0
QUICK_STEPS = "10:20,20:10"  # the same steps 10 s apart: 10 s of steady state is 30 cycles
QUICK_STEP_S = 30.0
# Figs 6 and 8's rate: the paper's 100 Mbit/s, or the spec's fallback (its A.3) for an
# emulator that cannot hold 100 on this machine: 50 Mbit/s, Fig 6 at 20 ms (the same BDP,
# 83 packets), Fig 8 at 100 ms.
PAPER_MBPS = 100
FALLBACK_MBPS = 50
OPTIONS: tuple[Setting, ...] = (
    Setting("fast_mbps", int, "Figs. 6 and 8's link rate: 100 (the paper's) or 50 (the "
            "spec's fallback: Fig. 6 at 20 ms, the same BDP; Fig. 8 at 100 ms)",
            default=PAPER_MBPS, choices=(PAPER_MBPS, FALLBACK_MBPS)),
)
# Fig 6.
CONVERGENCE_BDP_MS_MBPS = 1000  # RTT x rate: 10 ms at 100 Mbit/s, 20 ms at 50
CONVERGENCE_FLOWS = 5
CONVERGENCE_INTERVAL_S = 2.0
CONVERGENCE_BUFFER = 1024
CONVERGENCE_S = 50.0
CONVERGENCE_WARMUP_S = 2.0
CONVERGENCE_SAMPLE_MS = 20
# Fig 8.
LOSS_RTT_MS = 100
LOSS_S = 60.0
LOSS_SAMPLE_MS = 100
LOSSES = (0.00001, 0.0001, 0.001, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
QUICK_LOSSES = (0.00001, 0.001, 0.01)  # CUBIC's cliff and stall, BBR at the limit
QUICK_LOSS_S = 20.0
# Validity (docs/bbr.md, "Which runs count").
GAPS_WITHIN_SCHEDULE_MIN = 0.95
CPU_IDLE_MIN_PCT = 30.0

SUMMARY_COLUMNS = [
    "study", "scheme", "loss", "trial", "duration_s", "buffer_packets", "goodput_mbps",
    "model_mbps", "measured_loss", "startup_exit_s", "startup_peak_queue",
    "startup_peak_queue_bdp", "queue_at_1s", "queue_at_1s_bdp", "queue_slope_at_1s",
    "queue_delay_median_ms", "queue_delay_p95_ms", "rtt_median_ms", "queue_in_band_share",
    "window_drops", "cycle_period_ms", "cycles", "probe_bump_ms", "probe_bump_min_ms",
    "probe_bump_max_ms", "drained_share", "delivery_within_5pct_share", "delivery_min_mbps",
    "delivery_max_mbps", "up_step_s", "down_step_s", "bw_estimate_up_s", "bw_estimate_down_s",
    "step_drops", "mean_after_up_mbps", "mean_after_down_mbps", "jain_after_10s_median",
    "jain_last_20s_mean", "aggregate_share", "probe_rtt_joint_events",
    "probe_rtt_unjoint_after_first", "probe_rtt_interval_dev_s", "queue_p95", "queue_max",
    "gaps_within", "lateness_p99_us", "host_timing_ok", "cpu_idle_pct", "window_limited_max_pct",
    "cc_used", "cc_provider", "startup_end_s", "startup_last_rtt_ms", "cruise_inflight_median",
    "cruise_queue_median", "probe_rise_ms", "down_step_first_low_s", "rtt_low_share_before_up",
    "rtt_held_before_up", "goodput_span_s", "mathis_mbps", "run"]
MISSING_COLUMNS = ["study", "scheme", "loss", "duration_s", "trial", "reason"]


def _alone_unless(quick: bool) -> dict[str, bool]:
    """Figs. 2-5's 10-Mbit/s runs take the whole pool in the full pass: three side by side
    kept 67-79% of their departure gaps within 10%, one alone 94.7-96.2% the same hour
    (docs/bbr.md). The quick pass keeps them sharing: alone they would add ~1.5 minutes."""
    return {} if quick else {"alone": True}  # core/run_kind.py's ALONE_OPTION


class Bbr(Experiment):
    name = "bbr"
    title = ("BBR: Congestion-Based Congestion Control (ACM Queue 2016): startup and drain, "
             "gain cycling, a rate step, flows converging, goodput against random loss")
    quick_note = ("the startup pair (BBR 30 s, Cubic 10 s), the rate steps 10 s apart, and "
                  "three losses for 20 s each")
    claims = CLAIMS
    options = OPTIONS
    compared_metrics = ("goodput_mbps", "startup_end_s", "cruise_inflight_median",
                        "cruise_queue_median", "probe_rise_ms", "bw_estimate_down_s",
                        "gaps_within", "cpu_idle_pct")
    headline = ("fig4-startup",)
    headline_caption = ("Fig. 4: the first second at 10 Mbit/s, 40 ms: BBR's Startup queue "
                        "drained by Drain, CUBIC's still growing (grey: the kernel's BBR state "
                        "changes)")

    def __init__(self, traces: TraceSet | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        # No trace is read: every link is a fixed rate.
        super().__init__(traces or TraceSet([], Path("/nonexistent"), manifest={}), options)

    # ------------------------------------------------------------------ the matrix

    def startup_spec(self, scheme: str, trial: int, quick: bool = False) -> RunSpec:
        rate = f"rate:{RATE_MBPS}"
        return RunSpec(experiment=self.name, scheme=scheme, data_trace=rate, ack_trace=rate,
                       delay_ms=RTT_MS // 2, queue=f"droptail:packets={STARTUP_BUFFER}",
                       duration_s=BBR_STARTUP_S if scheme == "bbr" else CUBIC_STARTUP_S,
                       trial=trial, options=make_params(**{queue_log.OPTION: True,
                                                           SOCKET_SAMPLE_MS: SAMPLE_MS},
                                                        **_alone_unless(quick)))

    def step_spec(self, trial: int, quick: bool = False) -> RunSpec:
        rate = f"rate:{RATE_MBPS}"
        return RunSpec(experiment=self.name, scheme="bbr", data_trace=rate, ack_trace=rate,
                       delay_ms=RTT_MS // 2, queue=f"droptail:packets={STEP_BUFFER}",
                       duration_s=QUICK_STEP_S if quick else STEP_S, trial=trial,
                       options=make_params(rate_steps=QUICK_STEPS if quick else STEPS,
                                           **{queue_log.OPTION: True,
                                              SOCKET_SAMPLE_MS: SAMPLE_MS},
                                           **_alone_unless(quick)))

    @property
    def fast_mbps(self) -> int:
        return int(self.chosen["fast_mbps"])

    def loss_spec(self, scheme: str, loss: float, duration_s: float, trial: int) -> RunSpec:
        rate = f"rate:{self.fast_mbps}"
        buffer = round(2 * model.bdp_packets(self.fast_mbps, LOSS_RTT_MS))  # 1662 at 100
        return RunSpec(experiment=self.name, scheme=scheme, data_trace=rate, ack_trace=rate,
                       delay_ms=LOSS_RTT_MS // 2, queue=f"droptail:packets={buffer}",
                       duration_s=duration_s, trial=trial,
                       options=make_params(loss=loss, **{queue_log.OPTION: True,
                                                         SOCKET_SAMPLE_MS: LOSS_SAMPLE_MS,
                                                         # Heavy loss stalls autotuning: the
                                                         # window, not the path, held BBR back.
                                                         tcp_buffers.OPTION:
                                                             tcp_buffers.WIDE_START}))

    def convergence_spec(self, trial: int) -> RunSpec:
        rate = f"rate:{self.fast_mbps}"
        rtt_ms = CONVERGENCE_BDP_MS_MBPS // self.fast_mbps
        return RunSpec(experiment=self.name, scheme="bbr", data_trace=rate, ack_trace=rate,
                       delay_ms=rtt_ms // 2,
                       queue=f"droptail:packets={CONVERGENCE_BUFFER}", duration_s=CONVERGENCE_S,
                       trial=trial,
                       options=make_params(topology=SHARED_BOTTLENECK.name,
                                           flows=CONVERGENCE_FLOWS, rtt_ms=rtt_ms,
                                           buffer=CONVERGENCE_BUFFER, marking="emulator",
                                           warmup_s=CONVERGENCE_WARMUP_S,
                                           start_interval_s=CONVERGENCE_INTERVAL_S,
                                           socket_sample_ms=CONVERGENCE_SAMPLE_MS,
                                           # Measured: 66-69% of gaps within 10% unplaced,
                                           # 82-83% placed (docs/bbr.md).
                                           cpu_placement=True))

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        specs: list[RunSpec] = []
        for t in range(1, trials + 1):
            specs += [self.startup_spec("bbr", t, quick), self.startup_spec("cubic", t, quick),
                      self.step_spec(t, quick)]
            losses, duration = (QUICK_LOSSES, QUICK_LOSS_S) if quick else (LOSSES, LOSS_S)
            specs += [self.loss_spec(s, p, duration, t) for p in losses
                      for s in ("bbr", "cubic")]
            if not quick:
                specs.append(self.convergence_spec(t))
        return specs

    # ------------------------------------------------------------------ validity

    def invalid_reason(self, record: RunRecord) -> str:
        """The platform's rules (an absurd kernel window, flows held back by their windows),
        then the fidelity guard: a late emulator or late end hosts, the link's departures
        off their schedule, a machine without idle time."""
        why = record.invalid
        if why:
            return why
        m = record.metrics
        ok = m.get("lateness_ok")
        if ok is None:
            ok = lateness_ok(record.meta.get("link"))
        if ok is False:
            return (f"the emulator was late ({late_reason(m) or LATE_RULE}): "
                    "no measurement of the path")
        if hosts_late(m):
            return "the end hosts were late (p99 over 2 ms): no measurement of the path"
        gaps = rows.gaps_within(m)
        if gaps is not None and gaps < GAPS_WITHIN_SCHEDULE_MIN:
            return (f"{100 * gaps:.1f}% of the link's backlogged departures within 10% of "
                    f"their schedule (under {100 * GAPS_WITHIN_SCHEDULE_MIN:g}%)")
        idle = record.meta.get("cpu_idle_pct")
        if idle is not None and idle < CPU_IDLE_MIN_PCT:
            return (f"the machine had {idle:.0f}% of its CPU time idle (under "
                    f"{CPU_IDLE_MIN_PCT:g}%): it measured the machine as much as the path")
        return ""

    # ------------------------------------------------------------------ rows and figures

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        runs = [rows.run_row(r) for r in cov.records()]
        return runs + rows.derived_rows(runs)

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        cov = self.coverage(store)
        if all(not c.done and c.reason == "not run yet" for c in cov.cells):
            return []
        claim_rows = self.claim_rows(cov)
        runs = sorted((r for r in claim_rows if r.get("run")),
                      key=lambda r: (r["study"], r["scheme"], r.get("loss") or 0, r["trial"]))
        derived = [r for r in claim_rows if not r.get("run")]
        files = [write_csv(out_dir / "summary.csv", runs, SUMMARY_COLUMNS),
                 self.write_missing(cov, out_dir)]
        files += rows.write_tables(runs, derived, out_dir)
        notes = missing_notes(cov.cells, lambda s: f"{study_of(s)} {s.scheme}"
                                                   + (f" loss {s.option('loss'):g}"
                                                      if s.option("loss") is not None else ""))
        files += figures.draw_all(cov, runs, derived, out_dir, notes)
        return files

    @staticmethod
    def write_missing(cov: Coverage, out_dir: Path) -> Path:
        found = [{"study": study_of(c.spec), "scheme": c.spec.scheme,
                  "loss": c.spec.option("loss"), "duration_s": c.spec.duration_s,
                  "trial": c.spec.trial, "reason": c.reason} for c in cov.missing()]
        return write_csv(out_dir / "missing.csv", found, MISSING_COLUMNS)
