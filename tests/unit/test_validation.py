"""Bad input is refused before anything is built: exit status 2, a message naming the
flag and what it accepts, no network, no run folder."""
from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from core.errors import EXIT_USAGE
from app import cli

GOOD = ["--scheme", "cubic", "--data-trace", "rate:12", "--ack-trace", "rate:12",
        "--duration", "5"]


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Run `repro one ...` as root would; fail the test if a run starts."""
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    executor = types.ModuleType("app.executor")
    executor.execute = lambda *a, **k: pytest.fail("a run started")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "app.executor", executor)

    def run(argv: list[str]) -> int:
        try:
            status = cli.main(argv)
        except SystemExit as e:  # argparse's refusal
            status = int(e.code or 0)
        assert not (tmp_path / "results").exists(), "a results folder was created"
        return status
    return run


def _with(flag: str, value: str | None, argv: list[str] = GOOD) -> list[str]:
    """`one` with GOOD's flag set to value (None: the flag removed)."""
    out = list(argv)
    if flag in out:
        i = out.index(flag)
        del out[i:i + 2]
    return ["one", *out, *([flag, value] if value is not None else [])]


@pytest.mark.parametrize("value", ["-5", "0", "0.0004", "nan", "inf", "soon", "86401"])
def test_duration(refused, capsys, value: str) -> None:
    argv = _with("--duration", value)
    assert refused(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "argument --duration: " in err
    assert "is out of range: a number (seconds) from 0.001 to 86400" in err or \
        "is not a number (seconds) from 0.001 to 86400" in err


@pytest.mark.parametrize("value", ["0", "-1", "100001", "ten", "2.5"])
def test_window(refused, capsys, value: str) -> None:
    argv = _with("--window", value, [*GOOD[:1], "fixed-window", *GOOD[2:]])
    assert refused(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--window" in err
    assert "out of range: an integer from 1 to 100000" in err or "expected an integer" in err


def test_fixed_window_needs_a_window(refused, capsys) -> None:
    argv = ["one", "--scheme", "fixed-window", *GOOD[2:]]
    assert refused(argv) == EXIT_USAGE
    assert "fixed-window needs --window (an integer from 1 to 100000)" in \
        capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.1", "high"])
def test_confidence(refused, capsys, value: str) -> None:
    argv = _with("--confidence", value, [*GOOD[:1], "sprout", *GOOD[2:]])
    assert refused(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--confidence" in err
    assert "out of range: a number from 0.001 to 0.999" in err or "expected a number" in err


@pytest.mark.parametrize("value", ["-1", "10001", "2.5"])
def test_delay(refused, capsys, value: str) -> None:
    assert refused(_with("--delay-ms", value)) == EXIT_USAGE
    assert "an integer (milliseconds each way) from 0 to 10000" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["droptail", "droptail:packets=0", "red:packets=5",
                                   "droptail:frames=3", "droptail:packets=5,packets=6"])
def test_queue_spec(refused, capsys, value: str) -> None:
    assert refused(_with("--queue", value)) == EXIT_USAGE
    assert f"bad queue {value!r}" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--data-trace", "--ack-trace"])
def test_traces_that_do_not_exist(refused, capsys, flag: str, tmp_path: Path) -> None:
    assert refused(_with(flag, str(tmp_path / "no-such.trace"))) == EXIT_USAGE
    assert "no-such.trace" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["rate:0", "rate:-3", "rate:fast"])
def test_fixed_rates(refused, capsys, value: str) -> None:
    assert refused(_with("--data-trace", value)) == EXIT_USAGE
    assert f"bad fixed rate {value!r}: write rate:<Mbit/s>" in capsys.readouterr().err


def test_once_over_a_fixed_rate_has_no_end(refused, capsys) -> None:
    argv = ["one", *GOOD[:-2], "--once"]
    assert refused(argv) == EXIT_USAGE
    assert "a fixed-rate link has no end" in capsys.readouterr().err


def test_unknown_scheme(refused, capsys) -> None:
    assert refused(_with("--scheme", "tcp-westwood")) == EXIT_USAGE
    assert "unknown scheme 'tcp-westwood'; known: " in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-2", "257", "many"])
def test_jobs(refused, capsys, value: str) -> None:
    assert refused(["run", "contest-warmup-a", "--jobs", value]) == EXIT_USAGE
    assert "an integer (runs side by side) from 1 to 256" in capsys.readouterr().err


def test_trials(refused, capsys) -> None:
    assert refused(["run", "contest-warmup-a", "--trials", "0"]) == EXIT_USAGE
    assert "an integer from 1 to 1000" in capsys.readouterr().err


def test_unknown_experiment(refused, capsys) -> None:
    assert refused(["run", "sprout-fig8"]) == EXIT_USAGE
    assert "unknown experiment 'sprout-fig8'; known: " in capsys.readouterr().err
