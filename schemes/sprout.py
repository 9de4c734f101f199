"""Sprout and Sprout-EWMA (NSDI 2013): our native sender/receiver pair.

The receiver infers the link rate and sends forecasts back; the sender is a
saturating application that sends what the forecast window allows. A sender
that never hears a forecast exits non-zero, so the run fails instead of
plotting a zero-throughput point.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.paths import ProjectPaths
from schemes.base import Endpoints
from schemes.native_pair import NativePairScheme
from schemes.table import Param, SchemeEntry

if TYPE_CHECKING:
    from core.runspec import RunSpec

SPROUT_PORT = 9100
DEFAULT_CONFIDENCE = 0.05


class SproutScheme(NativePairScheme):
    sender_label = "sprout-sender"
    receiver_label = "sprout-receiver"

    def __init__(self, name: str, paths: ProjectPaths,
                 confidence: float = DEFAULT_CONFIDENCE) -> None:
        super().__init__()
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


def _build(entry: SchemeEntry, spec: "RunSpec", paths: ProjectPaths) -> SproutScheme:
    return SproutScheme(entry.name, paths, confidence=float(entry.value(spec, "confidence")))


CONFIDENCE = Param("confidence", float, "forecast percentile the sender trusts (risk knob)",
                   minimum=0.001, maximum=0.999, default=DEFAULT_CONFIDENCE)
TABLE: tuple[SchemeEntry, ...] = (
    SchemeEntry("sprout", "sprout", "Sprout (stochastic forecasts), our implementation", _build,
                params=(CONFIDENCE,), label="Sprout", colour="tab:red", marker="*"),
    SchemeEntry("sprout-ewma", "sprout", "Sprout-EWMA, our implementation", _build,
                params=(CONFIDENCE,), label="Sprout-EWMA", colour="tab:orange", marker="P"),
)
MODELS = tuple(e.name for e in TABLE)
