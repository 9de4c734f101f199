"""BBR: Congestion-Based Congestion Control (Cardwell et al., ACM Queue 2016): Linux's BBR v1
against CUBIC on the paper's one-machine figures. Docs: docs/bbr.md."""
from __future__ import annotations

from experiments.bbr.experiment import Bbr

PAPER = "BBR: Congestion-Based Congestion Control (Cardwell et al.; ACM Queue 2016)"
EXPERIMENTS = (Bbr,)
