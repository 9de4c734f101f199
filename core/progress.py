"""Progress with an ETA: a live bar on a terminal, one line per finished run otherwise.

Progress is weighted by each run's expected seconds, and the ETA plans what is
left the way the pool will run it: each run in flight keeps its slot for the
rest of its expected seconds, and the runs not started take the first free
slot in their order. Expected seconds are scaled by how long the finished runs
took against theirs, so a machine slower than the plan shows in the ETA. With
ten runs side by side, the first to finish then says what is left of the pass,
not ten times it (the old ETA, elapsed x remaining / finished, ignored the runs
in flight).
"""
from __future__ import annotations

import sys
import time
import heapq
from typing import Callable, Hashable, Sequence, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

# A run in flight counts for at most this share of its weight until it finishes.
IN_FLIGHT_CAP = 0.95


def makespan_s(weights: Sequence[float], jobs: int, busy: Sequence[float] = (),
               slots: Sequence[int] | None = None) -> float:
    """When the last of `weights` ends if each, in order, takes the first free of `jobs`
    slots (`busy`: seconds left on slots already taken).

    With `slots`, run i needs slots[i] of them at once (at most `jobs`: more means all),
    and starts when that many are free, never before the run ahead of it: the pool starts
    runs in order (app/runner.py), so a run that needs the whole pool waits for the runs in
    flight to end, and the runs behind it wait for it."""
    pool = max(1, jobs)
    free = list(busy) + [0.0] * max(0, pool - len(busy))
    if slots is None:
        heapq.heapify(free)
        for weight in weights:
            heapq.heappush(free, heapq.heappop(free) + weight)
        return max(free, default=0.0)
    free.sort()
    started = 0.0
    for weight, need in zip(weights, slots):
        need = min(max(1, need), len(free))
        start = max(started, free[need - 1])
        free = sorted(free[need:] + [start + weight] * need)
        started = start
    return max(free, default=0.0)


def format_eta(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


class ProgressReporter:
    def __init__(self, weights: Sequence[float], jobs: int = 1, out: TextIO = sys.stdout,
                 clock: Callable[[], float] = time.monotonic,
                 slots: Sequence[int] | None = None) -> None:
        """`weights`: every run's expected seconds, in the order the runs will start;
        `slots`: how many of the pool's slots each takes (1 each when not given)."""
        self.planned = list(weights)
        self.planned_slots = list(slots) if slots is not None else [1] * len(self.planned)
        self.total = sum(self.planned)
        self.count = len(self.planned)
        self.jobs = max(1, jobs)
        self.clock = clock
        self.done_weight = 0.0
        self.done_count = 0
        self.started_count = 0
        self.took_s = 0.0  # how long the finished runs took, against their done_weight
        self.started_at = clock()
        # key -> (start, weight, slots)
        self.running: dict[Hashable, tuple[float, float, int]] = {}
        self.out = out
        self.console = Console(file=out)
        self.bar: Progress | None = None
        if self.console.is_terminal:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                TextColumn("{task.completed:.0f}/{task.total:.0f} s of runs"),
                                TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                                console=self.console, transient=False)
            self.bar.start()
            self.task = self.bar.add_task(f"0/{self.count} runs", total=self.total,
                                          eta=format_eta(self.eta_s()))

    def start(self, key: Hashable, weight: float, slots: int = 1) -> None:
        """A run of `weight` expected seconds, taking `slots` of the pool, started now."""
        self.running[key] = (self.clock(), weight, slots)
        self.started_count += 1

    def pace(self) -> float:
        """Seconds the finished runs took per expected second (1 until one has finished)."""
        return self.took_s / self.done_weight if self.done_weight > 0 and self.took_s > 0 \
            else 1.0

    def progress(self) -> float:
        """Seconds of runs done: finished runs' weights and the elapsed share of those running."""
        now, pace = self.clock(), self.pace()
        in_flight = sum(min((now - start) / (weight * pace), IN_FLIGHT_CAP) * weight
                        for start, weight, _ in self.running.values() if weight > 0)
        return self.done_weight + in_flight

    def eta_s(self) -> float:
        """When the last run should end: what is left planned over the pool's slots."""
        now, pace = self.clock(), self.pace()
        # A run past its expected time is taken to need the last share the progress
        # leaves it (it has not finished: its time left is not zero).
        busy = [max((1 - IN_FLIGHT_CAP) * weight * pace, weight * pace - (now - start))
                for start, weight, slots in self.running.values()
                for _ in range(min(max(1, slots), self.jobs))]
        return makespan_s([w * pace for w in self.planned[self.started_count:]], self.jobs,
                          busy, self.planned_slots[self.started_count:])

    def tick(self) -> None:
        """Refresh the bar (the runner calls this while it waits)."""
        if self.bar is not None:
            self.bar.update(self.task, completed=self.progress(), eta=format_eta(self.eta_s()))

    def advance(self, weight: float, label: str, ok: bool, reason: str = "",
                key: Hashable | None = None) -> None:
        """A run finished (`key` as given to start(), if it was)."""
        if key is not None and key in self.running:
            start, _, _ = self.running.pop(key)
            self.took_s += self.clock() - start
        elif key is None:
            self.took_s += weight  # untimed: taken as planned
        self.done_weight += weight
        self.done_count += 1
        status = ("ok" + (f" ({reason})" if reason else "")) if ok else f"FAILED: {reason}"
        line = f"[{self.done_count}/{self.count}] {label}: {status}"
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
            self.bar.update(self.task, completed=self.progress(),
                            description=f"{self.done_count}/{self.count} runs",
                            eta=format_eta(self.eta_s()))
        else:
            print(f"{line} (ETA {format_eta(self.eta_s())})", file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
