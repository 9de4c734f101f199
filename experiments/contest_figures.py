"""The contest's warm-ups B and C and the paper's figures, for the registry (one hook)."""
from __future__ import annotations

from experiments.base import Experiment
from experiments.contest_region import ContestRegion
from experiments.contest_train_test import ContestTrainTest
from experiments.contest_warmup_b import ContestWarmupB
from experiments.contest_warmup_c import ContestWarmupC

CONTEST_FIGURES: tuple[type[Experiment], ...] = (ContestWarmupB, ContestWarmupC, ContestRegion,
                                                 ContestTrainTest)
