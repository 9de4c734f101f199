"""The `repro` command line: one module per command in app/commands/.

Exit status: 0 success; 1 a run or check failed; 2 bad usage or input;
3 the machine cannot run it (not root, not built, a feature missing); 130 interrupted.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import signal
import sys
from types import ModuleType
from typing import Any, Callable

from app.commands import internal
from core.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Unavailable, UsageError
from core.paths import ProjectPaths

# Each adds its parser (`add_parser`) and runs it (`run`), in the order --help lists them.
# Imported only when a public command is asked for: every run of a pass is a `repro
# _execute` child, which needs none of them (0.2 s of CPU per run, measured idle).
PUBLIC_COMMANDS = {"doctor": "doctor", "list": "listing", "run": "run", "one": "one",
                   "report": "report", "verify": "verify", "pack": "pack", "compare": "compare",
                   "worker": "worker", "clean": "clean", "bench": "bench"}  # name: module
Command = Callable[[argparse.Namespace, ProjectPaths], int]
INTERNAL_COMMANDS: dict[str, Command] = {
    internal.EXECUTE: internal.execute, internal.REQUIRED_TRACES: internal.required_traces,
    internal.DOCS: internal.docs,
}


def command_modules() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f"app.commands.{module}")
                 for module in PUBLIC_COMMANDS.values())


def public_commands() -> dict[str, Command]:
    return {module.NAME: module.run for module in command_modules()}


class OneLineErrors(argparse.ArgumentParser):
    """A refusal is one line naming the flag and what it accepts, not the whole usage."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see: {self.prog} --help)\n")


def paper_commands() -> tuple[ModuleType, ...]:
    """Each paper's own command, experiments/<paper>/commands.py where a paper has one (a
    module like app/commands/'s: NAME, add_parser, run), found rather than listed."""
    from experiments.registry import paper_packages
    found = []
    for package in paper_packages():
        name = f"experiments.{package}.commands"
        if importlib.util.find_spec(name) is not None:
            found.append(importlib.import_module(name))
    return tuple(found)


def build_parser(papers: bool = True, public: bool = True) -> argparse.ArgumentParser:
    """The command line; `papers=False` leaves the papers' own commands out (importing a
    paper loads its figures' libraries: a common command need not wait for that), and
    `public=False` the public ones too (for an internal command)."""
    parser = OneLineErrors(prog="repro", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces-dir", default=os.environ.get("NETREPRO_TRACES"),
                        help="a directory holding the cellular traces (env NETREPRO_TRACES)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = command_modules() if public else ()
    for module in modules + (paper_commands() if papers else ()):
        module.add_parser(sub)
    internal.add_parsers(sub)
    return parser


def _command_word(argv: list[str]) -> str | None:
    """The command asked for: the first word that is no global option or its value."""
    words = iter(argv)
    for word in words:
        if word == "--traces-dir":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _interrupt_once(signum: int, frame: Any) -> None:
    """First SIGINT/SIGTERM raises KeyboardInterrupt; later ones are ignored so teardown
    finishes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


# Commands that parse more once the first pass knows what was asked (`repro run EXPERIMENT`
# takes that experiment's own options): (args, what the first pass left, the parser class).
COMPLETIONS: dict[str, str] = {"run": "app.commands.run"}  # command: the module completing it


def parse(argv: list[str]) -> argparse.Namespace:
    word = _command_word(argv)
    if word in INTERNAL_COMMANDS:
        parser = build_parser(papers=False, public=False)
    else:
        parser = build_parser(papers=word not in PUBLIC_COMMANDS)
    args, rest = parser.parse_known_args(argv)
    completing = COMPLETIONS.get(args.command)
    if completing is not None:
        importlib.import_module(completing).complete(args, rest, OneLineErrors)
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return args


def main(argv: list[str]) -> int:
    try:
        args = parse(argv)
    except (UsageError, Unavailable) as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_status
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    signal.signal(signal.SIGINT, _interrupt_once)
    signal.signal(signal.SIGTERM, _interrupt_once)
    try:
        command = INTERNAL_COMMANDS.get(args.command) or public_commands().get(args.command) or \
            {m.NAME: m.run for m in paper_commands()}[args.command]
        return command(args, ProjectPaths())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `repro list | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (UsageError, Unavailable) as e:  # every refusal derives from one of these
        print(f"error: {e}", file=sys.stderr)
        return e.exit_status
