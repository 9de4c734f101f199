"""Command-line values checked before anything is built.

Each check names the flag and the accepted range; argparse turns the refusal into
`repro: error: argument --flag: ...` and exit status 2. check_spec() applies the
same ranges to a whole RunSpec (what `repro one` builds), with the scheme's own
parameter rules (schemes/registry.py).
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Callable

from core.errors import UsageError
from core.runspec import RunSpec


class InvalidValue(UsageError):
    """A value outside its flag's accepted range; the message names both."""


@dataclass(frozen=True)
class Range:
    flag: str
    kind: type  # int or float
    low: float
    high: float
    low_open: bool = False  # low itself is not accepted
    high_open: bool = False
    unit: str = ""

    def accepted(self) -> str:
        kind = "an integer" if self.kind is int else "a number"
        left = f"{self.low:g} < " if self.low_open else f"{self.low:g} <= "
        right = f" < {self.high:g}" if self.high_open else f" <= {self.high:g}"
        unit = f" ({self.unit})" if self.unit else ""
        return f"{kind}{unit}, {left}{self.flag.lstrip('-')}{right}"

    def check(self, value: float) -> float:
        if isinstance(value, float) and not math.isfinite(value) or \
                value < self.low or (self.low_open and value == self.low) or \
                value > self.high or (self.high_open and value == self.high):
            raise InvalidValue(f"{self.flag}: {value:g} is out of range; accepted: "
                               f"{self.accepted()}")
        return value

    def parse(self, text: str) -> float:
        try:
            value = self.kind(text)
        except ValueError:
            raise InvalidValue(f"{self.flag}: {text!r} is not {self.accepted()}") from None
        return self.check(value)

    def argtype(self) -> Callable[[str], float]:
        """For argparse's type=: the refusal becomes a usage error (exit status 2)."""
        def parse(text: str) -> float:
            try:
                return self.parse(text)
            except InvalidValue as e:
                raise argparse.ArgumentTypeError(str(e)) from None
        parse.__name__ = self.flag  # argparse names the type in some messages
        return parse


# The emulator's span is whole milliseconds above 0.
DURATION = Range("--duration", float, 0.001, 86400.0, unit="seconds")
DELAY_MS = Range("--delay-ms", int, 0, 10_000, unit="milliseconds each way")
JOBS = Range("--jobs", int, 1, 256, unit="runs side by side")
TRIALS = Range("--trials", int, 1, 1000)


def check_spec(spec: RunSpec) -> None:
    """The ranges above, and the scheme's parameter rules (their ranges are in the scheme
    tables, schemes/table.py), for one RunSpec."""
    from core.queue_spec import parse_queue
    from schemes.registry import check_params
    check_params(spec)  # an unknown scheme, a parameter it would ignore, one it needs
    if spec.duration_s is not None:
        DURATION.check(spec.duration_s)
    DELAY_MS.check(spec.delay_ms)
    parse_queue(spec.queue)
