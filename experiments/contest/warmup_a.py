"""Contest warm-up A: a fixed window swept over the contest's training trace.

Set up like the contest: data crosses Verizon-LTE-short.down then 20 ms; ACKs
cross 20 ms then Verizon-LTE-short.up; infinite queue; the whole 140 s trace
once (`--once`). Quick mode plays the first 30 s of the trace for a few windows.
"""
from __future__ import annotations

from pathlib import Path

from analysis.fidelity import LATE_RULE
from analysis.omniscient import OmniscientResult, omniscient
from analysis.plotting import new_figure, readable_log_axis, reversed_log_delay_axis, save
from analysis.summary import finished_runs, latest_per_run, prefer_full_runs, write_csv
from core.results import ExperimentStore
from core.traces import TraceError, trace_duration_ms
from core.runspec import RunSpec, make_params
from experiments.base import Experiment
from experiments.contest.claims import WARMUP_A_CLAIMS

FULL_WINDOWS = (*range(1, 11), 15, 20, 25, 30, 35, 40, 45, 50, 75, 100, 125, 150, 175, 200,
                250, 350)
QUICK_WINDOWS = (1, 5, 10, 20, 50, 100)
QUICK_DURATION_S = 30.0
DATA_TRACE = "Verizon-LTE-short.down"
ACK_TRACE = "Verizon-LTE-short.up"
DELAY_MS = 20

COLUMNS = ["window", "trial", "throughput_mbps", "capacity_mbps", "utilization",
           "p95_queue_delay_ms", "p95_signal_delay_ms", "p95_e2e_delay_ms", "power", "score",
           "lateness_p99_us", "ack_lateness_p99_us", "lateness_ok", "cpu_steal_pct",
           "duration_s", "run"]


class ContestWarmupA(Experiment):
    name = "contest-warmup-a"
    title = "Contest warm-up A: fixed window sweep on Verizon-LTE-short"
    quick_note = f"windows {', '.join(map(str, QUICK_WINDOWS))}, first {QUICK_DURATION_S:g} s"
    claims = WARMUP_A_CLAIMS

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        windows = QUICK_WINDOWS if quick else FULL_WINDOWS
        duration = QUICK_DURATION_S if quick else None
        return [RunSpec(experiment=self.name, scheme="fixed-window", data_trace=DATA_TRACE,
                        ack_trace=ACK_TRACE, delay_ms=DELAY_MS, queue="infinite",
                        duration_s=duration, trial=t, params=make_params(window=w),
                        options=self.run_options())
                for t in range(1, trials + 1) for w in windows]

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        records = latest_per_run(prefer_full_runs(finished_runs(store)))
        records.sort(key=lambda r: (r.spec.param("window"), r.spec.trial))
        if not records:
            return []
        rows = []
        for r in records:
            row = dict(r.metrics)
            row.update(window=r.spec.param("window"), trial=r.spec.trial, run=r.path.name,
                       duration_s=r.meta.get("duration_s"))
            rows.append(row)
        files = [write_csv(out_dir / "summary.csv", rows, COLUMNS)]
        files += self._tradeoff_plot(rows, out_dir)
        files += self._power_plot(rows, out_dir)
        return files

    @staticmethod
    def _subtitle(rows: list[dict]) -> str:
        durations = {row.get("duration_s") for row in rows}
        known = sorted(d for d in durations if d)
        span = ("whole trace once" if len(durations) == 1 and known and known[0] > 100
                else "first %s s" % ", ".join(f"{d:g}" for d in known))
        return f"{DATA_TRACE} / {ACK_TRACE}, {DELAY_MS} ms each way, infinite queue, {span}"

    def _tradeoff_plot(self, rows: list[dict], out_dir: Path) -> list[Path]:
        fig, ax = new_figure()
        xs = [row["p95_signal_delay_ms"] for row in rows]
        ys = [row["throughput_mbps"] for row in rows]
        ax.plot(xs, ys, "o", color="tab:blue", label="fixed window (label: datagrams)")
        late = [(x, y) for row, x, y in zip(rows, xs, ys) if row.get("lateness_ok") is False]
        if late:
            ax.plot(*zip(*late), "o", markerfacecolor="white", markeredgecolor="tab:blue",
                    label=f"hollow: emulator late ({LATE_RULE}); "
                          "rerun with --redo-late")
        for row, x, y in zip(rows, xs, ys):
            ax.annotate(str(row["window"]), (x, y), textcoords="offset points", xytext=(4, 3),
                        fontsize=7)
        bound = self._omniscient(rows)
        if bound is not None:
            ax.plot([bound.p95_signal_delay_ms], [bound.throughput_mbps], "*", markersize=12,
                    color="tab:red", label="omniscient (the ceiling)")
        ax.legend(fontsize=7, loc="lower left")
        reversed_log_delay_axis(ax, "95th percentile signal delay (ms, log scale, reversed)")
        ax.set_ylabel("average throughput (Mbit/s)")
        ax.set_title(f"{self.title}\n{self._subtitle(rows)}", fontsize=9)
        return save(fig, out_dir, "throughput-vs-delay")

    def _omniscient(self, rows: list[dict]) -> OmniscientResult | None:
        """The omniscient protocol on the same trace span, or None if the trace is gone."""
        durations = {row.get("duration_s") for row in rows}
        if len(durations) != 1:
            return None
        duration = durations.pop()
        try:
            trace = self.traces.resolve(DATA_TRACE)
        except TraceError:
            return None
        if duration is None or duration * 1000 >= trace_duration_ms(trace):
            return omniscient(trace, DELAY_MS, None)
        return omniscient(trace, DELAY_MS, int(duration * 1000))

    def _power_plot(self, rows: list[dict], out_dir: Path) -> list[Path]:
        fig, ax = new_figure()
        ax.plot([row["window"] for row in rows], [row["power"] for row in rows], "o-",
                color="tab:green")
        ax.set_xscale("log")
        readable_log_axis(ax.xaxis)
        ax.set_xlabel("window (datagrams)")
        ax.set_ylabel("power (Mbit/s per second of p95 signal delay)")
        ax.set_title(f"Power vs window\n{self._subtitle(rows)}", fontsize=9)
        return save(fig, out_dir, "power-vs-window")
