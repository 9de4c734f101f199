"""The contest's leaderboard runs: the baselines on the contest path of each trace.

The contest path (sprout-and-contest.md section 5): data over <trace>.down then
20 ms, ACKs over 20 ms then <trace>.up, infinite queue, the whole trace once. A
submission's link has a queue bounded at 64 MiB instead (schemes/submission/limits.py
UNTRUSTED_QUEUE): far above what its window can queue, so its score is the infinite
queue's, but a flood past its window stays its own and the emulator's memory bounded.
Which traces stand for what (the paper trained on Verizon LTE, validated on an
AT&T LTE snippet and tested on a different network and day):

- training: Verizon-LTE-short (the 2013 contest's training trace, 140 s);
- validation: ATT-LTE-driving-2016 (an AT&T LTE drive, another network and year);
- testing: TMobile-LTE-short (a third network, recorded another day).

Submissions (`./repro contest submit`) land in the same results folder; this
experiment's figures are the leaderboards (experiments/contest/leaderboard.py) with every
run's views. Quick mode: three baselines on the training trace.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from analysis.coverage import Coverage
from experiments.contest.leaderboard import (SUBMISSION_SCHEME, BoardTrace, omniscient_entry,
                                             submission_records, write_leaderboards)
from core.results import ExperimentStore
from core.runspec import RunSpec, make_params
from core.traces import TraceError, TraceSet
from experiments.base import Experiment
from experiments.contest.claims import BOARD_CLAIMS, OMNISCIENT
from schemes.submission.limits import UNTRUSTED_QUEUE

log = logging.getLogger(__name__)

TRACE_ROLES = {"training": "Verizon-LTE-short", "validation": "ATT-LTE-driving-2016",
               "testing": "TMobile-LTE-short"}
DELAY_MS = 20
# (scheme, parameters): the shipped schemes every board compares against.
BASELINES: tuple[tuple[str, dict[str, float]], ...] = (
    ("sprout", {}), ("sprout-ewma", {}), ("fixed-window", {"window": 50}), ("aimd", {}),
    ("delay-trigger", {}), ("dasjoshma", {}), ("johnnybameesh", {}), ("sheen", {}))
QUICK_BASELINES = ("sprout", "johnnybameesh", "aimd")


def contest_spec(experiment: str, scheme: str, trace: str, trial: int = 1,
                 params: dict | None = None) -> RunSpec:
    """A run on the contest path of `trace` (its base name); a submission's queue is the
    untrusted one."""
    queue = UNTRUSTED_QUEUE if scheme == SUBMISSION_SCHEME else "infinite"
    return RunSpec(experiment=experiment, scheme=scheme, data_trace=f"{trace}.down",
                   ack_trace=f"{trace}.up", delay_ms=DELAY_MS, queue=queue,
                   duration_s=None, trial=trial, params=make_params(**(params or {})))


def board_traces(root: Path, traces: TraceSet | None = None) -> list[BoardTrace]:
    """The three roles' boards, then one per other trace a submission used."""
    traces = traces or TraceSet.for_project()
    names = list(TRACE_ROLES.values())
    names += sorted({str(s.get("trace")) for _, s in submission_records(root)
                     if s.get("trace") and s.get("trace") not in names})
    roles = {v: k for k, v in TRACE_ROLES.items()}
    boards = []
    for name in names:
        try:
            path: Path | None = traces.resolve(f"{name}.down")
        except TraceError:
            path = None
        boards.append(BoardTrace(name, roles.get(name), path))
    return boards


class Contest(Experiment):
    name = "contest"
    python_modules = (("aiohttp", "repro contest serve"),)
    title = "Contest leaderboards: baselines on the training, validation and testing traces"
    quick_note = f"{', '.join(QUICK_BASELINES)} on the training trace"
    claims = BOARD_CLAIMS

    def matrix(self, quick: bool, trials: int = 1) -> list[RunSpec]:
        if quick:
            chosen = [(s, p) for s, p in BASELINES if s in QUICK_BASELINES]
            roles = ["training"]
        else:
            chosen, roles = list(BASELINES), list(TRACE_ROLES)
        return [contest_spec(self.name, scheme, TRACE_ROLES[role], t, params)
                for t in range(1, trials + 1) for role in roles for scheme, params in chosen]

    def make_figures(self, store: ExperimentStore, out_dir: Path) -> list[Path]:
        return write_leaderboards(out_dir, board_traces(out_dir, self.traces))

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """One row per finished baseline run (with its board's `trace`), and one per board
        for the omniscient protocol on that trace (left out, logged, if the trace is not
        on this machine)."""
        rows = super().claim_rows(cov)
        for row, record in zip(rows, cov.records()):
            row["trace"] = record.spec.data_trace.removesuffix(".down")
        roles = {v: k for k, v in TRACE_ROLES.items()}
        for trace in sorted({str(row["trace"]) for row in rows}):
            try:
                path: Path | None = self.traces.resolve(f"{trace}.down")
            except TraceError as e:
                log.warning("no omniscient row for %s: %s", trace, e)
                continue
            entry = omniscient_entry(BoardTrace(trace, roles.get(trace), path))
            if entry is not None:
                rows.append(dict(entry.metrics, scheme=OMNISCIENT, trace=trace, run=""))
        return rows
