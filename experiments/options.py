"""Options an experiment declares: run parameters beyond the scheme's.

An experiment lists them in its class attribute `options`; the CLI adds one
flag per option to `repro run`, validates the value (type, choices, range)
before anything is built, and `repro list` shows them. The chosen values are
put into every RunSpec's `options`, so they are part of each run's id.

    class MyExperiment(Experiment):
        options = (
            ExperimentOption("one_way", "--one-way", bool, False,
                             "measure delay one way instead of round trip"),
            ExperimentOption("warmup_skip_s", "--warmup-skip-s", float, 0.0,
                             "seconds left out at the start", minimum=0, maximum=60),
            ExperimentOption("pattern", "--pattern", str, "none", "the drop pattern",
                             choices=("none", "single", "burst")),
        )
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from core.errors import UsageError

OPTION_TYPES = (bool, int, float, str)


class OptionError(UsageError):
    """An option value the experiment does not accept; the message names the flag."""


@dataclass(frozen=True)
class ExperimentOption:
    name: str  # the key in RunSpec.options (a Python identifier)
    flag: str  # the command-line flag, e.g. --warmup-skip-s
    type: type  # bool (a switch), int, float or str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        if self.type not in OPTION_TYPES:
            raise TypeError(f"{self.flag}: type must be one of bool, int, float, str")
        if not self.name.isidentifier() or not self.flag.startswith("--"):
            raise ValueError(f"option {self.name!r}: a Python name and a --flag are needed")
        self.check(self.default)

    def accepted(self) -> str:
        """The accepted values, for messages and `repro list`."""
        if self.type is bool:
            return "a switch (on when given)"
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        low = "" if self.minimum is None else f"{self.minimum:g} <= "
        high = "" if self.maximum is None else f" <= {self.maximum:g}"
        kind = {int: "an integer", float: "a number", str: "text"}[self.type]
        return f"{kind}" + (f" {low}value{high}" if low or high else "")

    def parse(self, text: str) -> Any:
        """A command-line value, converted and checked."""
        try:
            value = self.type(text)
        except ValueError:
            raise OptionError(f"{self.flag}: {text!r} is not {self.accepted()}") from None
        return self.check(value)

    def check(self, value: Any) -> Any:
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            raise OptionError(f"{self.flag}: {value!r} is not {self.accepted()}")
        if self.choices is not None and value not in self.choices:
            raise OptionError(f"{self.flag}: {value!r} is not {self.accepted()}")
        number: Any = value  # an int or a float here when a range is declared
        if (self.minimum is not None and number < self.minimum) or \
                (self.maximum is not None and number > self.maximum):
            raise OptionError(f"{self.flag}: {value!r} is out of range: {self.accepted()}")
        return value

    def describe(self) -> str:
        return f"{self.flag}: {self.help} ({self.accepted()}; default {self.default!r})"


def resolve(declared: Iterable[ExperimentOption], given: Mapping[str, Any],
            experiment: str) -> dict[str, Any]:
    """Every declared option's value (given, else its default); refuse undeclared ones."""
    declared = tuple(declared)
    known = {o.name: o for o in declared}
    extra = sorted(set(given) - set(known))
    if extra:
        takes = ", ".join(o.flag for o in declared) or "no options"
        raise OptionError(f"{experiment} does not take "
                          f"{', '.join(_flag(name) for name in extra)}; it takes {takes}")
    return {name: option.check(given[name]) if name in given else option.default
            for name, option in known.items()}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
