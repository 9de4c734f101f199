"""The contest leaderboard from hand-made artifacts: order, replacement, failures, links."""
from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from experiments.contest.leaderboard import BoardTrace, board, write_leaderboards
from experiments.contest.published_sources import set_published
from core.results import ExperimentStore
from experiments.contest.board import Contest, contest_spec
from core.traces import TraceSet
from tests.unit.fake_runs import add_done, write_trace

NO_TRACES = TraceSet([], Path("/nonexistent"), manifest={})  # the matrix reads no trace

TRACE = "Tiny"


def data_log(run_dir: Path, delay_ms: int) -> None:
    """Ten opportunities 10 ms apart, each used by a packet that waited `delay_ms`."""
    lines = ["# base timestamp: 0"]
    for t in range(10, 110, 10):
        lines += [f"{t - delay_ms} + 1500", f"{t} # 1504", f"{t} - 1504 {delay_ms}"]
    lines.sort(key=lambda line: int(line.split()[0]) if line[0] != "#" else -1)
    (run_dir / "data.log").write_text("\n".join(lines) + "\n")


def run(store: ExperimentStore, scheme: str, delay_ms: int, score: float, trial: int = 1,
        params: dict | None = None) -> Path:
    spec = contest_spec("contest", scheme, TRACE, trial, params)
    run_dir = add_done(store, spec, score=score, throughput_mbps=1.0,
                       p95_e2e_delay_ms=20.0 + delay_ms, p95_signal_delay_ms=float(delay_ms),
                       power=1.0, utilization=0.5)
    data_log(run_dir, delay_ms)
    return run_dir


def submission(root: Path, team: str, when: float, trials: list[dict], folder: str,
               **extra: object) -> Path:
    path = root / "submissions" / team / folder
    path.mkdir(parents=True)
    (path / "controller.hh").write_text("// sources\n")
    record = {"team": team, "trace": TRACE, "submitted_unix": when, "submitted_at": str(when),
              "source_hash": folder, "trials": trials, "trials_requested": len(trials),
              **extra}
    (path / "submission.json").write_text(json.dumps(record))
    return path


@pytest.fixture
def contest(tmp_path: Path) -> tuple[Path, BoardTrace]:
    root = tmp_path / "contest"
    store = ExperimentStore(root)
    run(store, "sprout", 5, score=-3.0)
    run(store, "aimd", 40, score=-4.0)
    run(store, "aimd", 30, score=-3.5, trial=2)  # the best of aimd's trials counts
    old = run(store, "submission", 80, score=-5.0, params={"submission": "aaaa"})
    new = run(store, "submission", 2, score=-2.0, params={"submission": "bbbb"})
    new2 = run(store, "submission", 9, score=-2.5, trial=2, params={"submission": "bbbb"})
    submission(root, "teamx", 1.0, [{"trial": 1, "ok": True, "run": f"runs/{old.name}"}],
               "t1-aaaa")
    submission(root, "teamx", 2.0, [{"trial": 1, "ok": True, "run": f"runs/{new.name}"},
                                    {"trial": 2, "ok": True, "run": f"runs/{new2.name}"},
                                    {"trial": 3, "ok": False, "reason": "crashed"}], "t2-bbbb")
    submission(root, "broken", 3.0, [], "t3-cccc", status="build failed",
               reason="does not compile: compile controller.cc failed")
    submission(root, "silent", 4.0, [{"trial": 1, "ok": False,
                                      "reason": "the controller never got an ACK"}], "t4-dddd")
    trace = write_trace(tmp_path / "traces", f"{TRACE}.down", range(1, 101))
    return root, BoardTrace(TRACE, "training", trace)


