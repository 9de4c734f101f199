"""Every scheme, by name: the families' tables joined (schemes/table.py).

Adding a scheme to a family is one entry in that family's TABLE; adding a family
is a module with a TABLE and one line in FAMILIES below. The CLI, `repro list`,
parameter checking, the run factory and figure labels all read from here.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from core.checks import Check
from core.errors import UsageError
from core.paths import ProjectPaths
from core.runspec import RunSpec
from schemes import grump, sprout, tcp, tcp_aqm
from schemes.submission import scheme as submission
from schemes.base import Scheme
from core.settings import Setting
from schemes.table import SchemeEntry, SchemeParameterError

__all__ = ["SchemeParameterError", "UnknownScheme", "TCP_VARIANTS", "all_entries",
           "scheme_entry", "known_schemes", "accepted_params", "check_params", "make_scheme",
           "shared_params", "scheme_needs", "scheme_module", "SCHEME_REGISTRY"]

FAMILY_MODULES: tuple[ModuleType, ...] = (tcp, tcp_aqm, grump, sprout, submission)
FAMILIES: tuple[tuple[SchemeEntry, ...], ...] = tuple(f.TABLE for f in FAMILY_MODULES)

TCP_VARIANTS = tcp.TCP_VARIANTS


class UnknownScheme(UsageError):
    pass


@dataclass(frozen=True)
class SchemeInfo:
    name: str
    family: str
    description: str
    flags: tuple[str, ...] = ()


def all_entries() -> list[SchemeEntry]:
    return [entry for family in FAMILIES for entry in family]


def scheme_entry(name: str) -> SchemeEntry:
    for entry in all_entries():
        if entry.name == name:
            return entry
    raise UnknownScheme(f"unknown scheme {name!r}; known: "
                        + ", ".join(e.name for e in all_entries() if e.listed))


def known_schemes() -> list[SchemeInfo]:
    return [SchemeInfo(e.name, e.family, e.description, tuple(p.flag for p in e.params))
            for e in all_entries() if e.listed]


def accepted_params(name: str) -> frozenset[str]:
    """The RunSpec parameters scheme `name` reads."""
    return frozenset(p.name for p in scheme_entry(name).params)


def check_params(spec: RunSpec) -> None:
    """Refuse parameters the scheme would ignore (they would also change the run's id),
    values out of their declared range, and missing required ones."""
    scheme_entry(spec.scheme).check(dict(spec.params))


# This module's name: it imports every family, so what it imports is not a run's code (a
# run's own family is: `scheme_module`).
SCHEME_REGISTRY = __name__


def scheme_module(name: str) -> str:
    """The module of the family that builds scheme `name` (the code its runs execute)."""
    return scheme_entry(name).build.__module__


def scheme_needs(spec: RunSpec) -> dict[str, float]:
    """What a run of the spec's scheme needs of a cluster worker (its entry's `needs`)."""
    entry = scheme_entry(spec.scheme)
    return dict(entry.needs(spec)) if entry.needs is not None else {}


def explain_need(resource: str) -> str | None:
    """What a worker lacking `resource`, a scheme family's need, lacks and the fix."""
    for family in FAMILY_MODULES:
        text = family.explain_need(resource) if hasattr(family, "explain_need") else None
        if text:
            return str(text)
    return None


def prepare_on_worker(spec: RunSpec, attachment: Any, paths: ProjectPaths,
                      host: str | None = None) -> Any:
    """What a run carries to a cluster worker beside its spec (a submission's sources),
    made ready there by the run's scheme family (its module's `prepare_on_worker`): a
    result with `ok`, `reason`, `log` and `facts`."""
    module = scheme_module(spec.scheme)
    family = next(f for f in FAMILY_MODULES if f.__name__ == module)
    prepare = getattr(family, "prepare_on_worker", None)
    if prepare is None:
        raise UsageError(f"{spec.scheme}: its runs carry nothing to a worker "
                         f"({module} prepares nothing)")
    return prepare(spec, attachment, paths, host)


def worker_offers(paths: ProjectPaths) -> list[str]:
    """What the scheme families offer their runs on this machine as a cluster worker, beyond
    congestion controls (a family module may define `worker_offers(paths)`)."""
    return [t for family in FAMILY_MODULES
            for t in (family.worker_offers(paths) if hasattr(family, "worker_offers") else [])]


def doctor_checks(paths: ProjectPaths) -> list[Check]:
    """What the scheme families need of this machine beyond the common checks (a family
    module may define `doctor_checks(paths)`)."""
    return [c for family in FAMILY_MODULES
            for c in (family.doctor_checks(paths) if hasattr(family, "doctor_checks") else [])]


def make_scheme(spec: RunSpec, paths: ProjectPaths) -> Scheme:
    entry = scheme_entry(spec.scheme)
    entry.check(dict(spec.params))
    return entry.build(entry, spec, paths)


@dataclass(frozen=True)
class SharedParam:
    """One CLI flag: a parameter name and every listed scheme that takes it."""

    param: Setting
    schemes: tuple[str, ...]

    @property
    def flag(self) -> str:
        return self.param.flag

    def help(self) -> str:
        lines: dict[str, list[str]] = {}
        for name in self.schemes:
            p = scheme_entry(name).param(self.param.name)
            assert p is not None
            default = "" if p.default is None else f", default {p.default:g}" \
                if isinstance(p.default, (int, float)) else f", default {p.default}"
            lines.setdefault(f"{p.help} ({p.accepted()}{default})", []).append(name)
        return "; ".join(f"{', '.join(names)}: {text}" for text, names in lines.items())


def shared_params() -> list[SharedParam]:
    """Every parameter name of the listed schemes, once, with the schemes that take it.

    A name means one type everywhere (the CLI has one flag for it); a table that gives
    one name two types is refused here, and by a unit test.
    """
    found: dict[str, tuple[Setting, list[str]]] = {}
    for entry in all_entries():
        if not entry.listed:
            continue
        for p in entry.params:
            if p.name in found and found[p.name][0].type is not p.type:
                raise TypeError(f"parameter {p.name} is {found[p.name][0].type.__name__} in "
                                f"{found[p.name][1][0]} but {p.type.__name__} in {entry.name}")
            found.setdefault(p.name, (p, []))[1].append(entry.name)
    return [SharedParam(p, tuple(names)) for p, names in found.values()]


def params_from_values(scheme: str, values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The RunSpec params of `scheme` from CLI values by parameter name (None: not given)."""
    entry = scheme_entry(scheme)
    given = {k: v for k, v in values.items() if v is not None}
    for name, value in list(given.items()):
        declared = entry.param(name)
        # A mode given as its default (--cc-impl auto) is the run without it: the same id.
        if declared is not None and declared.choices and value == declared.default:
            del given[name]
    entry.check(given)
    return tuple(sorted(given.items()))
