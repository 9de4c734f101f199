"""A setting: a flag with a type, the values it accepts, and its help.

One type serves every value a user gives: the command line's own flags
(`--jobs`, `--duration`), a scheme's parameters (`--window`, `--confidence`)
and an experiment's options (`--one-way`, `--pattern`). Each is checked the
same way before anything is built, and a refusal names the flag and what it
accepts (a `SettingError`, exit status 2).

    JOBS = Setting("jobs", int, "runs side by side", minimum=1, maximum=256)
    PATTERN = Setting("pattern", str, "the drop pattern", default="all",
                      validate=DropPlan.parse)
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from core.errors import UsageError

TYPES = (bool, int, float, str)


def for_argparse(text: str) -> str:
    """`text` as argparse's help=: argparse formats help with `%`, so a literal one ("0.01 is
    1%") must be doubled or `--help` raises."""
    return text.replace("%", "%%")


class SettingError(UsageError):
    """A value its setting does not accept; the message names the flag and what it accepts."""


@dataclass(frozen=True)
class Setting:
    name: str  # a Python identifier: the key in RunSpec.params or RunSpec.options
    type: type  # bool (a switch), int, float or str
    help: str
    default: Any = None
    flag: str = ""  # how the command line spells it; --name-with-dashes when empty
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    low_open: bool = False  # the minimum itself is refused
    high_open: bool = False
    unit: str = ""
    required: bool = False  # no default: it must be given
    # A check beyond type, choices and range (a drop pattern's grammar, say): raises
    # ValueError saying why; its message is passed on after the flag.
    validate: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise TypeError(f"setting {self.name!r}: the type must be bool, int, float or str")
        if not self.name.isidentifier():
            raise ValueError(f"setting {self.name!r}: its name must be a Python identifier")
        if not self.flag:
            object.__setattr__(self, "flag", "--" + self.name.replace("_", "-"))
        if not self.flag.startswith("--"):
            raise ValueError(f"setting {self.name!r}: its flag must start with --")
        if self.default is not None:
            self.check(self.default)

    def accepted(self) -> str:
        """What the setting accepts, for messages, --help and `repro list`."""
        if self.type is bool:
            return "a switch (on when given)"
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.type is str:
            return "text"
        kind = "an integer" if self.type is int else "a number"
        unit = f" ({self.unit})" if self.unit else ""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            left = "above" if self.low_open else "from"
            right = "below" if self.high_open else "to"
            return f"{kind}{unit} {left} {low:g} {right} {high:g}"
        if low is not None:
            return f"{kind}{unit} {'above' if self.low_open else 'of at least'} {low:g}"
        if high is not None:
            return f"{kind}{unit} {'below' if self.high_open else 'of at most'} {high:g}"
        return f"{kind}{unit}"

    def check(self, value: Any) -> Any:
        """The value, converted (an int where a float is asked for) and checked."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is not bool and isinstance(value, bool)):
            raise SettingError(f"{self.flag}: {value!r} is not {self.accepted()}")
        if self.choices and value not in self.choices:
            raise SettingError(f"{self.flag}: {value!r} is not {self.accepted()}")
        if isinstance(value, (int, float)) and not self._in_range(value):
            raise SettingError(f"{self.flag}: {value!r} is out of range: {self.accepted()}")
        if self.validate is not None:
            try:
                self.validate(value)
            except ValueError as e:
                raise SettingError(f"{self.flag}: {e}") from None
        return value

    def _in_range(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        low, high = self.minimum, self.maximum
        if low is not None and (value < low or (self.low_open and value == low)):
            return False
        if high is not None and (value > high or (self.high_open and value == high)):
            return False
        return True

    def parse(self, text: str) -> Any:
        """A value from the command line, converted and checked."""
        if self.type is bool:
            raise SettingError(f"{self.flag} is a switch: give it without a value")
        try:
            value = self.type(text)
        except ValueError:
            raise SettingError(f"{self.flag}: {text!r} is not {self.accepted()}") from None
        return self.check(value)

    def argtype(self) -> Callable[[str], Any]:
        """For argparse's type=: a refusal becomes argparse's usage error (exit status 2)."""
        def parse(text: str) -> Any:
            try:
                return self.parse(text)
            except SettingError as e:  # argparse names the flag itself
                raise argparse.ArgumentTypeError(str(e).removeprefix(f"{self.flag}: ")) from None
        parse.__name__ = self.flag  # argparse names the type in some messages
        return parse

    def describe(self) -> str:
        default = "" if self.default is None else f"; default {self.default!r}"
        return f"{self.flag}: {self.help} ({self.accepted()}{default})"
