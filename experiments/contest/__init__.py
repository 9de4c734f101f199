"""The congestion-control design contest (Sivaraman, Winstein et al.; CCR 2014): warm-ups
A-C, the leaderboard of submitted controllers, the achievability region, training against
testing. Docs: docs/contest.md, docs/contest-figures.md."""
from __future__ import annotations

from experiments.contest.board import Contest
from experiments.contest.region import ContestRegion
from experiments.contest.train_test import ContestTrainTest
from experiments.contest.warmup_a import ContestWarmupA
from experiments.contest.warmup_b import ContestWarmupB
from experiments.contest.warmup_c import ContestWarmupC

PAPER = "Protocol design contests (Sivaraman, Winstein et al.; CCR 2014)"
EXPERIMENTS = (ContestWarmupA, Contest, ContestWarmupB, ContestWarmupC, ContestRegion,
               ContestTrainTest)
