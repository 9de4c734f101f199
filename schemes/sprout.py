"""Sprout and Sprout-EWMA (NSDI 2013): our native sender/receiver pair.

The receiver infers the link rate and sends forecasts back; the sender is a
saturating application that sends what the forecast window allows. A run whose
sender never heard a forecast fails (never a zero-throughput point).
"""
from __future__ import annotations

import json
from typing import Any

from core.paths import ProjectPaths
from schemes.base import Endpoints, ManagedProcess, RunInvalid, Scheme

SPROUT_PORT = 9100
DEFAULT_CONFIDENCE = 0.05
MODELS = {"sprout": "sprout", "sprout-ewma": "sprout-ewma"}


class SproutScheme(Scheme):
    def __init__(self, name: str, paths: ProjectPaths,
                 confidence: float = DEFAULT_CONFIDENCE) -> None:
        if name not in MODELS:
            raise ValueError(f"not a Sprout scheme: {name}")
        self.name = name
        self.ewma = name == "sprout-ewma"
        self.confidence = confidence
        self.sender_bin = paths.native_binary("sprout", "sprout-sender")
        self.receiver_bin = paths.native_binary("sprout", "sprout-receiver")
        self.sender: ManagedProcess | None = None
        self.receiver: ManagedProcess | None = None

    def start_receiver(self, ends: Endpoints) -> None:
        args = [str(self.receiver_bin), "--port", str(SPROUT_PORT),
                "--confidence", f"{self.confidence:g}",
                "--stats", str(ends.out_dir / "sprout-receiver.json")]
        if self.ewma:
            args.append("--ewma")
        self.receiver = ManagedProcess(ends.receiver, args, ends.out_dir, "sprout-receiver",
                                       ends.on_process)

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        args = [str(self.sender_bin), "--host", ends.receiver_ip, "--port", str(SPROUT_PORT),
                "--duration-s", f"{duration_s:g}",
                "--stats", str(ends.out_dir / "sprout-sender.json")]
        self.sender = ManagedProcess(ends.sender, args, ends.out_dir, "sprout-sender",
                                     ends.on_process)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.sender is not None
        code = self.sender.wait(timeout_s)
        if code != 0:
            raise RuntimeError(f"sprout-sender exited with status {code}: "
                               f"{self.sender.stderr_tail()}")

    def stop(self) -> None:
        for proc in (self.sender, self.receiver):
            if proc is not None:
                proc.stop()

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.receiver is not None
        if self.receiver.proc.returncode not in (0, None):
            raise RunInvalid(f"sprout-receiver failed: {self.receiver.stderr_tail()}")
        sender = json.loads((ends.out_dir / "sprout-sender.json").read_text())
        receiver = json.loads((ends.out_dir / "sprout-receiver.json").read_text())
        return {"sender": sender, "receiver": receiver}

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "sprout", "confidence": self.confidence}
