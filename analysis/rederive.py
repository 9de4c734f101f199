"""Re-derive a finished run's metrics from its raw artifacts and compare them with
the metrics.json stored beside them.

The raw artifacts are the link logs (data.log, ack.log), the emulator's own
statistics (link-stats.json), the tcp_probe trace and meta.json; metrics.json
is what the analysis made of them when the run finished. A stored number the
artifacts do not give back is named. Whether a difference is an older analysis
at work or a hand edit is told by the analysis version stamped in metrics.json
(`analysis_version`), and, for metrics.json written before that stamp existed,
by whether metrics.json is newer than the run's DONE marker.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from core.results import DONE


MATCH = "match"  # every stored number given back
RECOMPUTED = "recomputed"  # an older analysis stored them; the current one differs
DIFFERS = "DIFFERS"  # the same analysis (or a later edit) does not give them back
UNREADABLE = "unreadable"  # the artifacts cannot be re-derived


class ArtifactsUnreadable(RuntimeError):
    """A run folder lacks what re-deriving its metrics needs (the message names it)."""


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


@dataclass(frozen=True)
class MetricsCheck:
    """A run's stored metrics against the re-derived ones."""

    status: str  # MATCH, RECOMPUTED, DIFFERS or UNREADABLE
    differing: tuple[str, ...] = ()  # stored and re-derived both present, not equal
    not_given_back: tuple[str, ...] = ()  # stored, absent from the re-derivation
    new: tuple[str, ...] = ()  # re-derived, not stored (a newer analysis)
    stored_version: str | None = None
    edited_after_done: bool = False
    detail: str = ""
    examples: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key -> (stored, ours)

    def describe(self) -> str:
        parts = []
        if self.differing:
            parts.append("differ: " + ", ".join(
                f"{k} (stored {_short(self.examples[k][0])}, artifacts give "
                f"{_short(self.examples[k][1])})" if k in self.examples else k
                for k in self.differing))
        if self.not_given_back:
            parts.append("not given back by the artifacts: " + ", ".join(self.not_given_back))
        if self.new:
            parts.append("new in this analysis: " + ", ".join(self.new))
        if self.detail:
            parts.append(self.detail)
        return "; ".join(parts)


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def compare(run_dir: Path, stored: Mapping[str, Any], derived: Mapping[str, Any],
            version_key: str, current_version: str) -> MetricsCheck:
    """Classify the differences between stored and re-derived metrics (`version_key`: where
    metrics.json stamps the version of the analysis that made it)."""
    stored_version = stored.get(version_key)
    keys_stored = {k for k in stored if k != version_key}
    keys_derived = {k for k in derived if k != version_key}
    differing = tuple(sorted(k for k in keys_stored & keys_derived
                             if not same_value(stored[k], derived[k])))
    missing = tuple(sorted(keys_stored - keys_derived))
    new = tuple(sorted(keys_derived - keys_stored))
    edited = _newer_than_done(run_dir)
    examples = {k: (stored[k], derived[k]) for k in differing}
    if not differing and not missing:
        status, detail = MATCH, ""
    elif stored_version == current_version:
        status = DIFFERS
        detail = ("the same analysis version gives other numbers: metrics.json was edited, "
                  "or the raw artifacts changed")
    elif edited:
        status = DIFFERS
        detail = ("metrics.json is newer than the run's DONE marker (edited after the run "
                  "finished, or copied without its file times)")
    else:
        status = RECOMPUTED
        detail = (f"stored by analysis {stored_version}, recomputed by {current_version}"
                  if stored_version else
                  f"stored by an analysis older than version stamps, recomputed by "
                  f"{current_version}")
    return MetricsCheck(status, differing, missing, new if status != MATCH else (),
                        stored_version, edited, detail, examples)


def _newer_than_done(run_dir: Path) -> bool:
    try:
        return (run_dir / "metrics.json").stat().st_mtime > (run_dir / DONE).stat().st_mtime
    except OSError:
        return False
