"""Command-line values checked before anything is built.

Each check names the flag and the accepted range; argparse turns the refusal into
`repro: error: argument --flag: ...` and exit status 2. check_spec() applies the
same ranges to a whole RunSpec (what `repro one` builds), with the scheme's own
parameter rules (schemes/registry.py).
"""
from __future__ import annotations

from core.runspec import RunSpec
from core.settings import Setting


# The emulator's span is whole milliseconds above 0.
DURATION = Setting("duration", float, "seconds (the trace loops)", minimum=0.001,
                   maximum=86400.0, unit="seconds")
DELAY_MS = Setting("delay_ms", int, "fixed delay each way", minimum=0, maximum=10_000,
                   unit="milliseconds each way")
JOBS = Setting("jobs", int, "runs side by side", minimum=1, maximum=256,
               unit="runs side by side")
TRIALS = Setting("trials", int, "repeats of every run", minimum=1, maximum=1000)


def check_spec(spec: RunSpec) -> None:
    """The ranges above, and the scheme's parameter rules (their ranges are in the scheme
    tables, schemes/table.py), for one RunSpec."""
    from core.queue_spec import parse_queue
    from schemes.registry import check_params
    check_params(spec)  # an unknown scheme, a parameter it would ignore, one it needs
    if spec.duration_s is not None:
        DURATION.check(spec.duration_s)
    DELAY_MS.check(spec.delay_ms)
    parse_queue(spec.queue)