def test_omniscient_on_top_then_by_score_then_failures(contest) -> None:
    root, trace = contest
    rows = board(root, trace)
    assert [r.kind for r in rows][0] == "omniscient"
    assert rows[0].rank is None and rows[0].metrics["utilization"] == 1.0
    scored = [r for r in rows[1:] if r.score is not None]
    scores = [r.score for r in scored if r.score is not None]
    assert scores == sorted(scores, reverse=True)
    assert [r.rank for r in scored] == list(range(1, len(scored) + 1))
    names = [r.name for r in rows]
    assert names.index("teamx") < names.index("Sprout") < names.index("AIMD")
    aimd = next(r for r in rows if r.name == "AIMD")
    assert aimd.score == -3.5 and aimd.trials == 2
    failed = [r for r in rows if r.status == "failed"]
    assert {r.name for r in failed} == {"broken", "silent"}
    assert all(r.score is None and r.rank is None for r in failed)  # never a score from nothing
    assert "does not compile" in next(r for r in failed if r.name == "broken").reason
    assert "never got an ACK" in next(r for r in failed if r.name == "silent").reason
    assert rows[-2:] == sorted(failed, key=lambda r: r.name)


def test_a_resubmission_replaces_the_older_on_the_board_and_keeps_its_artifacts(contest
                                                                                ) -> None:
    root, trace = contest
    rows = [r for r in board(root, trace) if r.name == "teamx"]
    assert len(rows) == 1
    team = rows[0]
    assert team.source_hash == "t2-bbbb" and team.score == -2.0  # the best of its trials
    assert (team.trials_scored, team.trials) == (2, 3)
    assert (root / "submissions" / "teamx" / "t1-aaaa" / "submission.json").is_file()
    # The sources (and older submissions) are linked only once the teacher publishes them.
    assert "history" not in team.extra_links and "sources" not in team.extra_links
    set_published(root, True)
    team = next(r for r in board(root, trace) if r.name == "teamx")
    assert (root / team.extra_links["sources"] / "controller.hh").is_file()
    assert (root / team.extra_links["history"] / "t1-aaaa" / "controller.hh").is_file()


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.hrefs += [v for k, v in attrs if k == "href"]


def test_the_page_opens_and_every_link_resolves_to_a_file_that_exists(contest) -> None:
    root, trace = contest
    files = write_leaderboards(root, [trace])
    page = root / "leaderboard.html"
    assert page in files
    parser = Links()
    parser.feed(page.read_text())
    assert len(parser.hrefs) >= 8
    for href in parser.hrefs:
        assert not re.match(r"^[a-z]+:", href) and not href.startswith("/"), href
        assert (root / href).exists(), f"broken link {href}"
    pngs = [h for h in parser.hrefs if h.endswith(".png")]
    assert any("throughput" in h for h in pngs) and any("delay" in h for h in pngs)
    for png in pngs:
        assert (root / png).with_suffix(".svg").is_file()
    rows = list(csv.DictReader(open(root / f"leaderboard-{TRACE}.csv")))
    assert rows[0]["kind"] == "omniscient"
    assert [r["name"] for r in rows if r["status"] == "failed"] == ["broken", "silent"]
    assert (root / "leaderboard.csv").is_file()


def test_runs_off_the_contest_path_are_not_on_the_board(tmp_path: Path) -> None:
    root = tmp_path / "contest"
    store = ExperimentStore(root)
    spec = contest_spec("contest", "sprout", TRACE)
    from dataclasses import replace
    add_done(store, replace(spec, duration_s=30.0), score=1.0)  # not the whole trace
    add_done(store, replace(spec, delay_ms=50), score=1.0)  # another fixed delay
    assert board(root, BoardTrace(TRACE)) == []


def test_quick_mode_runs_three_baselines_on_the_training_trace() -> None:
    quick = Contest(NO_TRACES).matrix(quick=True)
    assert {s.scheme for s in quick} == {"sprout", "johnnybameesh", "aimd"}
    assert {s.data_trace for s in quick} == {"Verizon-LTE-short.down"}
    assert all(s.once and s.delay_ms == 20 and s.queue == "infinite" for s in quick)
    full = Contest(NO_TRACES).matrix(quick=False)
    assert {s.data_trace for s in full} == {"Verizon-LTE-short.down",
                                            "ATT-LTE-driving-2016.down", "TMobile-LTE-short.down"}


