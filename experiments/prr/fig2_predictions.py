"""What the transfer model predicts for one prr-fig2 cell, beside what the kernel did.

Two senders, both models (experiments/prr/transfer_model.py), on the cell's own drops, size,
congestion control, rate, RTT and receiver window (held, or this kernel's): this kernel's
(RACK, `model_*`), which the kernel's runs check, and the paper's (Linux 3.1: FACK,
`linux3_*`), which no run here can measure. Where a
claim of Figure 2 fails, the second says whether the paper's kernel would have shown it in
that cell (docs/prr-fig2.md, "The base pattern at 64 KB").
"""
from __future__ import annotations

import functools
import logging
from typing import Any

from controllers.drop_plan import DropPlan, DropPlanError
from experiments.prr.recovery_model import Recovery
from experiments.prr.transfer_model import (ModelError, PathModel, Transfer, linux_3,
                                            simulate_transfer, this_kernel)

log = logging.getLogger(__name__)

# prr-bpf is PRR again: the model has one PRR.
MODEL_RECOVERY = {"rate-halving": Recovery.RATE_HALVING, "rfc3517": Recovery.RFC6675,
                  "prr-kernel": Recovery.PRR, "prr-bpf": Recovery.PRR}
COLUMNS = ["model_cwnd_exit", "model_acks_waited", "linux3_cwnd_exit", "linux3_acks_waited"]


def predict(pattern: Any, size: Any, cc: Any, recovery: Any, bottleneck: Any,
            rtt: Any, rwnd: Any = None) -> dict[str, int | None]:
    """The four COLUMNS for one cell; None in each where the model cannot say (a recovery or
    congestion control it does not have, a pattern that does not parse, a transfer the model
    cannot finish). `rwnd`: the receiver's window held at that many segments (None: this
    kernel's receiver, which the model does not limit)."""
    try:
        return dict(_predict(str(pattern), int(size), str(cc), str(recovery),
                             float(bottleneck), int(rtt), None if rwnd in (None, "") else
                             int(rwnd)))
    except (TypeError, ValueError):
        return dict.fromkeys(COLUMNS)


@functools.lru_cache(maxsize=256)
def _predict(pattern: str, size: int, cc: str, recovery: str, bottleneck: float,
             rtt: int, rwnd: int | None = None) -> tuple[tuple[str, int | None], ...]:
    how = MODEL_RECOVERY.get(recovery)
    try:
        drops = frozenset(DropPlan.parse(pattern).segments)
    except DropPlanError:
        drops = None
    if how is None or drops is None or cc not in ("cubic", "reno") or size < 1:
        return tuple(dict.fromkeys(COLUMNS).items())
    transfer = Transfer(size_bytes=size, drops=drops, rwnd_segments=rwnd)
    path = PathModel(rate_mbps=bottleneck, rtt_ms=float(rtt))
    out: dict[str, int | None] = {}
    for prefix, sender in (("model", this_kernel), ("linux3", linux_3)):
        try:
            result = simulate_transfer(sender(how, base=cc), transfer, path)
        except ModelError as e:
            log.warning("the transfer model could not finish %s %s %s %d B: %s",
                        prefix, recovery, pattern, size, e)
            out[f"{prefix}_cwnd_exit"] = out[f"{prefix}_acks_waited"] = None
            continue
        out[f"{prefix}_cwnd_exit"] = result.exit_cwnd
        out[f"{prefix}_acks_waited"] = result.acks_waited()
    return tuple(out.items())
