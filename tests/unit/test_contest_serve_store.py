"""The contest server's queue (experiments/contest/serve/): the state file, tokens, turns,
limits, the close, and what a restart does; a fake runner stands for the scorer's submit.
Nothing here needs aiohttp, Mininet or root."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from core.paths import REPO_ROOT
from experiments.contest.serve import tokens
from experiments.contest.serve.policy import HOUR_S, Policy, Refusal, check
from experiments.contest.serve.scorer import Outcome, Scorer, outcome_of, progress_of, \
    public_result
from experiments.contest.serve.store import MAX_ATTEMPTS, Job, Store
from schemes.submission.sources import Sources

HONEST = REPO_ROOT / "tests" / "fixtures" / "contest" / "honest-window-12"
OPEN = Policy(per_hour=100, in_flight=100)


def _sources() -> Sources:
    return Sources((HONEST / "controller.hh").read_bytes(),
                   (HONEST / "controller.cc").read_bytes(), "test")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "contest.sqlite", create=True)
    for team in ("alpha", "beta", "gamma"):
        s.add_team(team, tokens.digest(f"token-of-{team}-0123456789abcdef"), 1000.0)
    return s


def _submit(store: Store, team: str, now: float = 2000.0, policy: Policy = OPEN) -> int:
    src = _sources()
    got = store.enqueue(team, src.header, src.body, src.sha256, policy, now)
    assert isinstance(got, int), got
    return got


def test_a_token_is_stored_only_as_its_hash_and_finds_its_team(
        store: Store, tmp_path: Path) -> None:
    token = tokens.new_token()
    store.add_team("delta", tokens.digest(token), 1.0)
    assert store.team_of_token(token) == "delta"
    assert store.team_of_token(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.team_of_token("short") is None and store.team_of_token(None) is None
    raw = (tmp_path / "contest.sqlite").read_bytes()
    wal = tmp_path / "contest.sqlite-wal"
    raw += wal.read_bytes() if wal.exists() else b""
    assert token.encode() not in raw and tokens.digest(token).encode() in raw


def test_a_revoked_team_cannot_log_in_or_submit(store: Store) -> None:
    token = "token-of-alpha-0123456789abcdef"
    sid = store.new_session("alpha", 10.0)
    assert store.revoke_team("alpha", 20.0)
    assert store.team_of_token(token) is None
    assert store.session_team(sid, 30.0) is None
    src = _sources()
    refused = store.enqueue("alpha", src.header, src.body, src.sha256, OPEN, 40.0)
    assert isinstance(refused, Refusal) and refused.status == 401
    assert not store.revoke_team("alpha", 50.0)


def test_a_nonce_works_once_and_only_for_its_session(store: Store) -> None:
    nonce = store.new_nonce("session-a", 100.0)
    assert not store.use_nonce(nonce, "session-b", 101.0)
    assert store.use_nonce(nonce, "session-a", 101.0)
    assert not store.use_nonce(nonce, "session-a", 102.0)  # replayed
    old = store.new_nonce("session-a", 100.0)
    assert not store.use_nonce(old, "session-a", 100.0 + 3 * HOUR_S)  # expired


def test_teams_take_turns_not_first_come_first_served(store: Store) -> None:
    a = [_submit(store, "alpha", 2000.0 + i) for i in range(3)]
    b = _submit(store, "beta", 2010.0)
    c = _submit(store, "gamma", 2020.0)
    expected = [a[0], b, c, a[1], a[2]]
    assert store.queue_order() == expected
    assert [store.position(i) for i in expected] == [1, 2, 3, 4, 5]
    taken = []
    while (job := store.claim(3000.0)) is not None:
        taken.append(job.id)
        assert store.finish(job, "scored", {"score": 1.0}, "", "", 3001.0)
    assert taken == expected


def test_a_team_served_last_waits_behind_one_that_was_not(store: Store) -> None:
    first = _submit(store, "alpha", 2000.0)
    job = store.claim(2001.0)
    assert job is not None and job.id == first
    store.finish(job, "scored", None, "", "", 2002.0)
    again = _submit(store, "alpha", 2003.0)
    beta = _submit(store, "beta", 2004.0)
    assert store.queue_order() == [beta, again]


def test_limits_refuse_with_when_to_come_back(store: Store) -> None:
    policy = Policy(per_hour=2, in_flight=1)
    first = _submit(store, "alpha", 1000.0, policy)
    src = _sources()
    busy = store.enqueue("alpha", src.header, src.body, src.sha256, policy, 1001.0)
    assert isinstance(busy, Refusal) and busy.status == 429 and "at once" in busy.text()
    job = store.claim(1002.0)
    assert job is not None and job.id == first
    store.finish(job, "scored", None, "", "", 1003.0)
    _submit(store, "alpha", 1500.0, policy)
    job = store.claim(1501.0)
    assert job is not None
    store.finish(job, "failed", None, "x", "", 1502.0)
    hourly = store.enqueue("alpha", src.header, src.body, src.sha256, policy, 2000.0)
    assert isinstance(hourly, Refusal) and hourly.status == 429
    assert hourly.retry_at == 1000.0 + HOUR_S and "submit again after" in hourly.text()
    assert isinstance(store.enqueue("alpha", src.header, src.body, src.sha256, policy,
                                    1000.0 + HOUR_S + 1), int)
    assert store.counts()["queued"] == 1


def test_after_the_close_nothing_is_taken_and_the_testing_board_shows() -> None:
    policy = Policy(close_at=5000.0)
    assert check(policy, 4999.0, 0, []) is None
    refused = check(policy, 5000.0, 0, [])
    assert refused is not None and refused.status == 403 and "closed" in refused.text()
    assert not policy.testing_shown(4999.0) and policy.testing_shown(5000.0)
    assert Policy(reveal_testing=True).testing_shown(0.0)
    assert not Policy().testing_shown(1e12)


def test_a_result_is_written_once_and_only_by_its_own_attempt(store: Store) -> None:
    _submit(store, "alpha")
    job = store.claim(1.0)
    assert job is not None and job.attempt == 1
    assert store.recover(2.0) == [(job.id, "queued")]
    again = store.claim(3.0)
    assert again is not None and again.id == job.id and again.attempt == 2
    assert not store.finish(job, "scored", {"score": 9.0}, "", "", 4.0)  # the stale attempt
    assert store.finish(again, "scored", {"score": 1.0}, "", "", 5.0)
    assert not store.finish(again, "failed", None, "twice", "", 6.0)
    sub = store.submission(job.id)
    assert sub is not None and sub.state == "scored" and sub.result == {"score": 1.0}
    assert not store.progress(again, "trial 9 of 9")


def test_a_job_the_scorer_died_in_every_time_fails_instead_of_looping(store: Store) -> None:
    _submit(store, "alpha")
    first = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        job = store.claim(float(attempt))
        assert job is not None and job.attempt == attempt
        first = first or job
        became = store.recover(float(attempt) + 0.5)
    assert first is not None and became == [(first.id, "failed")]
    sub = store.submission(first.id)
    assert sub is not None and sub.state == "failed" and "attempts" in sub.reason
    assert store.claim(99.0) is None


def test_the_state_machine_refuses_any_other_state(store: Store) -> None:
    _submit(store, "alpha")
    with pytest.raises(sqlite3.IntegrityError):
        store.db.execute("UPDATE submissions SET state = 'done'")
    job = store.claim(1.0)
    assert job is not None
    with pytest.raises(ValueError):
        store.finish(job, "queued", None, "", "", 2.0)


def test_two_processes_claiming_at_once_never_take_one_job_twice(tmp_path: Path) -> None:
    path = tmp_path / "contest.sqlite"
    first = Store(path, create=True)
    first.add_team("alpha", tokens.digest("token-of-alpha-0123456789abcdef"), 1.0)
    ids = [_submit(first, "alpha", 10.0 + i) for i in range(40)]
    taken: list[int] = []
    lock = threading.Lock()

    def claim_all() -> None:
        mine = Store(path)
        while (job := mine.claim(100.0)) is not None:
            with lock:
                taken.append(job.id)
    threads = [threading.Thread(target=claim_all) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(taken) == ids


class FakeRunner:
    """Stands for `contest submit`: says where it is, then scores; `die_at` raises in the
    middle of one job, as a kill of the scorer would stop it."""

    def __init__(self, die_at: int | None = None) -> None:
        self.die_at = die_at
        self.calls: list[tuple[int, int]] = []

    def __call__(self, job: Job, folder: Path, progress: object) -> Outcome:
        assert (folder / "controller.hh").read_bytes() == job.header
        self.calls.append((job.id, job.attempt))
        progress("trial 1 of 1")  # type: ignore[operator]
        if self.die_at == job.id:
            raise KeyboardInterrupt
        return Outcome("scored", {"score": float(job.id)}, "", f"log of {job.id}")


def test_a_scorer_killed_mid_job_reruns_it_after_a_restart_and_scores_each_once(
        store: Store, tmp_path: Path) -> None:
    ids = [_submit(store, t) for t in ("alpha", "beta", "gamma")]
    boards: list[int] = []
    dying = Scorer(store, FakeRunner(die_at=ids[1]), tmp_path / "scratch",
                   lambda s: boards.append(1))
    dying.start()
    assert dying.once()
    with pytest.raises(KeyboardInterrupt):
        dying.once()
    mid = store.submission(ids[1])
    assert mid is not None and mid.state == "running" and mid.progress == "trial 1 of 1"
    runner = FakeRunner()
    restarted = Scorer(Store(store.path), runner, tmp_path / "scratch")
    restarted.start()
    while restarted.once():
        pass
    assert runner.calls == [(ids[1], 2), (ids[2], 1)]
    states = {i: (st, att) for i, _, st, att in store.all_submissions()}
    assert states == {ids[0]: ("scored", 1), ids[1]: ("scored", 2), ids[2]: ("scored", 1)}
    assert list((tmp_path / "scratch").iterdir()) == []  # the job folders are gone


def test_the_scorer_refuses_what_the_web_user_could_have_forged(store: Store,
                                                                tmp_path: Path) -> None:
    src = _sources()
    store.db.execute("INSERT INTO teams VALUES ('../x', 'h', 1, NULL)")
    for team, body, digest in (("../x", src.body, src.sha256),
                               ("alpha", b"x" * (2 << 20), "0"),
                               ("beta", src.body + b"//", src.sha256)):
        store.db.execute("INSERT INTO submissions(team, state, header, body, sha256, created) "
                         "VALUES (?, 'queued', ?, ?, ?, 1)", (team, src.header, body, digest))
    runner = FakeRunner()
    scorer = Scorer(store, runner, tmp_path / "scratch")
    while scorer.once():
        pass
    assert runner.calls == []
    reasons = [s.reason for i, *_ in store.all_submissions()
               if (s := store.submission(i)) is not None]
    assert any("team name" in r for r in reasons)
    assert any("1048576" in r for r in reasons)
    assert any("hash" in r for r in reasons)


def test_progress_is_read_from_contest_submits_own_lines() -> None:
    assert progress_of("submission  demo: sources abc, API 3\n", 3) == "building"
    assert progress_of("built       var/contest-builds/abc/sender\n", 3) == "trial 1 of 3"
    assert progress_of("trial 1     score -1.2 ...\n", 3) == "trial 2 of 3"
    assert progress_of("trial 3     FAILED: x\n", 3) == "ranking"
    assert progress_of("leaderboard results/contest/leaderboard.html\n", 3) == ""


def test_an_outcome_keeps_no_path_of_the_machine_and_escapes_reasons() -> None:
    result = {"ok": True, "score": 1.5, "submission_dir": "/root/x/results/contest/sub/t/f",
              "run_dir": "/root/x/run", "leaderboard": "/root/x/l.html", "rank": 2,
              "trials": [{"trial": 1, "ok": False, "reason": "bad \x1b[2J", "run": "/r"}]}
    done = outcome_of(0, ["trial 1 ...", "leaderboard /root/x/l.html: rank 2 of 2",
                          __import__("json").dumps(result)], 1)
    assert done.state == "scored" and done.result is not None
    assert "/root" not in str(done.result) and done.result["folder"] == "f"
    assert "\x1b" not in str(done.result) and "\\x1b" in done.result["trials"][0]["reason"]
    assert done.log == "trial 1 ..."
    failed = outcome_of(2, ["error: controller.hh: no such file"], 1)
    assert failed.state == "failed" and failed.reason.startswith("refused: ")
    assert public_result({"trials": "junk"})["trials"] == []


def test_a_board_that_cannot_be_drawn_is_said_and_scoring_goes_on(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(_: Store) -> None:
        raise OSError("disk full")
    _submit(store, "alpha")
    scorer = Scorer(store, FakeRunner(), tmp_path / "scratch", broken)
    scorer.start()
    assert scorer.once()
    assert "boards not drawn: disk full" in capsys.readouterr().err
    assert store.counts()["scored"] == 1


def test_the_boards_are_drawn_before_a_submission_reads_scored(store: Store,
                                                               tmp_path: Path) -> None:
    """A team that sees "scored" and opens the leaderboard finds itself on it: the
    boards (drawn from the results folder) are stored before the state changes."""
    job_id = _submit(store, "alpha")
    seen: list[str] = []

    def draw(s: Store) -> None:
        sub = s.submission(job_id)
        seen.append(sub.state if sub is not None else "none")
    scorer = Scorer(store, FakeRunner(), tmp_path / "scratch", draw)
    scorer.start()
    seen.clear()  # start() draws the boards as they were
    assert scorer.once()
    done = store.submission(job_id)
    assert seen == ["running"] and done is not None and done.state == "scored"
