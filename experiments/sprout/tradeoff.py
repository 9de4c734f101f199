"""What the Sprout experiments share: runs set up as in the Sprout paper, read back as
throughput vs self-inflicted delay.

As the paper ran them (the default): 20 ms each way, an infinite queue as its emulator,
both directions of the link loaded at once (one run gives the downlink and the uplink
point), the first minute of each run played but not scored; a full run plays the longer
trace of the pair once, the shorter one looping, and is scored to the end of the shorter
trace (`scored_span`, analysis/scored_span.py: the paper's Cellsim played each trace once,
so its runs had no feedback past the shorter trace's end). Quick mode plays one stretch of
each trace pair (experiments/sprout/stretch.py: an offset into the traces, a warm-up, the scored
part), the same for every scheme. `one_way` runs load one direction per run (data one way,
ACKs or feedback the other), as netrepro did before; `trace_play=once` plays each trace of a
full run once, as the paper's Cellsim did. The mode, the play, the warm-up and the offset
are RunSpec options (core/run_span.py), so they are part of every run's id; the scored span
is not (it reads the same logs: choosing another one needs no rerun).
"""
from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any, ClassVar, Mapping

from analysis.coverage import NOT_RUN, Coverage
from analysis.metrics import MetricsError
from runkinds.trace_path.metrics import REVERSE
from analysis.scored_span import DESCRIPTION as SPAN_DESCRIPTION
from analysis.scored_span import RULES, SHORTER_TRACE
from experiments.sprout.self_inflicted import OmniscientReferences
from experiments.sprout.stretch import representative_offset_ms
from analysis.summary import RunRecord, write_csv
from experiments.sprout.tradeoff_points import run_row
from core.run_span import BOTH, DIRECTIONS, LOOP, ONCE, ONE, TRACE_PLAY
from core.run_span import OFFSET_S as OFFSET_OPTION
from core.run_span import WARMUP_S as WARMUP_OPTION
from core.runspec import RunSpec, make_params
from core.settings import Setting
from core.traces import TraceError, TraceMissing, TraceSet, load_trace
from experiments.base import Experiment
from kernel import tcp_buffers

log = logging.getLogger(__name__)

DELAY_MS = 20
QUEUE = "infinite"
# Full runs: the paper's scorer skips each run's first minute.
WARMUP_S = 60.0
# Quick runs: one stretch per trace pair, a shorter warm-up then the scored part.
QUICK_WARMUP_S = 10.0
QUICK_SCORED_S = 30.0
QUICK_DURATION_S = QUICK_WARMUP_S + QUICK_SCORED_S
# Schemes whose queue is not the experiment's (the link's queue in both directions).
SCHEME_QUEUES = {"cubic-codel": "codel"}

MISSING_COLUMNS = ["scheme", "data_trace", "ack_trace", "params", "trial", "reason"]


