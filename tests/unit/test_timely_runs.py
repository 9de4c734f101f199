"""The behaviour tests' rule for late runs (tests/integration/helpers/timely.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from app.executor import RunOutcome
from core.runspec import RunSpec
from tests.integration.helpers.timely import timely

SPEC = RunSpec(experiment="e", scheme="cubic", data_trace="rate:12", ack_trace="rate:12",
               delay_ms=5, queue="infinite", duration_s=1.0)


def runs(*outcomes: tuple[bool, dict[str, Any] | None]) -> tuple[list[int], Any]:
    calls: list[int] = []

    def make_run() -> RunOutcome:
        ok, metrics = outcomes[len(calls)]
        calls.append(1)
        return RunOutcome(SPEC, ok, Path(f"/run-{len(calls)}"), metrics=metrics)
    return calls, make_run


LATE = {"lateness_ok": False, "lateness_p99_us": 3000, "cpu_steal_pct": 11.0}


def test_a_late_run_is_made_again_until_one_keeps_time(capsys) -> None:
    calls, make_run = runs((True, LATE), (True, {"lateness_ok": True}), (True, LATE))
    assert timely(make_run, "x").path == Path("/run-2") and len(calls) == 2
    assert "attempt 1 of 3 had a late emulator (p99 3000 us, CPU steal 11.0%)" in \
        capsys.readouterr().out


def test_a_failed_or_unknown_run_is_taken_as_it_is() -> None:
    calls, make_run = runs((False, None))
    assert timely(make_run, "x").ok is False and len(calls) == 1
    calls, make_run = runs((True, {"lateness_ok": None}))
    assert timely(make_run, "x").path == Path("/run-1") and len(calls) == 1


def test_every_attempt_late_judges_the_last(capsys) -> None:
    calls, make_run = runs((True, LATE), (True, LATE), (True, LATE))
    assert timely(make_run, "x").path == Path("/run-3") and len(calls) == 3
    assert "every attempt was late; judging the last" in capsys.readouterr().out
