"""Options an experiment declares: run parameters beyond the scheme's.

An experiment lists them in its class attribute `options`, each a
`core.settings.Setting`; the CLI adds one flag per option to `repro run`,
checks the value (type, choices, range, its own rule) before anything is
built, and `repro list` shows them. The chosen values are put into every
RunSpec's `options`, so they are part of each run's id.

    class MyExperiment(Experiment):
        options = (
            Setting("one_way", bool, "measure delay one way instead of round trip",
                    default=False),
            Setting("warmup_skip_s", float, "seconds left out at the start", default=0.0,
                    minimum=0, maximum=60),
            Setting("pattern", str, "the drop pattern", default="none",
                    choices=("none", "single", "burst")),
        )
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from core.settings import Setting, SettingError


def resolve(declared: Iterable[Setting], given: Mapping[str, Any],
            experiment: str) -> dict[str, Any]:
    """Every declared option's value (given, else its default); refuse undeclared ones."""
    declared = tuple(declared)
    known = {o.name: o for o in declared}
    extra = sorted(set(given) - set(known))
    if extra:
        takes = ", ".join(o.flag for o in declared) or "no options"
        raise SettingError(f"{experiment} does not take "
                           f"{', '.join(_flag(name) for name in extra)}; it takes {takes}")
    return {name: option.check(given[name]) if name in given else option.default
            for name, option in known.items()}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
