"""The smallest buffer that reaches a utilization, read off a grid of buffers for one n.

The grid's runs give utilization at a few buffers. The minimum buffer for a target is the
smallest buffer from which every larger buffer on the grid reaches it (a point of noise
that reaches the target below a failing one does not count), interpolated linearly in
log(buffer) between that grid point and the failing one below it. When the smallest
buffer on the grid already reaches the target, the minimum is at most that buffer
(`bound` "at most"); when none reaches it, more than the largest (`bound` "more than"):
both are reported as what they are, never as an exact number.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

EXACT, AT_MOST, MORE_THAN = "interpolated", "at most", "more than"


@dataclass(frozen=True)
class Minimum:
    packets: float
    bound: str  # EXACT, AT_MOST or MORE_THAN

    @property
    def exact(self) -> bool:
        return self.bound == EXACT


def per_buffer(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """(buffer, median utilization over its trials), by buffer."""
    by: dict[float, list[float]] = {}
    for buffer, utilization in points:
        by.setdefault(buffer, []).append(utilization)
    return sorted((b, statistics.median(u)) for b, u in by.items())


def minimum_buffer(points: Sequence[tuple[float, float]], target: float) -> Minimum | None:
    """The smallest buffer reaching `target` utilization (a fraction), from (buffer,
    utilization) points; None without points."""
    grid = per_buffer(points)
    if not grid:
        return None
    meets = [u >= target for _, u in grid]
    if not meets[-1]:
        return Minimum(grid[-1][0], MORE_THAN)
    first = len(grid) - 1
    while first > 0 and meets[first - 1]:
        first -= 1
    if first == 0:
        return Minimum(grid[0][0], AT_MOST)
    (b0, u0), (b1, u1) = grid[first - 1], grid[first]
    share = (target - u0) / (u1 - u0) if u1 > u0 else 1.0
    return Minimum(math.exp(math.log(b0) + share * (math.log(b1) - math.log(b0))), EXACT)
