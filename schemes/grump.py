"""Datagrump-compatible contest controllers: our native sender/receiver pair."""
from __future__ import annotations

import json
from typing import Any

from core.paths import ProjectPaths
from schemes.base import Endpoints, ManagedProcess, RunInvalid, Scheme

GRUMP_PORT = 9000

# The controllers native/grump registers, and the options each one takes.
CONTROLLERS = ("fixed-window", "aimd", "delay-trigger", "dasjoshma", "johnnybameesh", "sheen")


class GrumpScheme(Scheme):
    def __init__(self, controller: str, paths: ProjectPaths, window: int | None = None) -> None:
        self.name = controller
        self.controller = controller
        self.window = window
        self.sender_bin = paths.native_binary("grump", "grump-sender")
        self.receiver_bin = paths.native_binary("grump", "grump-receiver")
        self.sender: ManagedProcess | None = None
        self.receiver: ManagedProcess | None = None

    def start_receiver(self, ends: Endpoints) -> None:
        self.receiver = ManagedProcess(
            ends.receiver, [str(self.receiver_bin), "--port", str(GRUMP_PORT),
                            "--stats", str(ends.out_dir / "grump-receiver.json")],
            ends.out_dir, "grump-receiver", ends.on_process)

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        args = [str(self.sender_bin), "--host", ends.receiver_ip, "--port", str(GRUMP_PORT),
                "--controller", self.controller, "--duration-s", f"{duration_s:g}",
                "--stats", str(ends.out_dir / "grump-sender.json")]
        if self.window is not None:
            args += ["--window", str(self.window)]
        self.sender = ManagedProcess(ends.sender, args, ends.out_dir, "grump-sender",
                                     ends.on_process)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.sender is not None
        code = self.sender.wait(timeout_s)
        if code != 0:
            raise RuntimeError(f"grump-sender exited with status {code}: {self.sender.stderr_tail()}")

    def stop(self) -> None:
        for proc in (self.sender, self.receiver):
            if proc is not None:
                proc.stop()

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.receiver is not None
        if self.receiver.proc.returncode not in (0, None):
            raise RunInvalid(f"grump-receiver failed: {self.receiver.stderr_tail()}")
        sender = json.loads((ends.out_dir / "grump-sender.json").read_text())
        receiver = json.loads((ends.out_dir / "grump-receiver.json").read_text())
        return {"sender": sender, "receiver": receiver}

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "grump", "controller": self.controller,
                "window": self.window}
