"""Progress with an ETA: a live bar on a terminal, one line per finished run otherwise."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (BarColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


class ProgressReporter:
    """Progress is weighted by each run's expected seconds, so the ETA means time."""

    def __init__(self, total: float, count: int, out: TextIO = sys.stdout) -> None:
        self.total = total
        self.count = count
        self.done_weight = 0.0
        self.done_count = 0
        self.started = time.monotonic()
        self.out = out
        self.console = Console(file=out)
        self.bar: Progress | None = None
        if self.console.is_terminal:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                TextColumn("{task.completed:.0f}/{task.total:.0f} s of runs"),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                console=self.console, transient=False)
            self.bar.start()
            self.task = self.bar.add_task(f"0/{count} runs", total=total)

    def eta_s(self) -> float:
        elapsed = time.monotonic() - self.started
        if self.done_weight <= 0:
            return self.total
        return elapsed * (self.total - self.done_weight) / self.done_weight

    def advance(self, weight: float, label: str, ok: bool, reason: str = "") -> None:
        self.done_weight += weight
        self.done_count += 1
        status = ("ok" + (f" ({reason})" if reason else "")) if ok else f"FAILED: {reason}"
        line = f"[{self.done_count}/{self.count}] {label}: {status}"
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
            self.bar.update(self.task, advance=weight,
                            description=f"{self.done_count}/{self.count} runs")
        else:
            remaining = self.eta_s()
            print(f"{line} (ETA {remaining / 60:.1f} min)", file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
