"""Datagrump-compatible contest controllers: our native sender/receiver pair.

The controllers are listed once, in native/grump/controllers.tsv, which the
native build reads too; this module turns its rows into the grump family's
scheme table (names, descriptions, parameters with their ranges, looks).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.paths import REPO_ROOT, ProjectPaths
from core.endpoints import Endpoints
from schemes.native_pair import NativePairScheme
from core.settings import Setting
from schemes.table import SchemeEntry, SchemeParameterError

# The native programs this module starts (the datagrump sender and receiver): hashed into
# the id of every run that imports it (core/code_identity.py).
NATIVE = ("grump",)
PORT = 9000  # the datagram receiver's

if TYPE_CHECKING:
    from core.runspec import RunSpec

CONTROLLERS_FILE = REPO_ROOT / "native" / "grump" / "controllers.tsv"
_TYPES = {"int": int, "float": float}


class ControllerTableError(ValueError):
    """controllers.tsv is malformed; the message names the line."""


@dataclass(frozen=True)
class ControllerRow:
    name: str
    cpp_class: str
    stem: str
    label: str
    colour: str
    marker: str
    description: str
    params: tuple[Setting, ...]


def read_controllers(path: Path = CONTROLLERS_FILE) -> list[ControllerRow]:
    """The rows of controllers.tsv, in file order, checked as the CMake build reads them."""
    rows: list[ControllerRow] = []
    params: dict[str, list[Setting]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{path.name}:{number}"
        if ";" in line:
            raise ControllerTableError(f"{where}: no semicolons (CMake splits lists on them)")
        fields = line.split("\t")
        if fields[0] == "controller":
            if len(fields) != 8:
                raise ControllerTableError(f"{where}: a controller row has 8 fields")
            name, cpp_class, stem, label, colour, marker, description = fields[1:8]
            rows.append(ControllerRow(name, cpp_class, stem, label, colour, marker, description,
                                      params=()))
            params[fields[1]] = []
        elif fields[0] == "param":
            if len(fields) != 8:
                raise ControllerTableError(f"{where}: a param row has 8 fields")
            _, owner, name, kind, low, high, default, help_text = fields
            if not rows or rows[-1].name != owner:
                raise ControllerTableError(f"{where}: param {name} must follow {owner}'s row")
            if kind not in _TYPES:
                raise ControllerTableError(f"{where}: type {kind!r} is not int or float")
            cast = _TYPES[kind]
            params[owner].append(Setting(
                name, cast, help_text, minimum=cast(low), maximum=cast(high),
                default=None if default == "-" else cast(default), required=default == "-"))
        else:
            raise ControllerTableError(f"{where}: a row starts with controller or param")
    return [ControllerRow(r.name, r.cpp_class, r.stem, r.label, r.colour, r.marker,
                          r.description, tuple(params[r.name])) for r in rows]


class GrumpScheme(NativePairScheme):
    sender_label = "grump-sender"
    receiver_label = "grump-receiver"

    def __init__(self, controller: str, paths: ProjectPaths,
                 params: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.name = controller
        self.controller = controller
        self.params = dict(params or {})
        self.sender_bin = paths.native_binary("grump", "grump-sender")
        self.receiver_bin = paths.native_binary("grump", "grump-receiver")

    def receiver_args(self, ends: Endpoints) -> list[str]:
        return [str(self.receiver_bin), "--port", str(PORT),
                "--stats", self.stats_path(ends, self.receiver_label)]

    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]:
        args = [str(self.sender_bin), "--host", ends.receiver_ip, "--port", str(PORT),
                "--controller", self.controller, "--duration-s", f"{duration_s:g}",
                "--stats", self.stats_path(ends, self.sender_label)]
        for name, value in sorted(self.params.items()):
            args += ["--param", f"{name}={value:g}"]
        return args

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "grump", "controller": self.controller,
                "window": self.params.get("window"), "params": self.params}


def _build(entry: SchemeEntry, spec: "RunSpec", paths: ProjectPaths) -> GrumpScheme:
    return GrumpScheme(entry.name, paths, dict(spec.params))


def _thresholds_in_order(values: dict[str, Any]) -> None:
    """The native controller refuses the same (delay_trigger_controller.cc)."""
    low, high = values.get("low_rtt_ms"), values.get("high_rtt_ms")
    if low is not None and high is not None and low > high:
        raise SchemeParameterError(f"delay-trigger: --low-rtt-ms {low} is above "
                                   f"--high-rtt-ms {high}; the low threshold must not be")


# Checks across a controller's parameters, by controller name.
_CHECKS = {"delay-trigger": _thresholds_in_order}

TABLE: tuple[SchemeEntry, ...] = tuple(
    SchemeEntry(row.name, "grump", f"datagrump controller: {row.description}", _build,
                params=row.params, label=row.label, colour=row.colour, marker=row.marker,
                check_values=_CHECKS.get(row.name))
    for row in read_controllers())
CONTROLLERS = tuple(e.name for e in TABLE)
