"""The contest's leaderboard, one board per trace, from the artifacts in results/contest.

Rows, ordered by score (ln throughput - ln 95% end-to-end delay, higher is better):

- the omniscient protocol on the trace (every delivery opportunity used, 20 ms
  per packet: analysis/omniscient.py), always on top: it is the ceiling;
- baselines: every finished run of a shipped scheme (Sprout, the contest
  controllers) on the contest path of the trace (data over <trace>.down then
  20 ms, ACKs over <trace>.up, infinite queue, the whole trace once), the best
  trial per scheme and parameters;
- submissions (submissions/<team>/<time>-<hash>/submission.json): the newest of
  each team, ranked by its best trial; a submission with no scored trial is
  listed below the ranked rows with its reason and no score (never a score
  computed from nothing). Older submissions of a team stay on disk.

A trial whose emulator was late (p99 lateness over the limit: analysis/fidelity.py) is
not a faithful measurement: the best trial is taken from the timely ones when there are
any, and a row whose best trial was late says so and asks for a rerun.

Every row that ran links to its two views (experiments/contest/views.py) and its run
folder; a submission's row links its sources only when the teacher published
them (experiments/contest/published_sources.py). Written: leaderboard.html (every
board), leaderboard.csv (every row, with its trace) and leaderboard-<trace>.csv.
"""
from __future__ import annotations

import html
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from experiments.contest.views import VIEW_STEMS, plot_run_views
from analysis.omniscient import OmniscientResult, omniscient
from experiments.contest.published_sources import FOLDER, is_published, publish
from analysis.scheme_labels import display_name
from analysis.summary import RunRecord, finished_runs, write_csv
from analysis.fidelity import emulator_late, late_reason
from core.results import ExperimentStore, read_json
from schemes.submission.untrusted_text import name as shown_name, reason as shown_reason

log = logging.getLogger(__name__)
T = TypeVar("T")

# A failed submission's reason on a board and in its CSVs: its text is the submission's own
# (its error output), so it is escaped and cut again here, whatever a record on disk holds.
BOARD_REASON_CHARS = 500

CONTEST_DELAY_MS = 20
SUBMISSION_SCHEME = "submission"
METRICS = ("score", "throughput_mbps", "p95_e2e_delay_ms", "p95_signal_delay_ms", "power",
           "utilization", "lateness_p99_us", "ack_lateness_p99_us", "lateness_ok")
COLUMNS = ["trace", "role", "rank", "kind", "name", "score", "throughput_mbps",
           "p95_e2e_delay_ms", "p95_signal_delay_ms", "power", "utilization", "trials_scored",
           "trials", "status", "reason", "submitted_at", "source_hash", "run",
           "lateness_p99_us", "ack_lateness_p99_us", "lateness_ok", "throughput_plot",
           "delay_plot"]


@dataclass(frozen=True)
class BoardTrace:
    """One board: the trace's base name (its .down carries the data), a role if it has one
    (training, validation, testing), and the .down file for the omniscient row."""

    name: str
    role: str | None = None
    data_path: Path | None = None

    @property
    def title(self) -> str:
        return f"{self.name} ({self.role})" if self.role else self.name


@dataclass
class BoardEntry:
    kind: str  # omniscient | baseline | submission
    name: str
    metrics: dict[str, Any] = field(default_factory=dict)
    status: str = "scored"  # scored | failed
    reason: str = ""
    trials_scored: int = 0
    trials: int = 0
    submitted_at: str = ""
    source_hash: str = ""
    run: str = ""  # run folder, relative to the contest results folder
    plots: dict[str, str] = field(default_factory=dict)  # view -> png, relative
    extra_links: dict[str, str] = field(default_factory=dict)  # label -> relative path
    rank: int | None = None

    @property
    def score(self) -> float | None:
        value = self.metrics.get("score")
        return float(value) if isinstance(value, (int, float)) else None

    def row(self, trace: BoardTrace) -> dict[str, Any]:
        row: dict[str, Any] = {k: self.metrics.get(k) for k in METRICS}
        row.update(trace=trace.name, role=trace.role or "", rank=self.rank, kind=self.kind,
                   name=self.name, trials_scored=self.trials_scored, trials=self.trials,
                   status=self.status, reason=self.reason, submitted_at=self.submitted_at,
                   source_hash=self.source_hash, run=self.run,
                   throughput_plot=self.plots.get("throughput", ""),
                   delay_plot=self.plots.get("delay", ""))
        return row


