"""The scheme parameters as CLI flags, read from the scheme tables.

Every parameter a listed scheme declares (schemes/table.py) becomes one flag
(`--window`, `--confidence`, `--cc-impl`, `--decrease`...), whose help names the
schemes that take it and their ranges. Which scheme takes which flag, and the
range, is checked against the table when the RunSpec is made.
"""
from __future__ import annotations

import argparse
from typing import Any

from core.settings import for_argparse
from schemes.registry import params_from_values, shared_params


def _parser_of(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}: {text!r}") from None
    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def add_scheme_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scheme parameters (each scheme takes its own)")
    for shared in shared_params():
        p = shared.param
        kwargs: dict[str, Any] = {"dest": f"param_{p.name}", "default": None,
                                  "help": for_argparse(shared.help()),
                                  "metavar": "N" if p.type is int else "X"}
        if p.choices:
            kwargs["choices"] = p.choices
            kwargs["metavar"] = "{" + ",".join(p.choices) + "}"
        else:
            kwargs["type"] = _parser_of(p.type)
        group.add_argument(p.flag, **kwargs)


def scheme_params(args: argparse.Namespace, scheme: str) -> tuple[tuple[str, Any], ...]:
    """The RunSpec params of `scheme` from the parsed flags; refuses what it does not take
    (SchemeParameterError naming the flag and the accepted range)."""
    values = {shared.param.name: getattr(args, f"param_{shared.param.name}", None)
              for shared in shared_params()}
    return params_from_values(scheme, values)
