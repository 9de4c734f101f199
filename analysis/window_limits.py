"""Whether a run's TCP flows were held back by their windows rather than by the path.

Each connection's kernel counts how long it was busy and, of that, how long the receiver's
window (`rwnd_limited`) and its send buffer (`sndbuf_limited`) limited it; `ss -tin` prints
them and the socket sampler records them. A flow limited more than 1% of its busy time did
not load the path as a long flow should: the run is no measurement of the path
(`window_limited`, analysis/summary.py).
"""
from __future__ import annotations

from typing import Any, Sequence

# A flow limited by its windows (the receiver's, its send buffer) longer than this share of
# its busy time did not load the path as a long flow should.
WINDOW_LIMITED_MAX_PCT = 1.0


def window_limit_metrics(limits: Sequence[dict[str, float] | None]) -> dict[str, Any]:
    """The flows' window limits (each {"rwnd_pct", "sndbuf_pct"} of its busy time, or None
    where unrecorded) as metrics, with the verdict `window_limited` (None: none was)."""
    known = [(i, lim) for i, lim in enumerate(limits, 1) if lim is not None]
    if not known:
        return {"window_limited_max_pct": None, "window_limited": None,
                "window_limits_recorded": 0}
    worst_i, worst = max(known, key=lambda p: max(p[1]["rwnd_pct"], p[1]["sndbuf_pct"]))
    worst_pct = max(worst["rwnd_pct"], worst["sndbuf_pct"])
    over = [i for i, lim in known
            if max(lim["rwnd_pct"], lim["sndbuf_pct"]) > WINDOW_LIMITED_MAX_PCT]
    which = "the receiver's window" if worst["rwnd_pct"] >= worst["sndbuf_pct"] \
        else "its send buffer"
    verdict = (f"{len(over)} of {len(limits)} flows window-limited: flow {worst_i} by "
               f"{which} {worst_pct:.1f}% of its busy time (over "
               f"{WINDOW_LIMITED_MAX_PCT:g}%)") if over else None
    return {"window_limited_max_pct": worst_pct, "window_limited": verdict,
            "window_limits_recorded": len(known),
            "flow_rwnd_limited_pct": [None if lim is None else lim["rwnd_pct"]
                                      for lim in limits],
            "flow_sndbuf_limited_pct": [None if lim is None else lim["sndbuf_pct"]
                                        for lim in limits]}