def is_contest_run(record: RunRecord, trace: str) -> bool:
    s = record.spec
    return (s.once and s.delay_ms == CONTEST_DELAY_MS and s.queue == "infinite"
            and s.data_trace == f"{trace}.down" and s.ack_trace == f"{trace}.up")


def baseline_name(record: RunRecord) -> str:
    params = ", ".join(f"{k}={v}" for k, v in record.spec.params)
    name = display_name(record.spec.scheme)
    return f"{name} ({params})" if params else name


def _views(root: Path, record: RunRecord, title: str) -> dict[str, str]:
    """The run's two views (drawn when missing), relative to root."""
    out = root / "plots" / record.path.name
    if not all((out / f"{stem}.png").is_file() for stem in VIEW_STEMS):
        try:
            plot_run_views(record.path, out, record.spec.delay_ms, title)
        except Exception as e:  # a view that cannot be drawn must not hide the row
            log.warning("no views for %s: %s", record.path.name, e)
            return {}
    return {stem: os.path.relpath(out / f"{stem}.png", root) for stem in VIEW_STEMS}


def best_trial(trials: Sequence[T], metrics: Callable[[T], Mapping[str, Any]]) -> T | None:
    """The highest-scoring trial, among the timely ones when any trial was timely."""
    scored = [t for t in trials if isinstance(metrics(t).get("score"), (int, float))]
    timely = [t for t in scored if not emulator_late(metrics(t))]
    pool = timely or scored
    return max(pool, key=lambda t: metrics(t)["score"]) if pool else None


def late_text(metrics: Mapping[str, Any]) -> str:
    """What to tell of a late trial, '' for a timely one."""
    if not emulator_late(metrics):
        return ""
    return f"emulator late ({late_reason(metrics)}): not a faithful measurement, rerun it"


def _best(records: list[RunRecord]) -> RunRecord | None:
    return best_trial(records, lambda r: r.metrics)


def baseline_entries(root: Path, records: list[RunRecord], trace: BoardTrace
                     ) -> list[BoardEntry]:
    groups: dict[tuple[str, tuple], list[RunRecord]] = {}
    for r in records:
        if r.spec.scheme != SUBMISSION_SCHEME and is_contest_run(r, trace.name):
            groups.setdefault((r.spec.scheme, r.spec.params), []).append(r)
    entries = []
    for group in groups.values():
        best = _best(group)
        if best is None:
            continue
        name = baseline_name(best)
        entries.append(BoardEntry(
            "baseline", name, dict(best.metrics), trials_scored=len(group), trials=len(group),
            run=os.path.relpath(best.path, root),
            plots=_views(root, best, f"{name} on {trace.name}, trial {best.spec.trial}")))
    return entries


