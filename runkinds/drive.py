"""The one loop that drives a run's endpoints, for every kind of network.

The kind builds its network and starts the receiver (and whatever must run before the
sender: the emulator's clock, captures); `drive` starts the sender and waits for it,
checking the network at every poll, until the sender ends or the run's end passes. Then
the kind stops what it started and verifies it, and the executor commits the run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from core.endpoints import Endpoints
from core.errors import RunInvalid
from schemes.base import Scheme, StillRunning

SENDER_EXITED = "exited by itself"
SENDER_STOPPED = "stopped at the end of the span"


@dataclass(frozen=True)
class RunEnd:
    """When a run's sender must be done, and what passing that time means."""

    after_s: float  # from the sender's start
    # True: the measurement is over (the link serves nothing more): stop the sender, the run
    # stands. False: the sender hangs: the run fails with `why`.
    stop_sender: bool
    why: str = ""
    poll_s: float = 0.5


def drive(scheme: Scheme, ends: Endpoints, sender_s: float, check_alive: Callable[[], None],
          end: RunEnd) -> str:
    """Start the sender for `sender_s` seconds and wait for it; returns how it ended."""
    deadline = time.monotonic() + end.after_s
    scheme.start_sender(ends, sender_s)
    while True:
        try:
            scheme.wait_sender(end.poll_s)
            return SENDER_EXITED
        except StillRunning:
            check_alive()
            if time.monotonic() > deadline:
                if not end.stop_sender:
                    raise RunInvalid(end.why) from None
                scheme.stop_sender()
                return SENDER_STOPPED
