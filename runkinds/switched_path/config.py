"""The switched path's parameters, checked before anything is built (no Mininet needed)."""
from __future__ import annotations

from dataclasses import dataclass, field

from controllers.drop_plan import DropPlan
from controllers.launcher import CONTROLLERS
from core.queue_spec import parse_queue


@dataclass(frozen=True)
class SwitchedPathConfig:
    plan: DropPlan
    controller: str = "auto"        # pox | os-ken | auto
    rate_mbps: float = 10.0         # the bottleneck, each way
    delay_ms: int = 20              # each way: round trip 2 x delay_ms
    queue: str = "infinite"         # the bottleneck queue: infinite | droptail:packets=N ...
    tcp_port: int = 5001            # the flow the plan applies to: TCP to this port
    ready_timeout_s: float = 10.0
    # Loss-detection settings of the sender's namespace beyond the path's own (SYSCTLS in
    # network.py), as sorted (sysctl, value) pairs (parse_sender_sysctls).
    sender_sysctls: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # The largest window the receiver advertises, bytes, for the whole connection (a tc/BPF
    # cap on its egress, window scaling off: kernel/window_cap.py); None: the kernel's own,
    # which grows with every out-of-order segment.
    receiver_window: int | None = None

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
        for key, value in self.sender_sysctls:
            _check_sysctl(key, value)
        if self.receiver_window is not None and not 1 <= self.receiver_window <= 65535:
            raise ValueError(f"receiver_window must be 1-65535 bytes (got "
                             f"{self.receiver_window}): the cap works without window scaling")


# The loss-detection sysctls a run may set in the sender's namespace, and the values each
# accepts (net.ipv4.tcp_recovery's bits: 0x1 RACK, 0x2 static reordering window, 0x4 no
# DUPACK threshold; tcp_early_retrans 0-4, 3 being the kernel's default with TLP).
SENDER_SYSCTLS: dict[str, range] = {
    "net.ipv4.tcp_recovery": range(0, 8),
    "net.ipv4.tcp_reordering": range(1, 301),
    "net.ipv4.tcp_early_retrans": range(0, 5),
    "net.ipv4.tcp_thin_linear_timeouts": range(0, 2),
    "net.ipv4.tcp_frto": range(0, 3),
}


def _check_sysctl(key: str, value: str) -> None:
    accepted = SENDER_SYSCTLS.get(key)
    if accepted is None:
        raise ValueError(f"{key} is not a sender setting a run may change; known: "
                         + ", ".join(k.rsplit(".", 1)[-1] for k in SENDER_SYSCTLS))
    if not value.isdigit() or int(value) not in accepted:
        raise ValueError(f"{key}={value}: the value must be an integer from {accepted.start} "
                         f"to {accepted.stop - 1}")


def parse_sender_sysctls(text: str) -> tuple[tuple[str, str], ...]:
    """"tcp_recovery=5,tcp_reordering=1" as sorted (net.ipv4.<name>, value) pairs, checked
    ("" is none). ValueError says what is wrong."""
    pairs: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        key = name.strip() if name.strip().startswith("net.") else f"net.ipv4.{name.strip()}"
        if not sep:
            raise ValueError(f"{part!r} is not name=value")
        if key in pairs:
            raise ValueError(f"{name.strip()} is given twice")
        _check_sysctl(key, value.strip())
        pairs[key] = value.strip()
    return tuple(sorted(pairs.items()))


def sender_sysctls_text(pairs: tuple[tuple[str, str], ...]) -> str:
    """The canonical option text of parse_sender_sysctls' pairs ("" for none)."""
    return ",".join(f"{k.removeprefix('net.ipv4.')}={v}" for k, v in pairs)
