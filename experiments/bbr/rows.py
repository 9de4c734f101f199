"""The BBR experiment's rows: one per finished run (its metrics and what derive.py measures
of its figure), and rows derived across runs (Fig 5's RTT ratio, Fig 8's table, Fig 6's
fairness over time), from which the claims are judged and the tables written."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

from analysis.socket_samples import data_connection
from analysis.summary import RunRecord, write_csv
from core.queue_spec import parse_queue
from experiments.bbr import derive, model
from experiments.bbr.series import FlowRun, departure_rate, load_flow
from experiments.bbr.studies import CONVERGENCE, LOSS, STARTUP, STEP, study_of
from topologies.link_conditions import parse_rate_steps

log = logging.getLogger(__name__)

FIG5 = "fig5"
FIG8 = "fig8"
FIG8_COLUMNS = ["loss", "loss_pct", "bbr_goodput_mbps", "cubic_goodput_mbps", "model_mbps",
                "bbr_over_model", "bbr_over_cubic", "runs"]
FAIRNESS_COLUMNS = ["time_s", "jain", "flow_mbps", "run"]
END_MARGIN_S = 1.0  # a run's last second is left out of steady-state measures


def gaps_within(metrics: Mapping[str, Any]) -> float | None:
    """The share of the link's backlogged departures within 10% of their schedule: the
    trace path's (against each gap's schedule) or the shared bottleneck's (against the
    ideal link's, which at a fixed rate is the schedule)."""
    value = metrics.get("gaps_within_10pct_of_schedule")
    if value is None:
        value = metrics.get("gaps_within_10pct")
    return None if value is None else float(value)


def rate_of(spec_trace: str) -> float:
    return float(spec_trace.removeprefix("rate:"))


def run_row(record: RunRecord) -> dict[str, Any]:
    spec, m = record.spec, dict(record.metrics)
    study = study_of(spec)
    rate = rate_of(spec.data_trace)
    rtt = float(spec.option("rtt_ms", 2 * spec.delay_ms))
    buffer = parse_queue(spec.queue).packets or 0
    row: dict[str, Any] = {**m, "study": study, "scheme": spec.scheme, "trial": spec.trial,
                           "run": record.path.name, "loss": spec.option("loss"),
                           "duration_s": spec.duration_s, "buffer_packets": buffer,
                           "rate_mbps": rate, "rtt_ms": rtt, "gaps_within": gaps_within(m),
                           "cpu_idle_pct": record.meta.get("cpu_idle_pct")}
    try:
        row.update(_measured(record, study, rate, rtt, buffer))
    except (OSError, ValueError, KeyError) as e:
        log.warning("%s: its figure's measures cannot be read: %s: %s", record.path.name,
                    type(e).__name__, e)
    return row


def _measured(record: RunRecord, study: str, rate: float, rtt: float,
              buffer: int) -> dict[str, Any]:
    spec = record.spec
    interval_s = float(spec.option("socket_sample_ms", 10)) / 1000.0
    if study == LOSS:
        return _loss(record, float(spec.option("loss")), rate)
    if study == CONVERGENCE:
        return _convergence(record, rate, rtt)
    run = load_flow(record)
    end_s = float(spec.duration_s or 0)
    if study == STEP:
        steps = [(at / 1000.0, r) for at, r in parse_rate_steps(str(spec.option("rate_steps")))]
        return derive.step_response(run, rate, steps, end_s)
    out = derive.startup(run, model.bdp_packets(rate, rtt))
    late = derive.first_seconds(run, buffer, from_s=2.0)
    out.update(rtt_median_ms=late["rtt_median_ms"], queue_in_band_share=late[
        "queue_in_band_share"], window_drops=late["window_drops"])
    early = derive.first_seconds(run, buffer, from_s=1.0)
    out.update(queue_delay_median_ms=early["queue_delay_median_ms"],
               queue_delay_p95_ms=early["queue_delay_p95_ms"])
    if spec.scheme == "bbr":
        out.update(derive.gain_cycle(run, rate, interval_s, _end_s(run, end_s)))
    return out


def _end_s(run: FlowRun, duration_s: float) -> float:
    """Steady-state measures end a second before the flow does."""
    start = run.t0_s or 0.0
    return start + duration_s - END_MARGIN_S


def _loss(record: RunRecord, loss: float, rate: float) -> dict[str, Any]:
    """Goodput (derive.goodput) from the data connection's sampled bytes_acked, up to the
    link's end: its start plus the run's span, on the same monotonic clock as the samples.
    iperf3 is stopped after the span's end, so it writes no report of its own to read."""
    verification = record.meta.get("verification") or {}
    samples = data_connection(record.path, verification.get("data_port"))
    if samples is None or len(samples) < 2:
        raise ValueError("no socket samples of the data connection")
    link = record.meta.get("link") or {}
    span_ms = (record.meta.get("span") or {}).get("span_ms")
    if link.get("start_ms") is None or not span_ms:
        raise ValueError("no link start or span in meta.json to end the goodput at")
    link_end_s = (float(link["start_ms"]) + float(span_ms)) / 1000.0
    out: dict[str, Any] = derive.goodput(samples.time_s, samples["bytes_acked"], link_end_s)
    stats = (link.get("a2b") or {}).get("loss") or {}
    draws = stats.get("draws") or 0
    out.update({"model_mbps": model.loss_limit_mbps(loss, rate),
                "measured_loss": stats.get("lost", 0) / draws if draws else None,
                "mathis_mbps": model.mathis_mbps(loss, 2 * record.spec.delay_ms)})
    return out


