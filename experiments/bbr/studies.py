"""Which of the BBR experiment's studies a run belongs to, from its spec alone."""
from __future__ import annotations

from core.runspec import RunSpec

STARTUP = "startup"  # Figs 2, 4 and 5: one flow from its start, 10 Mbit/s, 40 ms
STEP = "step"  # Fig 3: the rate steps
LOSS = "loss"  # Fig 8: random loss
CONVERGENCE = "convergence"  # Fig 6: five flows joining
STUDIES = (STARTUP, STEP, CONVERGENCE, LOSS)


def study_of(spec: RunSpec) -> str:
    if spec.option("topology") == "shared-bottleneck":
        return CONVERGENCE
    if spec.option("loss") is not None:
        return LOSS
    if spec.option("rate_steps"):
        return STEP
    return STARTUP
