"""Every `repro` command, fed the bad inputs its help documents, refuses in one line.

A refusal is exit status 2 (the request is wrong) or 3 (this machine cannot serve it),
one line on stderr naming what was wrong, and never a traceback. Nothing may start: the
runner and the executor are replaced by tripwires, so a bad input that slipped through
fails the test instead of reaching a network.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app import cli
from core.errors import EXIT_UNAVAILABLE, EXIT_USAGE

FIXED = ["--data-trace", "rate:12", "--ack-trace", "rate:12"]


def _bad_inputs(tmp: Path) -> list[tuple[list[str], int, str]]:
    """(argv, exit status, a piece of the one line that must name the problem)."""
    missing = str(tmp / "no-such-folder")
    return [
        # the top level
        (["frobnicate"], EXIT_USAGE, "invalid choice: 'frobnicate'"),
        ([], EXIT_USAGE, "required: COMMAND"),
        # doctor, list, report, clean: they take no arguments
        (["doctor", "--fast"], EXIT_USAGE, "unrecognized arguments: --fast"),
        (["list", "everything"], EXIT_USAGE, "unrecognized arguments: everything"),
        (["report", "sprout-fig7"], EXIT_USAGE, "unrecognized arguments: sprout-fig7"),
        (["clean", "--all"], EXIT_USAGE, "unrecognized arguments: --all"),
        # run
        (["run"], EXIT_USAGE, "required: experiment"),
        (["run", "sprout-fig8"], EXIT_USAGE, "unknown experiment 'sprout-fig8'"),
        (["run", "contest-warmup-a", "--jobs", "0"], EXIT_USAGE, "--jobs: 0 is out of range"),
        (["run", "contest-warmup-a", "--jobs", "many"], EXIT_USAGE, "'many' is not an integer"),
        (["run", "contest-warmup-a", "--trials", "0"], EXIT_USAGE, "--trials: 0 is out of range"),
        (["run", "prr-fig2", "--pattern", "medium"], EXIT_USAGE, "unknown drop pattern 'medium'"),
        (["run", "prr-fig2", "--pattern", "3-1"], EXIT_USAGE, "--pattern"),
        (["run", "prr-fig2", "--rtt", "41"], EXIT_USAGE, "--rtt: 41 is odd"),
        (["run", "prr-fig2", "--rtt", "-2"], EXIT_USAGE, "--rtt: -2 is out of range"),
        (["run", "prr-fig2", "--recovery", "fack"], EXIT_USAGE, "'fack' is not one of"),
        (["run", "prr-fig2", "--cc", "bbr"], EXIT_USAGE, "'bbr' is not one of cubic, reno"),
        (["run", "prr-fig2", "--controller", "ryu"], EXIT_USAGE, "'ryu' is not one of"),
        (["run", "prr-fig2", "--size", "-1"], EXIT_USAGE, "--size: -1 is out of range"),
        (["run", "prr-fig2", "--bottleneck", "0"], EXIT_USAGE, "--bottleneck: 0.0 is out of"),
        (["run", "sprout-fig7", "--warmup-s", "-1"], EXIT_USAGE, "--warmup-s: -1.0 is out of"),
        (["run", "sprout-fig7", "--tcp-buffers", "huge"], EXIT_USAGE, "'huge' is not one of"),
        (["run", "sprout-fig7", "--substitute", "maybe"], EXIT_USAGE, "'maybe' is not one of"),
        (["run", "sprout-fig7", "--pattern", "light"], EXIT_USAGE,
         "sprout-fig7 does not take --pattern"),
        (["run", "all", "--cluster", "bogus"], EXIT_USAGE, "expected tcp://HOST:PORT"),
        (["run", "all", "--cluster", "local:0"], EXIT_USAGE, "local:N takes N >= 1"),
        # one
        (["one", *FIXED, "--duration", "5"], EXIT_USAGE, "required: --scheme"),
        (["one", "--scheme", "tcp-westwood", *FIXED, "--duration", "5"], EXIT_USAGE,
         "unknown scheme 'tcp-westwood'"),
        (["one", "--scheme", "fixed-window", *FIXED, "--duration", "5"], EXIT_USAGE,
         "fixed-window needs --window"),
        (["one", "--scheme", "fixed-window", "--window", "0", *FIXED, "--duration", "5"],
         EXIT_USAGE, "--window: 0 is out of range"),
        (["one", "--scheme", "cubic", "--window", "10", *FIXED, "--duration", "5"],
         EXIT_USAGE, "cubic does not take --window"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "-1"], EXIT_USAGE,
         "--duration: -1.0 is out of range"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--delay-ms", "-1"],
         EXIT_USAGE, "--delay-ms: -1 is out of range"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--queue", "red:k=5"],
         EXIT_USAGE, "bad queue 'red:k=5'"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--queue", "ecn:k=5"],
         EXIT_USAGE, "bad queue 'ecn:k=5'"),
        (["one", "--scheme", "cubic", "--data-trace", "rate:0", "--ack-trace", "rate:12",
          "--duration", "5"], EXIT_USAGE, "bad fixed rate 'rate:0'"),
        (["one", "--scheme", "cubic", "--data-trace", str(tmp / "no.trace"), "--ack-trace",
          "rate:12", "--duration", "5"], EXIT_USAGE, "no.trace"),
        (["one", "--scheme", "cubic", *FIXED, "--once"], EXIT_USAGE,
         "a fixed-rate link has no end"),
        (["one", "--scheme", "cubic", *FIXED], EXIT_USAGE, "one of the arguments --duration"),
        # the link's conditions: a loss outside [0, 1), a step past the end, a rate of 0
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--loss", "1"], EXIT_USAGE,
         "argument --loss: 1.0 is out of range"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--loss", "-0.01"],
         EXIT_USAGE, "argument --loss: -0.01 is out of range"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--ack-loss", "1.5"],
         EXIT_USAGE, "argument --ack-loss: 1.5 is out of range"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "60", "--rate-steps", "20:20,70:10"],
         EXIT_USAGE, "--rate-steps: the step at 70 s is not before the run's end (60 s)"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "60", "--rate-steps", "20:0"],
         EXIT_USAGE, "argument --rate-steps: '20:0': the rate must be above 0 Mbit/s"),
        (["one", "--scheme", "cubic", "--data-trace", str(tmp / "no.trace"), "--ack-trace",
          "rate:12", "--duration", "5", "--rate-steps", "2:5"], EXIT_USAGE, "no.trace"),
        (["one", "--scheme", "cubic", *FIXED, "--duration", "5", "--socket-sample-ms", "1"],
         EXIT_USAGE, "argument --socket-sample-ms: 1 is out of range"),
        # verify and pack
        (["verify", "sprout-fig8"], EXIT_USAGE, "unknown experiment 'sprout-fig8'"),
        (["verify", "--results", missing], EXIT_USAGE, "no results folder at"),
        (["pack", "sprout-fig8"], EXIT_USAGE, "unknown experiment 'sprout-fig8'"),
        (["compare", missing], EXIT_USAGE, "required: b"),
        (["compare", missing, missing, "sprout-fig8"], EXIT_USAGE,
         "unknown experiment 'sprout-fig8'"),
        (["compare", missing, missing], EXIT_USAGE, "no such results folder or bundle"),
        # contest
        (["contest"], EXIT_USAGE, "required: ACTION"),
        (["contest", "submit"], EXIT_USAGE, "required: DIR_OR_FILES"),
        (["contest", "submit", missing], EXIT_USAGE, "give a directory holding controller.hh"),
        (["contest", "submit", missing, "--trials", "0"], EXIT_USAGE,
         "--trials: 0 is out of range"),
        (["contest", "submit", missing, "--trials", "21"], EXIT_USAGE,
         "--trials: 21 is out of range"),
        # worker
        (["worker"], EXIT_USAGE, "required: --scheduler"),
        (["worker", "--scheduler", "tcp://127.0.0.1:1", "--jobs", "0"], EXIT_USAGE,
         "--jobs: 0 is out of range"),
        # bench
        (["bench", "everything"], EXIT_USAGE, "invalid choice: 'everything'"),
        (["bench", "link", "--seconds", "-1"], EXIT_USAGE, "--seconds: -1.0 is out of range"),
        (["bench", "concurrency", "--levels", "1,2"], EXIT_USAGE, "levels are 2 or more"),
        (["bench", "concurrency", "--max-jobs", "1"], EXIT_USAGE, "--max-jobs: 1 is out of"),
    ]


def _status(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as e:  # argparse's refusal
        return int(e.code or 0)


@pytest.fixture
def tripwires(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Root, as CI has it; a results folder of the test's own; nothing can start."""
    def reached(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a bad input reached a run")

    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr("app.runner.MatrixRunner.run_plan", reached)
    monkeypatch.setattr("app.executor.execute", reached)
    monkeypatch.setattr("experiments.contest.commands.build", reached)
    monkeypatch.setattr("experiments.contest.commands.execute", reached)


@pytest.mark.parametrize("case", range(len(_bad_inputs(Path("/x")))))
def test_a_bad_input_is_refused_in_one_line(case: int, tripwires: None, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    argv, status, says = _bad_inputs(tmp_path)[case]
    got = _status(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, f"{argv}: a traceback:\n{err}"
    assert got == status, f"{argv}: exit {got}, expected {status}; stderr:\n{err}"
    assert len(lines) == 1, f"{argv}: {len(lines)} lines on stderr:\n{err}"
    assert says in lines[0], f"{argv}: {lines[0]!r} does not say {says!r}"


def test_a_command_that_needs_root_says_so_without_it(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    assert _status(["clean"]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err.strip()
    assert err == ("error: this command needs root (network namespaces, raw sockets, BPF): "
                   "run it with sudo")


def test_every_command_is_fed_a_bad_input() -> None:
    fed = {argv[0] for argv, _, _ in _bad_inputs(Path("/x")) if argv}
    public = {m.NAME for m in cli.command_modules()}
    assert public <= fed, f"commands without a bad-input case: {sorted(public - fed)}"


def test_each_public_command_is_named_as_its_module_says() -> None:
    assert [m.NAME for m in cli.command_modules()] == list(cli.PUBLIC_COMMANDS)


def test_an_internal_command_imports_no_public_one() -> None:
    # Every run of a pass is a `repro _execute` child: the public commands' modules (and what
    # they import) are not loaded for it.
    import subprocess
    import sys
    code = ("import sys; from app import cli; cli.parse(['_execute', '--experiment', 'x', "
            "'--spec-json', '{}']); print(sorted(m for m in sys.modules if m.startswith("
            "'app.commands.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2]).stdout
    assert out.strip() == "['app.commands.internal', 'app.commands.shared']", out
