"""The shape of a scheme family's table: one `SchemeEntry` per scheme.

Every fact about a scheme lives in its entry: its name and family, what `repro
list` says about it, its parameters (type, range, flag, help), how a run builds
it, and how figures draw it (label, colour, marker). The CLI, `repro list`,
parameter checking, the run factory and analysis/scheme_labels.py all read the
tables; `schemes/registry.py` joins the families' tables. See
docs/adding-a-scheme.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from core.errors import UsageError

if TYPE_CHECKING:
    from core.paths import ProjectPaths
    from core.runspec import RunSpec
    from schemes.base import Scheme


class SchemeParameterError(UsageError):
    """A parameter the scheme does not take, or out of its range: refused, never ignored."""


@dataclass(frozen=True)
class Param:
    """One parameter a scheme reads from its RunSpec (`spec.params[name]`).

    `flag` is how the CLI spells it; a flag shared by several schemes (`--window`)
    must mean the same and have the same type in each. `default` is what the scheme
    uses when the parameter is absent (None with `required`: it must be given).
    """

    name: str
    type: type  # int, float or str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    default: Any = None
    required: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def accepted(self) -> str:
        """The accepted values, for messages and --help."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        kind = "an integer" if self.type is int else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} from {self.minimum:g} to {self.maximum:g}"
        if self.minimum is not None:
            return f"{kind} of at least {self.minimum:g}"
        return kind

    def check(self, scheme: str, value: Any) -> None:
        """Raise SchemeParameterError naming the flag and the accepted range."""
        bad = SchemeParameterError(
            f"{scheme}: {self.flag} {value!r} is out of range: {self.accepted()}")
        if self.choices:
            if value not in self.choices:
                raise bad
            return
        if self.type is str:
            if not isinstance(value, str):
                raise bad
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        if not math.isfinite(value) or (self.type is int and value != int(value)):
            raise bad
        if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum):
            raise bad


# How a run builds the scheme: (the entry, the run's spec, the project's paths) -> Scheme.
Factory = Callable[["SchemeEntry", "RunSpec", "ProjectPaths"], "Scheme"]


@dataclass(frozen=True)
class SchemeEntry:
    name: str
    family: str
    description: str
    build: Factory = field(repr=False)
    params: tuple[Param, ...] = ()
    label: str = ""  # the paper's spelling on figures; the name when empty
    colour: str = ""  # matplotlib colour; empty: one chosen from the name
    marker: str = ""
    listed: bool = True  # shown by `repro list` and `repro one --scheme`
    # A check across parameters (given values merged over the defaults), raising
    # SchemeParameterError; e.g. the delay trigger's low threshold below its high one.
    check_values: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False)

    @property
    def display_name(self) -> str:
        return self.label or self.name

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def check(self, params: dict[str, Any]) -> None:
        """Refuse parameters this scheme would ignore, out of range, or missing."""
        extra = sorted(k for k in params if self.param(k) is None)
        if extra:
            takes = ", ".join(p.flag for p in self.params) or "no parameters"
            names = ", ".join(_flag_of(k) for k in extra)
            raise SchemeParameterError(f"{self.name} does not take {names}; it takes {takes}")
        for p in self.params:
            if p.name in params:
                p.check(self.name, params[p.name])
            elif p.required:
                raise SchemeParameterError(
                    f"{self.name} needs {p.flag} ({p.accepted()}): {p.help}")
        if self.check_values is not None:
            merged = {p.name: p.default for p in self.params if p.default is not None}
            merged.update(params)
            self.check_values(merged)

    def value(self, spec: "RunSpec", name: str) -> Any:
        """The run's value of a declared parameter, else its default."""
        p = self.param(name)
        if p is None:
            raise KeyError(f"{self.name} declares no parameter {name!r}")
        return spec.param(name, p.default)


def _flag_of(name: str) -> str:
    return "--" + name.replace("_", "-")
