"""The shape every scheme family shares (after Pantheon's wrappers).

A scheme is told where its endpoints run and for how long; it starts a
receiver, then a sender, waits, stops both, and verifies what really ran.
Everything it writes goes into the run's artifact folder.
"""
from __future__ import annotations

import logging
import subprocess
from abc import ABC, abstractmethod
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable

from core.endpoints import Endpoints, MininetHost
from core.errors import Unavailable
from core.processes import stop_child

log = logging.getLogger(__name__)


class SchemeUnavailable(Unavailable):
    """The scheme cannot run on this machine; the message says what is missing and the fix."""


class StillRunning(Exception):
    """A wait timed out with the process still running (not an error by itself)."""


class Scheme(ABC):
    """One uniform interface per scheme family."""

    name: str

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        """Acquire what the scheme needs for the run (held by `stack`); return facts for meta."""
        return {}

    @abstractmethod
    def start_receiver(self, ends: Endpoints) -> None: ...

    @abstractmethod
    def start_sender(self, ends: Endpoints, duration_s: float) -> None: ...

    @abstractmethod
    def wait_sender(self, timeout_s: float) -> None:
        """Block until the sender has finished; raise if it failed."""

    @abstractmethod
    def stop_sender(self) -> None:
        """End a sender still running after the span (the link serves nothing more).

        Not a failure: what it sent is measured. verify() must still succeed after it.
        """

    @abstractmethod
    def stop(self) -> None:
        """Stop every process the scheme started (idempotent)."""

    @abstractmethod
    def verify(self, ends: Endpoints) -> dict[str, Any]:
        """Check what really ran; raise RunInvalid on a mismatch; return facts for meta/metrics."""

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name}


class ManagedProcess:
    """A process started in a Mininet host, with its output in the artifact folder."""

    def __init__(self, host: MininetHost, args: list[str], out_dir: Path, label: str,
                 on_process: Callable[[int, str], None],
                 popen: Callable[..., subprocess.Popen[bytes]] | None = None) -> None:
        """`popen` starts it (the host's, unless given: a box's, schemes/submission/box.py)."""
        self.label = label
        self.args = args
        self.stdout_path = out_dir / f"{label}.stdout"
        self.stderr_path = out_dir / f"{label}.stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = (popen or host.popen)(args, stdout=out, stderr=err)
        on_process(self.proc.pid, Path(args[0]).name)

    def running(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout_s: float) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise StillRunning(f"{self.label} still running after {timeout_s:g} s") from None

    def stop(self, grace_s: float = 5.0) -> int:
        return stop_child(self.proc, grace_s)

    def stderr_tail(self, lines: int = 5) -> str:
        text = self.stderr_path.read_text(errors="replace").strip().splitlines()[-lines:]
        return " | ".join(text) or "(no output)"
