"""The achievability region's frontier (Protocol Design Contests, CCR 2014, Figure 7).

Each protocol is a point (95% end-to-end delay, throughput); better is less
delay and more throughput (upper left with delay on a log axis). The frontier is
drawn as the paper draws it: the upper-left convex hull of the population, with
delay on a log scale, i.e. the concave upper envelope, over log10(delay), of
the Pareto-efficient points (those no other point beats on both axes).

A protocol lies on the frontier when it is a vertex of that hull; it lies near
it when its throughput is within a fraction of the hull's at its own delay.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class RegionPoint:
    name: str
    delay_ms: float
    throughput_mbps: float

    @property
    def x(self) -> float:
        return math.log10(self.delay_ms)


def _dominates(a: RegionPoint, b: RegionPoint) -> bool:
    return (a.throughput_mbps >= b.throughput_mbps and a.delay_ms <= b.delay_ms
            and (a.throughput_mbps > b.throughput_mbps or a.delay_ms < b.delay_ms))


def pareto_efficient(points: Sequence[RegionPoint]) -> list[RegionPoint]:
    """Points no other point dominates, by delay ascending."""
    usable = [p for p in points if p.delay_ms > 0 and math.isfinite(p.delay_ms)
              and math.isfinite(p.throughput_mbps)]
    return sorted((p for p in usable if not any(_dominates(q, p) for q in usable)),
                  key=lambda p: (p.delay_ms, -p.throughput_mbps))


def _cross(o: RegionPoint, a: RegionPoint, b: RegionPoint) -> float:
    return ((a.x - o.x) * (b.throughput_mbps - o.throughput_mbps)
            - (a.throughput_mbps - o.throughput_mbps) * (b.x - o.x))


def convex_frontier(points: Sequence[RegionPoint]) -> list[RegionPoint]:
    """The upper-left convex hull's vertices (log10 delay vs throughput), delay ascending.

    Starts at the lowest-delay efficient point and ends at the highest-throughput one;
    every point of the population is on or below the line through consecutive vertices.
    """
    hull: list[RegionPoint] = []
    for p in pareto_efficient(points):
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) >= 0:
            hull.pop()  # hull[-1] is on or below the chord hull[-2] -> p
        hull.append(p)
    return hull


def frontier_throughput(hull: Sequence[RegionPoint], delay_ms: float) -> float | None:
    """The frontier's throughput at `delay_ms` (linear in log10 delay between vertices;
    the first vertex's below its delay is undefined -> None; flat beyond the last)."""
    if not hull or delay_ms < hull[0].delay_ms:
        return None
    x = math.log10(delay_ms)
    for a, b in zip(hull, hull[1:]):
        if a.x <= x <= b.x:
            if b.x == a.x:
                return max(a.throughput_mbps, b.throughput_mbps)
            f = (x - a.x) / (b.x - a.x)
            return a.throughput_mbps + f * (b.throughput_mbps - a.throughput_mbps)
    return hull[-1].throughput_mbps


@dataclass(frozen=True)
class FrontierPosition:
    """Where one protocol stands against the population's frontier."""

    name: str
    vertex: bool  # a vertex of the convex frontier
    efficient: bool  # no other protocol beats it on both throughput and delay
    shortfall: float  # 1 - its throughput / the frontier's at its delay (0 on it)


def position(points: Sequence[RegionPoint], name: str) -> FrontierPosition:
    subject = next((p for p in points if p.name == name), None)
    if subject is None:
        raise KeyError(f"{name} is not in the population")
    hull = convex_frontier(points)
    efficient = subject in pareto_efficient(points)
    at = frontier_throughput(hull, subject.delay_ms)
    shortfall = 0.0 if at is None or at <= 0 else max(0.0, 1.0 - subject.throughput_mbps / at)
    return FrontierPosition(name, subject in hull, efficient, shortfall)
