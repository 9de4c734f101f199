"""Submissions: the API generations, refusals before compiling, names, traces, failures."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app import cli
from experiments.contest.commands import resolve_trace, team_name
from core.traces import TraceError
from schemes.submission import scheme as submission_scheme
from schemes.submission import sources as submission_sources
from core.errors import RunInvalid
from schemes.submission.api import SubmissionRefused, check_api
from schemes.submission.limits import signal_name
from schemes.submission.sources import Sources
from tests.unit.fake_runs import trace_set, write_trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contest"
SOURDOUGH_TODAY = (FIXTURES / "sourdough-9880276" / "controller.hh").read_text()


@pytest.mark.parametrize("folder,generation", [
    ("datagrump-1817559", 1), ("sourdough-fe9708b", 2), ("sourdough-9880276", 3)])
def test_each_api_generation_is_recognised(folder: str, generation: int) -> None:
    assert Sources.collect([FIXTURES / folder]).api() == generation


def changed(old: str, new: str) -> str:
    assert old in SOURDOUGH_TODAY
    return SOURDOUGH_TODAY.replace(old, new)


@pytest.mark.parametrize("header,message", [
    (changed("unsigned int window_size();", "double window_size();"),
     "`double window_size()` differs from the contest API: every generation declares "
     "unsigned int window_size()"),
    (changed("const bool after_timeout );", "const int after_timeout );"),
     "matches no API generation; the sent-callback is one of"),
    (changed("Controller( const bool debug );", "Controller();"),
     "`Controller()` differs from the contest API"),
    (changed("unsigned int timeout_ms();", ""), "declares no timeout_ms()"),
    (changed("const uint64_t timestamp_ack_received );", "const double when );"),
     "ack_received"),
    ("class Sender { };", "declares no class Controller"),
    (changed("unsigned int timeout_ms();", "unsigned int timeout_ms();\n  void packet_was_sent("
             "const uint64_t a, const uint64_t b );"), "several API generations"),
])
def test_anything_else_is_refused_naming_the_signature_that_differs(
        header: str, message: str) -> None:
    with pytest.raises(SubmissionRefused) as e:
        check_api(header)
    assert message in str(e.value)


def test_comments_inline_bodies_and_virtual_do_not_confuse_the_check() -> None:
    header = changed("unsigned int window_size();",
                     "/* double window_size(); */ virtual unsigned int window_size() "
                     "{ return 3; } // int timeout_ms();")
    assert check_api(header) == 3


def test_sources_from_a_folder_or_two_files_and_nothing_else(tmp_path: Path) -> None:
    folder = FIXTURES / "sourdough-fe9708b"
    a = Sources.collect([folder])
    b = Sources.collect([folder / "controller.cc", folder / "controller.hh"])
    assert a.digest == b.digest and len(a.digest) == submission_sources.HASH_CHARS
    other = tmp_path / "x"
    other.mkdir()
    (other / "controller.hh").write_bytes(a.header)
    (other / "controller.cc").write_bytes(a.body + b"\n// changed\n")
    assert Sources.collect([other]).digest != a.digest  # a resubmission is a new run
    with pytest.raises(SubmissionRefused, match="exactly those two files"):
        Sources.collect([folder / "controller.hh"])
    (other / "controller.cc").unlink()
    with pytest.raises(SubmissionRefused, match="no such file"):
        Sources.collect([other])


@pytest.mark.parametrize("name", ["a/b", "../x", "x;rm -rf /", "$(id)", "team name", "-x",
                                  "", "a" * 41, "`whoami`", "x|y"])
def test_names_with_shell_or_path_characters_are_refused(name: str) -> None:
    with pytest.raises(SubmissionRefused, match="refused"):
        team_name(name, ["."])


def test_a_default_name_is_the_folder_made_plain(tmp_path: Path) -> None:
    folder = tmp_path / "my team; $(rm -rf x)"
    folder.mkdir()
    assert team_name(None, [str(folder)]) == "my-team-rm--rf-x"
    assert team_name("Team_7.b", [str(folder)]) == "Team_7.b"


def test_traces_by_role_or_name_and_missing_ones_refused(tmp_path: Path) -> None:
    write_trace(tmp_path, "Verizon-LTE-short.down", [1, 2])
    write_trace(tmp_path, "Verizon-LTE-short.up", [1, 2])
    write_trace(tmp_path, "Lonely.down", [1, 2])
    traces = trace_set(tmp_path)
    assert resolve_trace("training", traces) == ("Verizon-LTE-short", "training")
    assert resolve_trace("Verizon-LTE-short", traces) == ("Verizon-LTE-short", "training")
    with pytest.raises(TraceError, match="Lonely.up"):
        resolve_trace("Lonely", traces)
    with pytest.raises(TraceError, match="TMobile-LTE-short"):
        resolve_trace("testing", traces)
    with pytest.raises(TraceError, match="no paths"):
        resolve_trace("../../etc/passwd", traces)


def test_submit_refuses_before_building(monkeypatch: pytest.MonkeyPatch, capsys,
                                        tmp_path: Path) -> None:
    monkeypatch.setattr("experiments.contest.commands.build", lambda *a, **k: pytest.fail("built"))
    monkeypatch.setattr("experiments.contest.commands.build", lambda *a, **k: pytest.fail("built"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "controller.hh").write_text(changed("unsigned int window_size();",
                                               "int window_size();"))
    (bad / "controller.cc").write_text("")
    status = cli.main(["contest", "submit", str(bad), "--name", "ok"])
    assert status == 2
    assert "`int window_size()` differs" in capsys.readouterr().err
    status = cli.main(["contest", "submit", str(FIXTURES / "sourdough-fe9708b"), "--name",
                       "a;b"])
    assert status == 2
    assert "team name 'a;b' refused" in capsys.readouterr().err
    status = cli.main(["--traces-dir", str(tmp_path), "contest", "submit",
                       str(FIXTURES / "sourdough-fe9708b"), "--trace", "nowhere"])
    assert status == 2
    assert "nowhere.down" in capsys.readouterr().err


def test_signal_names() -> None:
    assert signal_name(-11) == "SIGSEGV" and signal_name(3) is None


class FakeProc:
    def __init__(self, code: int) -> None:
        self.returncode = code


class FakeSender:
    def __init__(self, code: int) -> None:
        self.code = code
        self.proc = FakeProc(code)

    def wait(self, timeout_s: float) -> int:
        return self.code

    def stderr_tail(self) -> str:
        return "last words"


def scheme_with(code: int) -> submission_scheme.SubmissionScheme:
    s = submission_scheme.SubmissionScheme.__new__(submission_scheme.SubmissionScheme)
    s.sender = FakeSender(code)  # type: ignore[assignment]
    s.sender_label = "grump-sender"
    s._stats_problem = "the sender wrote no statistics"
    return s


@pytest.mark.parametrize("code,reason", [
    (-11, "the controller crashed: the sender was killed by SIGSEGV"),
    (-24, "SIGXCPU (its CPU-time limit)"),
    (3, "the controller never got an ACK"),
    (1, "exited with status 1"),
])
def test_a_crash_or_silence_is_a_failed_entry_with_the_reason(code: int, reason: str) -> None:
    with pytest.raises(RuntimeError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        scheme_with(code).wait_sender(1.0)


def test_a_hung_controller_is_named_as_such(tmp_path: Path) -> None:
    s = scheme_with(-9)

    class Ends:
        out_dir = tmp_path

    with pytest.raises(RunInvalid, match="did not finish.*SIGKILL.*never returns"):
        s.verify(Ends())  # type: ignore[arg-type]


def test_submit_parser_defaults_to_three_trials_on_training() -> None:
    args = cli.build_parser().parse_args(["contest", "submit", "x"])
    assert isinstance(args, argparse.Namespace)
    assert (args.trials, args.trace, args.json) == (3, "training", False)