def test_the_delay_view_is_the_contests_series_whose_p95_is_the_metric(tmp_path: Path) -> None:
    from experiments.contest.views import e2e_delay_per_ms
    from analysis.mahimahi_log import parse_log
    from analysis.metrics import metrics_from_file, p95
    data_log(tmp_path, 3)
    log = parse_log(tmp_path / "data.log")
    t_s, delay = e2e_delay_per_ms(log, 20)
    # Received at 30, 40, ... 120 ms (10 ms apart, 20 ms after leaving), each sent 23 ms
    # before: the delay is 23 on a reception and grows 1 per ms until the next one.
    assert t_s[0] == 0.030 and delay[0] == 23 and delay[1] == 24 and delay[10] == 23
    assert max(delay) == 32
    assert p95(delay) == metrics_from_file(tmp_path / "data.log", 20).p95_e2e_delay_ms


def test_a_late_trial_ranks_only_when_no_trial_of_the_entry_was_timely(tmp_path: Path) -> None:
    root = tmp_path / "contest"
    store = ExperimentStore(root)
    late = {"lateness_ok": False, "lateness_p99_us": 2624}
    timely = {"lateness_ok": True, "lateness_p99_us": 90}
    both = [add_done(store, contest_spec("contest", "submission", TRACE, trial,
                                         {"submission": "aaaa"}), **metrics)
            for trial, metrics in ((1, dict(late, score=-2.0)), (2, dict(timely, score=-2.5)))]
    only = add_done(store, contest_spec("contest", "submission", TRACE, 1,
                                        {"submission": "bbbb"}), score=-1.0, **late)
    submission(root, "mixed", 1.0, [{"trial": t, "ok": True, "run": f"runs/{r.name}"}
                                    for t, r in enumerate(both, 1)], "t1-aaaa")
    submission(root, "alllate", 2.0, [{"trial": 1, "ok": True, "run": f"runs/{only.name}"}],
               "t2-bbbb")
    rows = {r.name: r for r in board(root, BoardTrace(TRACE))}
    assert rows["mixed"].score == -2.5 and rows["mixed"].run == f"runs/{both[1].name}"
    assert rows["alllate"].score == -1.0 and rows["alllate"].rank == 1  # late, still scored
    write_leaderboards(root, [BoardTrace(TRACE)])
    table = {r["name"]: r for r in csv.DictReader(open(root / "leaderboard.csv"))}
    assert (table["mixed"]["lateness_ok"], table["alllate"]["lateness_ok"]) == ("True", "False")
    page = (root / "leaderboard.html").read_text()
    assert page.count("emulator late (p99 lateness 2.6 ms, over 2 ms)") == 1


def test_contest_submit_takes_its_best_from_the_timely_trials_and_prints_the_late_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.contest.commands import _show
    from experiments.contest.leaderboard import best_trial
    trials: list[dict[str, Any]] = [
        {"trial": 1, "ok": True, "score": -2.0, "lateness_ok": False, "lateness_p99_us": 3100},
        {"trial": 2, "ok": True, "score": -2.5, "lateness_ok": True},
        {"trial": 3, "ok": True, "score": -3.0}]  # lateness unknown: not late

    def best(among: list[dict[str, Any]]) -> object:
        chosen = best_trial(among, lambda t: t)
        return chosen["trial"] if chosen else None
    assert best(trials) == 2
    assert best(trials[:1]) == 1
    assert best([trials[2], {"trial": 4, "ok": True}]) == 3
    for t in trials:
        _show(t)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and "emulator late (p99 lateness 3.1 ms, over 2 ms)" in out[1], out
