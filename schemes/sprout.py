"""Sprout and Sprout-EWMA (NSDI 2013): our native sender/receiver pair.

The receiver infers the link rate and sends forecasts back; the sender is a
saturating application that sends what the forecast window allows. A sender
that never hears a forecast exits non-zero, so the run fails instead of
plotting a zero-throughput point.
"""
from __future__ import annotations

from typing import Any

from core.paths import ProjectPaths
from schemes.base import Endpoints
from schemes.native_pair import NativePairScheme

SPROUT_PORT = 9100
DEFAULT_CONFIDENCE = 0.05
MODELS = ("sprout", "sprout-ewma")


class SproutScheme(NativePairScheme):
    sender_label = "sprout-sender"
    receiver_label = "sprout-receiver"

    def __init__(self, name: str, paths: ProjectPaths,
                 confidence: float = DEFAULT_CONFIDENCE) -> None:
        super().__init__()
        if name not in MODELS:
            raise ValueError(f"not a Sprout scheme: {name}")
        self.name = name
        self.ewma = name == "sprout-ewma"
        self.confidence = confidence
        self.sender_bin = paths.native_binary("sprout", "sprout-sender")
        self.receiver_bin = paths.native_binary("sprout", "sprout-receiver")

    def receiver_args(self, ends: Endpoints) -> list[str]:
        args = [str(self.receiver_bin), "--port", str(SPROUT_PORT),
                "--confidence", f"{self.confidence:g}",
                "--stats", self.stats_path(ends, self.receiver_label)]
        return args + (["--ewma"] if self.ewma else [])

    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]:
        return [str(self.sender_bin), "--host", ends.receiver_ip, "--port", str(SPROUT_PORT),
                "--duration-s", f"{duration_s:g}",
                "--stats", self.stats_path(ends, self.sender_label)]

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "sprout", "confidence": self.confidence}
