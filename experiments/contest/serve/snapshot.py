"""The boards as the web process shows them, drawn by the scorer (which can read the
results) and left in the state file with their figures, so the web user needs no access
to the results folder, and a board is one row to read (fast under load).
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from core.traces import TraceSet
from experiments.contest.board import board_traces
from experiments.contest.leaderboard import board
from experiments.contest.serve.store import Store

log = logging.getLogger(__name__)

FIGURE_BYTES = 4 << 20  # the largest figure copied for the web process
ROW_KEYS = ("rank", "kind", "name", "score", "throughput_mbps", "p95_e2e_delay_ms",
            "p95_signal_delay_ms", "utilization", "trials_scored", "trials", "status", "reason",
            "submitted_at", "source_hash")


def boards(root: Path, traces: TraceSet, always: str
           ) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    """Every board with a row besides the omniscient one (and `always`, the served
    trace's), and the figure files its rows link to (key -> file)."""
    found, figures = [], {}
    for trace in board_traces(root, traces):
        rows = board(root, trace)
        if trace.name != always and not any(r.kind != "omniscient" for r in rows):
            continue
        table = []
        for entry in rows:
            row = {k: v for k, v in entry.row(trace).items() if k in ROW_KEYS}
            row["figures"] = {}
            for view, rel in entry.plots.items():
                row["figures"][view] = rel
                figures[rel] = root / rel
            table.append(row)
        found.append({"name": trace.name, "role": trace.role, "title": trace.title,
                      "rows": table})
    return found, figures


def refresh(store: Store, root: Path, traces: TraceSet, always: str) -> None:
    """Draw the boards and store them with every figure not stored before."""
    started = time.monotonic()
    drawn, files = boards(root, traces, always)
    have = store.figure_keys()
    figures = {}
    for key, path in files.items():
        if key in have:
            continue
        try:
            data = path.read_bytes()
        except OSError as e:
            log.warning("figure %s unreadable: %s", path, e)
            continue
        if len(data) <= FIGURE_BYTES:
            figures[key] = data
    store.set_boards(drawn, figures, time.time())
    print(f"scorer      boards drawn ({len(drawn)}, {len(figures)} new figure(s)) in "
          f"{time.monotonic() - started:.1f} s", flush=True)
