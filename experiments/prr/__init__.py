"""Proportional Rate Reduction (Dukkipati et al.; IMC 2011): Figure 2, one TCP flow's fast
recovery under chosen losses, and what decides its heavy-loss results on this kernel
(prr-heavy-loss). Docs: docs/prr-fig2.md."""
from __future__ import annotations

from experiments.prr.fig2 import PrrFig2
from experiments.prr.heavy_loss import PrrHeavyLoss

PAPER = "Proportional Rate Reduction for TCP (Dukkipati et al.; IMC 2011)"
EXPERIMENTS = (PrrFig2, PrrHeavyLoss)
