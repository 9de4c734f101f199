"""Sprout and Sprout-EWMA (NSDI 2013): our native programs.

One direction: the receiver infers the link rate and sends forecasts back; the
sender is a saturating application that sends what the forecast window allows.
Both directions at once (the paper's mode): one `sprout-peer` on each host,
each a saturating sender and a receiver whose forecasts ride on its own data.
A sending end that never hears a forecast exits non-zero, so the run fails
instead of plotting a zero-throughput point.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.paths import ProjectPaths
from core.run_span import both_directions
from core.endpoints import Endpoints
from schemes.native_pair import NativePairScheme
from core.settings import Setting
from schemes.table import SchemeEntry

# The native programs this module starts (Sprout's endpoints): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("sprout",)

if TYPE_CHECKING:
    from core.runspec import RunSpec

SPROUT_PORT = 9100
# The paper's "confidence": the probability that the forecast deliveries happen. Sprout sends
# what the 5th percentile of its forecast says will be delivered: 95% confidence (the default).
# The programs take the forecast's quantile, 1 - confidence.
DEFAULT_CONFIDENCE = 0.95


class SproutScheme(NativePairScheme):
    sender_label = "sprout-sender"
    receiver_label = "sprout-receiver"

    def __init__(self, name: str, paths: ProjectPaths,
                 confidence: float = DEFAULT_CONFIDENCE, both_directions: bool = False) -> None:
        super().__init__()
        self.both = both_directions
        self.peer_bin = paths.native_binary("sprout", "sprout-peer")
        if self.both:
            self.sender_label = "sprout-peer-client"
            self.receiver_label = "sprout-peer-listener"
        if name not in MODELS:
            raise ValueError(f"not a Sprout scheme: {name}")
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence {confidence} must be in (0, 1) (0.95: the paper's "
                             "default, the forecast's 5th percentile)")
        self.name = name
        self.ewma = name == "sprout-ewma"
        self.confidence = confidence
        self.sender_bin = paths.native_binary("sprout", "sprout-sender")
        self.receiver_bin = paths.native_binary("sprout", "sprout-receiver")

    def _model_args(self) -> list[str]:
        return ["--quantile", f"{self.quantile:g}"] + (["--ewma"] if self.ewma else [])

    @property
    def quantile(self) -> float:
        """The forecast's lower quantile the programs use: 1 - the confidence."""
        return round(1.0 - self.confidence, 12)

    def receiver_args(self, ends: Endpoints) -> list[str]:
        if self.both:
            return [str(self.peer_bin), "--port", str(SPROUT_PORT), *self._model_args(),
                    "--stats", self.stats_path(ends, self.receiver_label)]
        args = [str(self.receiver_bin), "--port", str(SPROUT_PORT),
                "--quantile", f"{self.quantile:g}",
                "--stats", self.stats_path(ends, self.receiver_label)]
        return args + (["--ewma"] if self.ewma else [])

    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]:
        if self.both:
            return [str(self.peer_bin), "--connect", ends.receiver_ip,
                    "--port", str(SPROUT_PORT), *self._model_args(),
                    "--duration-s", f"{duration_s:g}",
                    "--stats", self.stats_path(ends, self.sender_label)]
        return [str(self.sender_bin), "--host", ends.receiver_ip, "--port", str(SPROUT_PORT),
                "--duration-s", f"{duration_s:g}",
                "--stats", self.stats_path(ends, self.sender_label)]

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "sprout", "confidence": self.confidence,
                "quantile": self.quantile,
                "program": "sprout-peer (both directions)" if self.both
                else "sprout-sender/sprout-receiver (one direction)"}


def _build(entry: SchemeEntry, spec: "RunSpec", paths: ProjectPaths) -> SproutScheme:
    return SproutScheme(entry.name, paths, confidence=float(entry.value(spec, "confidence")),
                        both_directions=both_directions(spec))


CONFIDENCE = Setting("confidence", float, "the paper's confidence that the forecast "
                     "deliveries happen (risk knob; 0.95: the forecast's 5th percentile)",
                     minimum=0.001, maximum=0.999, default=DEFAULT_CONFIDENCE)
TABLE: tuple[SchemeEntry, ...] = (
    SchemeEntry("sprout", "sprout", "Sprout (stochastic forecasts), our implementation", _build,
                params=(CONFIDENCE,), label="Sprout", colour="tab:red", marker="*"),
    SchemeEntry("sprout-ewma", "sprout", "Sprout-EWMA, our implementation", _build,
                params=(CONFIDENCE,), label="Sprout-EWMA", colour="tab:orange", marker="P"),
)
MODELS = tuple(e.name for e in TABLE)