def _convergence(record: RunRecord, rate: float, rtt: float) -> dict[str, Any]:
    flows = (record.meta.get("verification") or {}).get("flows") or []
    runs = [load_flow(record, record.path / str(f["folder"]), f.get("client_port"), rtt)
            for f in flows]
    if not runs or any(r.samples is None for r in runs):
        raise ValueError("a flow without socket samples")
    base = runs[0].base_s
    starts = [float(f["started_s"]) - base for f in flows]
    first_end = min(starts) + float(record.spec.duration_s or 0)
    agg = departure_rate(runs[0].queue, 0.0, first_end, derive.FAIR_BIN_S)
    return derive.convergence(agg, [r.samples for r in runs if r.samples is not None],
                              [r.phases for r in runs], starts, first_end, base, rate, rtt)


# ------------------------------------------------------------------ rows across runs

def derived_rows(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return fig5_rows(runs) + fig8_rows(runs)


def fig5_rows(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per trial: CUBIC's median RTT over BBR's, over [2, 8] s after each one's SYN."""
    out = []
    startup = [r for r in runs if r["study"] == STARTUP]
    for trial in sorted({r["trial"] for r in startup}):
        pair = {r["scheme"]: r for r in startup if r["trial"] == trial}
        bbr, cubic = pair.get("bbr"), pair.get("cubic")
        if bbr and cubic and bbr.get("rtt_median_ms") and cubic.get("rtt_median_ms"):
            out.append({"study": FIG5, "trial": trial, "scheme": "cubic/bbr",
                        "rtt_ratio": cubic["rtt_median_ms"] / bbr["rtt_median_ms"],
                        "runs": f"{bbr['run']} {cubic['run']}",
                        "late_trials": sum(1 for r in (bbr, cubic)
                                           if r.get("lateness_ok") is False)})
    return out


def fig8_rows(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Fig 8's table: per loss, BBR's and CUBIC's goodput (medians over trials), the model."""
    out = []
    loss_runs = [r for r in runs if r["study"] == LOSS and r.get("goodput_mbps") is not None]
    for loss in sorted({float(r["loss"]) for r in loss_runs}):
        at = [r for r in loss_runs if float(r["loss"]) == loss]
        row: dict[str, Any] = {"study": FIG8, "loss": loss, "loss_pct": 100 * loss,
                               "model_mbps": at[0]["model_mbps"],
                               "runs": " ".join(r["run"] for r in at)}
        for scheme in ("bbr", "cubic"):
            values = sorted(float(r["goodput_mbps"]) for r in at if r["scheme"] == scheme)
            row[f"{scheme}_goodput_mbps"] = values[len(values) // 2] if values else None
        if row["bbr_goodput_mbps"] is not None:
            row["bbr_over_model"] = row["bbr_goodput_mbps"] / row["model_mbps"]
            if row["cubic_goodput_mbps"]:
                row["bbr_over_cubic"] = row["bbr_goodput_mbps"] / row["cubic_goodput_mbps"]
        out.append(row)
    return out


def write_tables(runs: Sequence[Mapping[str, Any]], derived: Sequence[Mapping[str, Any]],
                 out_dir: Path) -> list[Path]:
    """fig8-table.csv and .md; fig6-fairness.csv (Jain's index and each flow per second)."""
    files = []
    table = [dict(r) for r in derived if r["study"] == FIG8]
    if table:
        files.append(write_csv(out_dir / "fig8-table.csv", table, FIG8_COLUMNS))
        files.append(_fig8_markdown(table, out_dir / "fig8-table.md"))
    fair = []
    for r in runs:
        if r["study"] == CONVERGENCE and r.get("jain_bins"):
            for t, j, *flows in zip(r["bin_starts_s"], r["jain_bins"], *r["flow_rates_mbps"]):
                fair.append({"time_s": t, "jain": j, "run": r["run"],
                             "flow_mbps": " ".join(f"{f:.2f}" for f in flows)})
    if fair:
        files.append(write_csv(out_dir / "fig6-fairness.csv", fair, FAIRNESS_COLUMNS))
    return files


def _fig8_markdown(table: list[dict[str, Any]], path: Path) -> Path:
    def cell(value: Any, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"
    lines = ["| loss | BBR goodput (Mbit/s) | CUBIC goodput (Mbit/s) | (1 - p) x C (Mbit/s) |",
             "|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['loss_pct']:g}% | {cell(r.get('bbr_goodput_mbps'))} | "
                     f"{cell(r.get('cubic_goodput_mbps'))} | {cell(r['model_mbps'], 3)} |")
    path.write_text("\n".join(lines) + "\n")
    return path