def submission_records(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(folder, submission.json) of every submission on record."""
    found = []
    for path in sorted((root / "submissions").glob("*/*/submission.json")):
        try:
            found.append((path.parent, read_json(path)))
        except (OSError, ValueError) as e:
            log.warning("unreadable %s: %s", path, e)
    return found


def submission_entries(root: Path, records: list[RunRecord], trace: BoardTrace
                       ) -> list[BoardEntry]:
    """The newest submission of each team on this trace."""
    newest: dict[str, tuple[Path, dict[str, Any]]] = {}
    older: dict[str, int] = {}
    for folder, sub in submission_records(root):
        if sub.get("trace") != trace.name:
            continue
        team = str(sub.get("team", folder.parent.name))
        if team in newest:
            older[team] = older.get(team, 0) + 1
        if team not in newest or sub.get("submitted_unix", 0) > newest[team][1].get(
                "submitted_unix", 0):
            newest[team] = (folder, sub)
    by_dir = {r.path.name: r for r in records}
    entries = []
    for team, (folder, sub) in newest.items():
        trials = sub.get("trials", [])
        runs = [by_dir[Path(t["run"]).name] for t in trials
                if t.get("ok") and Path(t.get("run", "")).name in by_dir]
        best = _best(runs)
        # The sources only when the teacher published them (published_sources.py).
        published = is_published(root)
        links = {"sources": publish(root, team, folder)} if published else {}
        for r in runs:
            if r is not best:
                views = _views(root, r, f"{team} on {trace.name}, trial {r.spec.trial}")
                if "throughput" in views:
                    links[f"trial {r.spec.trial}"] = views["throughput"]
        if older.get(team) and published:
            for other, sub_other in submission_records(root):
                if sub_other.get("team", other.parent.name) == team:
                    publish(root, team, other)
            links["history"] = os.path.relpath(root / FOLDER / team, root)
        entry = BoardEntry(
            "submission", shown_name(team), status="scored" if best else "failed",
            reason="" if best else shown_reason(str(sub.get("reason") or _trial_reasons(trials)),
                                                BOARD_REASON_CHARS),
            trials_scored=len(runs), trials=int(sub.get("trials_requested", len(trials))),
            submitted_at=shown_name(sub.get("submitted_at", ""), 40),
            source_hash=shown_name(sub.get("source_hash", ""), 64), extra_links=links)
        if best is not None:
            entry.metrics = dict(best.metrics)
            entry.run = os.path.relpath(best.path, root)
            entry.plots = _views(root, best, f"{team} on {trace.name}, best of "
                                 f"{entry.trials} (trial {best.spec.trial})")
        entries.append(entry)
    return entries


def _trial_reasons(trials: list[dict[str, Any]]) -> str:
    reasons = sorted({shown_reason(str(t.get("reason", "")), BOARD_REASON_CHARS)
                      for t in trials if not t.get("ok")} - {""})
    return "; ".join(reasons) or "no trial finished"


def omniscient_entry(trace: BoardTrace) -> BoardEntry | None:
    if trace.data_path is None or not trace.data_path.is_file():
        return None
    o: OmniscientResult = omniscient(trace.data_path, CONTEST_DELAY_MS)
    return BoardEntry("omniscient", "omniscient (every opportunity, 20 ms per packet)",
                      {"score": o.score, "throughput_mbps": o.throughput_mbps,
                       "p95_e2e_delay_ms": o.p95_e2e_delay_ms,
                       "p95_signal_delay_ms": o.p95_signal_delay_ms,
                       "power": (o.throughput_mbps / (o.p95_signal_delay_ms / 1000.0)
                                 if o.p95_signal_delay_ms > 0 else None),
                       "utilization": 1.0}, trials_scored=1, trials=1)


def board(root: Path, trace: BoardTrace, records: list[RunRecord] | None = None
          ) -> list[BoardEntry]:
    """The rows of one board, in order: omniscient, then by score, then failed entries."""
    if records is None:
        records = finished_runs(ExperimentStore(root))
    ranked = [e for e in baseline_entries(root, records, trace)
              + submission_entries(root, records, trace)]
    scored = sorted((e for e in ranked if e.score is not None), key=lambda e: -(e.score or 0.0))
    failed = sorted((e for e in ranked if e.score is None), key=lambda e: e.name)
    top = omniscient_entry(trace)
    rows = ([top] if top else []) + scored + failed
    rank = 0
    for e in rows:
        if e.kind != "omniscient" and e.score is not None:
            rank += 1
            e.rank = rank
    return rows


def write_leaderboards(root: Path, traces: list[BoardTrace]) -> list[Path]:
    """leaderboard.html, leaderboard.csv and one CSV per trace; the files written."""
    root.mkdir(parents=True, exist_ok=True)
    records = finished_runs(ExperimentStore(root))
    boards = [(t, board(root, t, records)) for t in traces]
    boards = [(t, rows) for t, rows in boards if len(rows) > 1 or any(
        r.kind != "omniscient" for r in rows)]
    files = []
    every_row = []
    for t, rows in boards:
        table = [e.row(t) for e in rows]
        every_row += table
        files.append(write_csv(root / f"leaderboard-{t.name}.csv", table, COLUMNS))
    files.append(write_csv(root / "leaderboard.csv", every_row, COLUMNS))
    page = root / "leaderboard.html"
    page.write_text(render_html(boards))
    files.append(page)
    return files


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or value == "":
        return "&mdash;"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def _link(href: str, text: str) -> str:
    return f'<a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>'


def render_html(boards: list[tuple[BoardTrace, list[BoardEntry]]]) -> str:
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>netrepro contest leaderboard</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
             "td.name,th.name{text-align:left}tr.omniscient{background:#eef}"
             "tr.failed{color:#a00}tr.baseline{background:#f6f6f6}.late{color:#a60}"
             "</style></head><body>",
             "<h1>Congestion-control contest: leaderboard</h1>",
             "<p>Score = ln(throughput in Mbit/s) &minus; ln(95% end-to-end delay in ms), "
             "higher is better; a submission is ranked by the best of its trials (of its "
             "timely ones, when a trial's emulator was late). The "
             "contest path: data over the trace's .down then 20 ms, ACKs over 20 ms then "
             ".up, infinite queue (a submission's: infinite up to 64 MiB, far above what "
             "its window can queue), the whole trace once. See docs/contest.md.</p>"]
    if not boards:
        parts.append("<p>No contest runs yet: <code>./repro run contest</code> runs the "
                     "baselines, <code>./repro contest submit DIR</code> a controller.</p>")
    for trace, rows in boards:
        parts.append(f"<h2 id=\"{html.escape(trace.name, quote=True)}\">"
                     f"{html.escape(trace.title)}</h2>")
        parts.append("<table><tr><th>#</th><th class=name>entry</th><th>kind</th>"
                     "<th>score</th><th>throughput (Mbit/s)</th><th>p95 e2e delay (ms)</th>"
                     "<th>p95 signal delay (ms)</th><th>power</th><th>utilization</th>"
                     "<th>trials scored</th><th class=name>views</th></tr>")
        for e in rows:
            css = "failed" if e.status != "scored" else e.kind
            links = [_link(href, view) for view, href in e.plots.items()]
            if e.run:
                links.append(_link(e.run, "run"))
            links += [_link(href, label) for label, href in e.extra_links.items()]
            name = html.escape(e.name)
            if e.status != "scored":
                name += f"<br><small>failed: {html.escape(e.reason)}</small>"
            elif e.submitted_at:
                name += f"<br><small>{html.escape(e.submitted_at)} "\
                        f"{html.escape(e.source_hash)}</small>"
            if e.metrics.get("window_capped"):
                name += "<br><small>window capped at 10,000 datagrams</small>"
            if late_text(e.metrics):
                name += f"<br><small class=late>{html.escape(late_text(e.metrics))}</small>"
            m = e.metrics
            parts.append(
                f"<tr class=\"{css}\"><td>{e.rank or ''}</td><td class=name>{name}</td>"
                f"<td>{e.kind}</td><td>{_fmt(m.get('score'))}</td>"
                f"<td>{_fmt(m.get('throughput_mbps'))}</td>"
                f"<td>{_fmt(m.get('p95_e2e_delay_ms'), 0)}</td>"
                f"<td>{_fmt(m.get('p95_signal_delay_ms'), 0)}</td>"
                f"<td>{_fmt(m.get('power'), 1)}</td><td>{_fmt(m.get('utilization'))}</td>"
                f"<td>{e.trials_scored}/{e.trials}</td>"
                f"<td class=name>{' '.join(links)}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
