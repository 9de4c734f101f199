"""The options an experiment's results were run with, recorded beside them.

`repro run` decides every choice the machine makes before it plans (a
`--controller auto` becomes the controller that serves there, a
`--substitute auto` the trace pair it finds: `Experiment.resolved_options`), plans
the runs from those values and writes them to `results/<experiment>/options.json`.

`repro verify`, `repro report` and `repro verify --bundle` on another machine
rebuild the experiment from that record, so its runs are judged against the plan
they were made for, never against what the checking machine would choose. The
record is an ordinary file of the results folder, so `repro pack` carries it with
its sha256 like every other.

The record is needed when the experiment declares options: without it the plan
cannot be known (the user may have asked for `--pattern heavy`, `auto` may have
gone either way), and the experiment is reported as not checkable, with the fix.
An experiment without options has one plan, the record changes nothing for it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from runkinds.registry import measurement_version
from core.errors import UsageError
from core.paths import display
from core.results import write_json
from experiments.base import Experiment

RECORD = "options.json"
RECORD_FORMAT = 1


class RecordError(UsageError):
    """The options on record cannot be used; the message names the file and the fix."""


def pinned(exp: Experiment) -> Experiment:
    """The experiment with every choice this machine makes decided, so that its matrix
    and its record come from one decision."""
    return exp.with_options(exp.resolved_options())


def write_record(root: Path, exp: Experiment) -> Path:
    """Record the options `exp` plans its runs with (results/<experiment>/options.json)."""
    path = root / RECORD
    root.mkdir(parents=True, exist_ok=True)
    write_json(path, {"record_format": RECORD_FORMAT, "experiment": exp.name,
                      "options": exp.resolved_options(), "code_version": measurement_version(),
                      "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return path


def record_plans(results_dir: Path, experiments: list[Experiment]) -> None:
    """Record each experiment's options beside its results, as `repro run` plans them."""
    for exp in experiments:
        write_record(results_dir / exp.name, exp)


def _fix(exp: Experiment) -> str:
    return (f"fix: on the machine that made the runs, run the same `./repro run {exp.name} "
            "...` command again (finished runs are kept; it records the options), then "
            "`./repro pack` again for a bundle")


def as_recorded(exp: Experiment, root: Path) -> Experiment:
    """`exp` rebuilt from the options its results under `root` were run with.

    Raises RecordError when the record is missing (and the experiment declares options),
    unreadable, for another experiment, holds a value the experiment refuses, or leaves a
    choice to the machine that this machine would decide otherwise."""
    path = root / RECORD
    shown = display(path)
    if not path.is_file():
        if not exp.options:
            return exp  # nothing to choose: the one plan there is
        raise RecordError(
            f"{shown} is missing: the options {exp.name} was run with are not on record "
            "(results made before they were recorded), so the runs it planned cannot be "
            "known without guessing (what this machine would choose may differ); " + _fix(exp))
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RecordError(f"{shown} is unreadable ({e}); {_fix(exp)}") from None
    options = data.get("options") if isinstance(data, dict) else None
    if not isinstance(options, dict):
        raise RecordError(f"{shown} holds no `options` object; {_fix(exp)}")
    if data.get("experiment") != exp.name:
        raise RecordError(f"{shown} records experiment {data.get('experiment')!r}, not "
                          f"{exp.name}; {_fix(exp)}")
    try:
        rebuilt = exp.with_options(options)
        decided = rebuilt.resolved_options()
    except (ValueError, TypeError) as e:  # a SettingError is a ValueError
        raise RecordError(f"{shown}: {e}; {_fix(exp)}") from None
    open_choices = {k: v for k, v in decided.items() if rebuilt.chosen.get(k) != v}
    if open_choices:
        said = ", ".join(f"{k}={rebuilt.chosen.get(k)!r} (this machine: {v!r})"
                         for k, v in sorted(open_choices.items()))
        raise RecordError(f"{shown} leaves to the machine a choice this machine decides "
                          f"otherwise: {said}; which one the runs made is not on record; "
                          + _fix(exp))
    return rebuilt
