"""Schemes made of one native sender and one native receiver that write JSON stats."""
from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any

from core.endpoints import Endpoints
from core.errors import RunInvalid
from schemes.base import ManagedProcess, Scheme


class NativePairScheme(Scheme):
    """Subclasses say which programs to run with which arguments; the lifecycle is here."""

    # Labels of the two programs; their stats land in <label>.json in the run folder.
    sender_label: str
    receiver_label: str

    def __init__(self) -> None:
        self.sender: ManagedProcess | None = None
        self.receiver: ManagedProcess | None = None

    @abstractmethod
    def receiver_args(self, ends: Endpoints) -> list[str]: ...

    @abstractmethod
    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]: ...

    def stats_path(self, ends: Endpoints, label: str) -> str:
        return str(ends.out_dir / f"{label}.json")

    def start_receiver(self, ends: Endpoints) -> None:
        self.receiver = ManagedProcess(ends.receiver, self.receiver_args(ends), ends.out_dir,
                                       self.receiver_label, ends.on_process)

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        self.sender = ManagedProcess(ends.sender, self.sender_args(ends, duration_s),
                                     ends.out_dir, self.sender_label, ends.on_process)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.sender is not None
        code = self.sender.wait(timeout_s)
        if code != 0:
            raise RuntimeError(f"{self.sender_label} exited with status {code}: "
                               f"{self.sender.stderr_tail()}")

    def stop_sender(self) -> None:
        assert self.sender is not None
        self.sender.stop()

    def stop(self) -> None:
        for proc in (self.sender, self.receiver):
            if proc is not None:
                proc.stop()

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.receiver is not None
        if self.receiver.proc.returncode not in (0, None):
            raise RunInvalid(f"{self.receiver_label} failed: {self.receiver.stderr_tail()}")
        return {"sender": self._stats(ends, self.sender_label),
                "receiver": self._stats(ends, self.receiver_label)}

    def _stats(self, ends: Endpoints, label: str) -> dict[str, Any]:
        path = ends.out_dir / f"{label}.json"
        if not path.exists():
            raise RunInvalid(f"{label} wrote no stats ({path.name})")
        return json.loads(path.read_text())