class TradeoffExperiment(Experiment):
    """An experiment whose figure is throughput vs Sprout's self-inflicted delay."""

    delay_ms = DELAY_MS
    queue = QUEUE
    compared_metrics = ("throughput_mbps", "self_inflicted_delay_ms", "p95_e2e_delay_ms")

    # The mode and the full run's warm-up skip, from the command line (`repro run
    # sprout-fig7 --one-way --warmup-s 30`); they become the runs' options read by
    # core/run_span.py (`directions`, `warmup_s`), so they are part of every run's id.
    options: ClassVar[tuple[Setting, ...]] = (
        Setting("one_way", bool, "load one direction per run (netrepro's earlier mode) "
                "instead of both at once, as the paper did", default=False),
        Setting("warmup_s", float, "seconds at the start of a full run played but not scored "
                "(the paper skips each run's first minute)", default=WARMUP_S, minimum=0,
                maximum=600),
        Setting("scored_span", str, "where a full run's scoring ends: at the end of the "
                "shorter trace of the pair (the paper's span: its emulator played each trace "
                "once), at the end of the run, at each direction's own last delivery (the "
                "paper's scorer), or senders-stop: nothing sent after the shorter trace's "
                "end, each direction to its own last delivery (what the paper's AT&T LTE "
                "points imply); the same logs are rescored, no rerun "
                "(analysis/scored_span.py)", default=SHORTER_TRACE, choices=RULES),
        Setting(TRACE_PLAY, str, "how a full run plays its traces: loop (mahimahi, and the "
                "paper's emulator from 2013) or once, as the paper's emulator of 2012 did: "
                "a direction whose trace ends first serves nothing after (with "
                "--scored-span last-delivery: the paper-era set-up)", default=LOOP,
                choices=(LOOP, ONCE), flag="--trace-play"),
        Setting(tcp_buffers.OPTION, str, "the hosts' TCP buffer limits, which cap a "
                "loss-based flow's window over the infinite queue: those of Linux 3.2, the "
                "paper's kernel, or the machine's own (kernel/tcp_buffers.py)",
                default=tcp_buffers.LINUX_3_2, flag="--tcp-buffers",
                choices=tuple(tcp_buffers.PROFILES)),
    )

    def __init__(self, traces: TraceSet, options: Mapping[str, Any] | None = None,
                 quick_warmup_s: float = QUICK_WARMUP_S,
                 quick_scored_s: float = QUICK_SCORED_S) -> None:
        super().__init__(traces, options)
        self.one_way = bool(self.chosen["one_way"])
        self.warmup_s = float(self.chosen["warmup_s"])
        self.scored_span = str(self.chosen["scored_span"])
        self.trace_play = str(self.chosen[TRACE_PLAY])
        self.tcp_buffer_profile = str(self.chosen[tcp_buffers.OPTION])
        self.quick_warmup_s, self.quick_scored_s = quick_warmup_s, quick_scored_s
        self._offsets: dict[tuple[str, str], float] = {}

    def with_traces(self, traces: TraceSet) -> "TradeoffExperiment":
        """The same experiment (its networks, schemes and options) over other traces."""
        twin = copy.copy(self)
        twin.traces, twin._offsets = traces, {}
        return twin

    def one_way_variant(self) -> "TradeoffExperiment":
        """The same experiment with one direction loaded per run."""
        twin = copy.copy(self)
        twin.chosen, twin.one_way = {**self.chosen, "one_way": True}, True
        return twin

    @property
    def quick_duration_s(self) -> float:
        return self.quick_warmup_s + self.quick_scored_s

    @property
    def mode_text(self) -> str:
        return "one direction loaded per run" if self.one_way else \
            "both directions loaded at once"

    def duration_s(self, quick: bool) -> float | None:
        """None is a whole trace pair (core/run_span.py)."""
        return self.quick_duration_s if quick else None

    def figure_dir(self, out_dir: Path) -> Path:
        """Where this mode's figures go: one-way ones, and those of traces played once,
        beside the default mode's, not over them."""
        out = out_dir / "one-way" if self.one_way else out_dir
        return out / "once" if self.trace_play == ONCE else out

    def quick_offset_s(self, down: str, up: str) -> float:
        """The stretch's offset into a trace pair (experiments/sprout/stretch.py); 0 when a trace is
        missing (its runs fail anyway)."""
        key = (down, up)
        if key not in self._offsets:
            try:
                times = [load_trace(self.traces.resolve(name)) for name in key]
            except TraceError as e:
                log.debug("no stretch for %s/%s: %s", down, up, e)
                self._offsets[key] = 0.0
            else:
                self._offsets[key] = representative_offset_ms(
                    times[0], times[1], int(self.quick_warmup_s * 1000),
                    int(self.quick_scored_s * 1000), self.delay_ms) / 1000.0
        return self._offsets[key]

    def span_text(self, quick: bool) -> str:
        if quick:
            return (f"quick: one stretch per trace pair, {self.quick_warmup_s:g} s warm-up "
                    f"then {self.quick_scored_s:g} s scored")
        if self.trace_play == ONCE:
            longer = "each trace once, none looping (the paper's 2012 emulator)"
        else:
            longer = "the longer trace of each pair once, the shorter looping" \
                if not self.one_way else "the data trace once, the other looping"
        return (f"{longer}; first {self.warmup_s:g} s not scored, "
                f"{SPAN_DESCRIPTION[self.scored_span]}")

    def setup_text(self, quick: bool) -> str:
        """The conditions every figure states."""
        return (f"{self.delay_ms} ms fixed delay each way, {self.queue} queue"
                f"{' (CoDel for Cubic-CoDel)' if self._has_codel() else ''}, "
                f"{self.mode_text}; {self.span_text(quick)}; "
                f"{tcp_buffers.PROFILE_TEXT[self.tcp_buffer_profile]}")

    def _has_codel(self) -> bool:
        return any(s in SCHEME_QUEUES for s in getattr(self, "schemes", ()))

    def run_spec(self, scheme: str, data_trace: str, ack_trace: str, quick: bool, trial: int,
                 offset_s: float = 0.0, **params: Any) -> RunSpec:
        warmup = self.quick_warmup_s if quick else self.warmup_s
        return RunSpec(experiment=self.name, scheme=scheme, data_trace=data_trace,
                       ack_trace=ack_trace, delay_ms=self.delay_ms,
                       queue=SCHEME_QUEUES.get(scheme, self.queue),
                       duration_s=self.duration_s(quick), trial=trial,
                       params=make_params(**params),
                       options=make_params(**{DIRECTIONS: ONE if self.one_way else BOTH,
                                              WARMUP_OPTION: warmup,
                                              OFFSET_OPTION: offset_s if quick else None,
                                              # Looping is the default (absent): a quick
                                              # stretch lies inside both traces anyway.
                                              TRACE_PLAY: ONCE if self.trace_play == ONCE
                                              and not quick else None,
                                              tcp_buffers.OPTION: self.tcp_buffer_profile}))

    def claim_rows(self, cov: Coverage) -> list[dict[str, Any]]:
        """The summary's rows: throughput and self-inflicted delay of every finished run."""
        return self.rows(cov, OmniscientReferences(self.traces))

    def trace_problem(self, *names: str) -> str | None:
        """Which of these traces cannot be used here (missing.csv has the details), or None."""
        for name in names:
            try:
                self.traces.resolve(name)
            except TraceError as e:
                log.debug("trace %s cannot be used: %s", name, e)
                if isinstance(e, TraceMissing):
                    return f"trace missing: {name}"
                return f"trace unusable: {name} ({type(e).__name__})"
        return None

    def describe(self, spec: RunSpec, reverse: bool = False) -> dict[str, Any]:
        """Columns this experiment adds to a run's row (`reverse`: its other direction's)."""
        return {}

    def rows(self, cov: Coverage, refs: OmniscientReferences) -> list[dict[str, Any]]:
        """One row per finished run and direction scored (a run that loaded both directions
        gives two); a run whose trace is gone here is left out (logged)."""
        rows = []
        for record in cov.records():
            for reverse in self.scored_directions(record):
                try:
                    row = run_row(record, refs, reverse=reverse, rule=self.scored_span)
                except TraceError as e:
                    log.warning("%s: no self-inflicted delay without its trace: %s",
                                record.path.name, e)
                    continue
                except MetricsError as e:
                    log.warning("%s: nothing to score (%s): %s", record.path.name,
                                "reverse" if reverse else "data direction", e)
                    continue
                row.update(self.describe(record.spec, reverse))
                rows.append(row)
        return rows

    def scored_directions(self, record: RunRecord) -> tuple[bool, ...]:
        """Which directions of a run are scored: (False,) the data direction only, or
        (False, True) with the reverse one too."""
        return (False, True) if REVERSE in record.metrics else (False,)

    @staticmethod
    def write_missing(cov: Coverage, out_dir: Path) -> Path:
        """missing.csv: every planned run without a result, with the reason."""
        rows = [{"scheme": c.spec.scheme, "data_trace": c.spec.data_trace,
                 "ack_trace": c.spec.ack_trace, "trial": c.spec.trial, "reason": c.reason,
                 "params": " ".join(f"{k}={v}" for k, v in c.spec.params)}
                for c in cov.missing()]
        return write_csv(out_dir / "missing.csv", rows, MISSING_COLUMNS)

    @staticmethod
    def nothing_on_record(cov: Coverage) -> bool:
        """No run of the matrix has finished or failed: there is nothing to draw."""
        return all(c.reason == NOT_RUN for c in cov.cells)
