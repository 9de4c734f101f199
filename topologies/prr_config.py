"""The PRR path's parameters, checked before anything is built (no Mininet needed)."""
from __future__ import annotations

from dataclasses import dataclass

from controllers.drop_plan import DropPlan
from controllers.launcher import CONTROLLERS
from core.queue_spec import parse_queue


@dataclass(frozen=True)
class PrrPathConfig:
    plan: DropPlan
    controller: str = "auto"        # pox | os-ken | auto
    rate_mbps: float = 10.0         # the bottleneck, each way
    delay_ms: int = 20              # each way: round trip 2 x delay_ms
    queue: str = "infinite"         # the bottleneck queue: infinite | droptail:packets=N ...
    tcp_port: int = 5001            # the flow the plan applies to: TCP to this port
    ready_timeout_s: float = 10.0

    @property
    def quiet_s(self) -> float:
        """The pause in the flow the controller waits for before the direct path opens:
        longer than the ACK clock's spacing within a burst (a delayed ACK every two
        segments lets two or three leave together: four frame times at the bottleneck),
        and at least 5 ms."""
        return max(0.005, 4 * 1514 * 8 / (self.rate_mbps * 1e6))

    def __post_init__(self) -> None:
        if self.controller not in CONTROLLERS:
            raise ValueError(f"unknown controller {self.controller!r}: use one of "
                             f"{', '.join(CONTROLLERS)}")
        if not self.rate_mbps > 0:
            raise ValueError(f"rate_mbps must be > 0 (got {self.rate_mbps})")
        if not isinstance(self.delay_ms, int) or self.delay_ms < 0:
            raise ValueError(f"delay_ms must be a whole number of ms >= 0 (got {self.delay_ms})")
        if not 1 <= self.tcp_port <= 65535:
            raise ValueError(f"tcp_port must be 1-65535 (got {self.tcp_port})")
        parse_queue(self.queue)
