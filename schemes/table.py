"""The shape of a scheme family's table: one `SchemeEntry` per scheme.

Every fact about a scheme lives in its entry: its name and family, what `repro
list` says about it, its parameters (type, range, flag, help), how a run builds
it, and how figures draw it (label, colour, marker). The CLI, `repro list`,
parameter checking, the run factory and analysis/scheme_labels.py all read the
tables; `schemes/registry.py` joins the families' tables. See
docs/adding-a-scheme.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from core.settings import Setting, SettingError

if TYPE_CHECKING:
    from core.paths import ProjectPaths
    from core.runspec import RunSpec
    from schemes.base import Scheme


class SchemeParameterError(SettingError):
    """A parameter the scheme does not take, or out of its range: refused, never ignored."""


# How a run builds the scheme: (the entry, the run's spec, the project's paths) -> Scheme.
Factory = Callable[["SchemeEntry", "RunSpec", "ProjectPaths"], "Scheme"]


@dataclass(frozen=True)
class SchemeEntry:
    name: str
    family: str
    description: str
    build: Factory = field(repr=False)
    # What the scheme reads from its RunSpec (`spec.params[name]`): each setting's `default` is
    # what it uses when absent. A flag shared by several schemes (`--window`) must mean the
    # same and have the same type in each.
    params: tuple[Setting, ...] = ()
    label: str = ""  # the paper's spelling on figures; the name when empty
    colour: str = ""  # matplotlib colour; empty: one chosen from the name
    marker: str = ""
    listed: bool = True  # shown by `repro list` and `repro one --scheme`
    # A check across parameters (given values merged over the defaults), raising
    # SchemeParameterError; e.g. the delay trigger's low threshold below its high one.
    check_values: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False)
    # What a run of it needs of a cluster worker beyond a slot (core/worker_resources.py):
    # resource name -> amount; None: nothing.
    needs: Callable[["RunSpec"], dict[str, float]] | None = field(default=None, repr=False)

    @property
    def display_name(self) -> str:
        return self.label or self.name

    def param(self, name: str) -> Setting | None:
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
                try:
                    p.check(params[p.name])
                except SettingError as e:
                    raise SchemeParameterError(f"{self.name}: {e}") from None
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
