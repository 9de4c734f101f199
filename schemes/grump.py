"""Datagrump-compatible contest controllers: our native sender/receiver pair."""
from __future__ import annotations

from typing import Any

from core.paths import ProjectPaths
from schemes.base import Endpoints
from schemes.native_pair import NativePairScheme

GRUMP_PORT = 9000

# The controllers native/grump registers.
CONTROLLERS = ("fixed-window", "aimd", "delay-trigger", "dasjoshma", "johnnybameesh", "sheen")
# The ones that take --window (the others set their own window and refuse it).
TAKES_WINDOW = ("fixed-window", "aimd", "delay-trigger")


class GrumpScheme(NativePairScheme):
    sender_label = "grump-sender"
    receiver_label = "grump-receiver"

    def __init__(self, controller: str, paths: ProjectPaths, window: int | None = None) -> None:
        super().__init__()
        self.name = controller
        self.controller = controller
        self.window = window
        self.sender_bin = paths.native_binary("grump", "grump-sender")
        self.receiver_bin = paths.native_binary("grump", "grump-receiver")

    def receiver_args(self, ends: Endpoints) -> list[str]:
        return [str(self.receiver_bin), "--port", str(GRUMP_PORT),
                "--stats", self.stats_path(ends, self.receiver_label)]

    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]:
        args = [str(self.sender_bin), "--host", ends.receiver_ip, "--port", str(GRUMP_PORT),
                "--controller", self.controller, "--duration-s", f"{duration_s:g}",
                "--stats", self.stats_path(ends, self.sender_label)]
        if self.window is not None:
            args += ["--window", str(self.window)]
        return args

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "grump", "controller": self.controller,
                "window": self.window}
