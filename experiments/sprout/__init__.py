"""Sprout (Winstein, Sivaraman, Balakrishnan; NSDI 2013): Figure 7, its summary table, and
the risk sweep of its confidence parameter. Docs: docs/sprout-fig7.md."""
from __future__ import annotations

from experiments.sprout.fig7 import SproutFig7
from experiments.sprout.risk import SproutRisk

PAPER = "Sprout (Winstein, Sivaraman, Balakrishnan; NSDI 2013)"
EXPERIMENTS = (SproutFig7, SproutRisk)
