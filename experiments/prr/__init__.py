"""Proportional Rate Reduction (Dukkipati et al.; IMC 2011): Figure 2, one TCP flow's fast
recovery under chosen losses. Docs: docs/prr-fig2.md."""
from __future__ import annotations

from experiments.prr.fig2 import PrrFig2

EXPERIMENTS = (PrrFig2,)
