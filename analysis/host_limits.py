"""The TCP buffer limits a run's hosts had, read from its meta.json.

Over an infinite queue the receive maximum caps a loss-based flow's window, hence its
standing queue and delay: a grader needs to see which limit the TCP runs had
(kernel/tcp_buffers.py sets and records them).
"""
from __future__ import annotations

from typing import Any, Mapping

NOT_RECORDED = "not recorded"


def receive_ceiling(meta: Mapping[str, Any]) -> str:
    """The largest tcp_rmem maximum of a run's hosts, in bytes, with the profile the run
    asked for, or why it is not known."""
    hosts = (meta.get("tcp_buffers") or {}).values()
    values = [str(h.get("tcp_rmem", "")).split() for h in hosts if isinstance(h, dict)]
    maxima = [int(v[2]) for v in values if len(v) == 3 and v[2].isdigit()]
    if not maxima:
        return NOT_RECORDED
    profile = meta.get("tcp_buffer_profile")
    return f"{max(maxima)} bytes" + (f", {profile} profile" if profile else "")
