"""The contest server's state: one SQLite file both processes share.

The web process (unprivileged) writes teams' uploads into it and reads the boards;
the scorer (root) takes jobs from it and writes results and boards back. Every
change is one transaction, so a kill of either at any moment leaves the file as it
was before or after that change, never between.

A submission moves queued -> running -> scored | failed, and nothing else:
- claiming it (queued -> running) adds one to its attempt counter in the same
  transaction;
- its result is written only while it is still running under the attempt that
  produced it (`finish`), so a result arriving twice, or from an attempt a restart
  gave up on, changes nothing;
- a restart puts what was running back in the queue (`recover`); after MAX_ATTEMPTS
  it is failed with that reason instead of being tried forever.

Teams take turns: the next job is the oldest of the team served longest ago
(`turns.served` counts dispatches), not the oldest job overall.

What the web user can write here is untrusted by the scorer: it re-checks team
names and the two files (schemes/submission/intake.py) before it builds anything,
and takes the trace, trials and cluster from its own command line, never from here.
"""
from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from experiments.contest.serve import tokens
from experiments.contest.serve.policy import HOUR_S, Policy, Refusal, check

MAX_ATTEMPTS = 3
SESSION_S = 12 * HOUR_S
NONCE_S = 2 * HOUR_S
MAX_NONCES = 20_000  # forms handed out and not used yet, all visitors together
BUSY_MS = 15_000
STATES = ("queued", "running", "scored", "failed")

SCHEMA = """
CREATE TABLE IF NOT EXISTS teams (
    name TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE,
    created REAL NOT NULL, revoked REAL);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, team TEXT NOT NULL REFERENCES teams(name),
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'scored', 'failed')),
    header BLOB NOT NULL, body BLOB NOT NULL, sha256 TEXT NOT NULL,
    created REAL NOT NULL, started REAL, finished REAL,
    attempts INTEGER NOT NULL DEFAULT 0, progress TEXT NOT NULL DEFAULT '',
    result TEXT, reason TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS submissions_state ON submissions(state, id);
CREATE INDEX IF NOT EXISTS submissions_team ON submissions(team, created);
CREATE TABLE IF NOT EXISTS turns (team TEXT PRIMARY KEY, served INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS boards (
    id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS figures (key TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id_hash TEXT PRIMARY KEY, team TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS nonces (
    hash TEXT PRIMARY KEY, session TEXT NOT NULL, expires REAL NOT NULL);
"""


class StoreError(RuntimeError):
    """The state file cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Job:
    id: int
    team: str
    header: bytes
    body: bytes
    sha256: str
    attempt: int


@dataclass(frozen=True)
class Submission:
    id: int
    team: str
    state: str
    created: float
    started: float | None
    finished: float | None
    attempts: int
    progress: str
    result: dict[str, Any] | None
    reason: str
    log: str
    sha256: str


class Store:
    """One connection to the state file (a process opens one and keeps it)."""

    def __init__(self, path: Path, create: bool = False) -> None:
        if not create and not path.is_file():
            raise StoreError(f"{path}: no contest state here (start `./repro contest serve`, "
                             "or give the --state-dir it uses)")
        self.path = path
        # isolation_level=None: transactions are ours (BEGIN IMMEDIATE), never implicit.
        self.db = sqlite3.connect(str(path), timeout=BUSY_MS / 1000, isolation_level=None,
                                  check_same_thread=False)
        self.db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("PRAGMA foreign_keys = ON")
        # The other process may have written this file: no schema code runs from it.
        self.db.execute("PRAGMA trusted_schema = OFF")
        if create:
            self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind: object, *_: object) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def tx(self) -> "Store._Tx":
        """One write transaction (taken at once, so two writers queue, never deadlock)."""
        return Store._Tx(self.db)

    # Teams ---------------------------------------------------------------------------

    def add_team(self, name: str, token_hash: str, now: float) -> None:
        with self.tx() as db:
            row = db.execute("SELECT revoked FROM teams WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] is None:
                raise StoreError(f"team {name!r} exists (revoke it first to give it a new "
                                 "token)")
            db.execute("INSERT INTO teams(name, token_hash, created, revoked) VALUES (?, ?, ?, "
                       "NULL) ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash,"
                       " created = excluded.created, revoked = NULL", (name, token_hash, now))

    def revoke_team(self, name: str, now: float) -> bool:
        with self.tx() as db:
            done = db.execute("UPDATE teams SET revoked = ? WHERE name = ? AND revoked IS NULL",
                              (now, name)).rowcount == 1
            db.execute("DELETE FROM sessions WHERE team = ?", (name,))
        return done

    def teams(self) -> list[tuple[str, float, float | None, int]]:
        """(name, created, revoked, submissions) of every team."""
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(
            "SELECT t.name, t.created, t.revoked, (SELECT COUNT(*) FROM submissions s "
            "WHERE s.team = t.name) FROM teams t ORDER BY t.name")]

    def team_of_token(self, token: str | None) -> str | None:
        if not tokens.plausible(token):
            return None
        assert token is not None
        row = self.db.execute("SELECT name, token_hash FROM teams WHERE token_hash = ? AND "
                              "revoked IS NULL", (tokens.digest(token),)).fetchone()
        return str(row[0]) if row and tokens.same(row[1], tokens.digest(token)) else None

    # Sessions and single-use forms ---------------------------------------------------

    def new_session(self, team: str, now: float) -> str:
        sid = tokens.new_token()
        with self.tx() as db:
            db.execute("DELETE FROM sessions WHERE expires < ?", (now,))
            db.execute("INSERT INTO sessions VALUES (?, ?, ?)",
                       (tokens.digest(sid), team, now + SESSION_S))
        return sid

    def session_team(self, sid: str | None, now: float) -> str | None:
        if not tokens.plausible(sid):
            return None
        assert sid is not None
        row = self.db.execute(
            "SELECT s.team FROM sessions s JOIN teams t ON t.name = s.team WHERE s.id_hash = ? "
            "AND s.expires > ? AND t.revoked IS NULL", (tokens.digest(sid), now)).fetchone()
        return str(row[0]) if row else None

    def end_session(self, sid: str) -> None:
        if tokens.plausible(sid):
            with self.tx() as db:
                db.execute("DELETE FROM sessions WHERE id_hash = ?", (tokens.digest(sid),))

    def new_nonce(self, bound_to: str, now: float) -> str:
        """A form's one-use token, bound to a session (or "" for the login form)."""
        nonce = tokens.new_token()
        with self.tx() as db:
            db.execute("DELETE FROM nonces WHERE expires < ?", (now,))
            db.execute("DELETE FROM nonces WHERE hash IN (SELECT hash FROM nonces ORDER BY "
                       "expires DESC LIMIT -1 OFFSET ?)", (MAX_NONCES - 1,))
            db.execute("INSERT INTO nonces VALUES (?, ?, ?)",
                       (tokens.digest(nonce), bound_to, now + NONCE_S))
        return nonce

    def use_nonce(self, nonce: str | None, bound_to: str, now: float) -> bool:
        """True once for a nonce handed out for `bound_to`; never again."""
        if not tokens.plausible(nonce):
            return False
        assert nonce is not None
        with self.tx() as db:
            return db.execute("DELETE FROM nonces WHERE hash = ? AND session = ? AND "
                              "expires > ?", (tokens.digest(nonce), bound_to, now)
                              ).rowcount == 1

    # The queue -------------------------------------------------------------------------

    def enqueue(self, team: str, header: bytes, body: bytes, sha256: str, policy: Policy,
                now: float) -> int | Refusal:
        """The new submission's id, stored before this returns; or why it is refused."""
        with self.tx() as db:
            row = db.execute("SELECT revoked FROM teams WHERE name = ?", (team,)).fetchone()
            if row is None or row[0] is not None:
                return Refusal(401, "this team's token was revoked")
            in_flight = db.execute("SELECT COUNT(*) FROM submissions WHERE team = ? AND state "
                                   "IN ('queued', 'running')", (team,)).fetchone()[0]
            hour = [r[0] for r in db.execute("SELECT created FROM submissions WHERE team = ? "
                                             "AND created > ?", (team, now - HOUR_S))]
            refusal = check(policy, now, int(in_flight), hour)
            if refusal is not None:
                return refusal
            return int(db.execute(
                "INSERT INTO submissions(team, state, header, body, sha256, created) VALUES "
                "(?, 'queued', ?, ?, ?, ?)", (team, header, body, sha256, now)).lastrowid or 0)

    def claim(self, now: float) -> Job | None:
        """The next job (queued -> running, one more attempt), or None: one a restart put
        back first (it was dispatched already), then by turns."""
        with self.tx() as db:
            row = db.execute(
                "SELECT s.id, s.team FROM submissions s LEFT JOIN turns t ON t.team = s.team "
                "WHERE s.state = 'queued' ORDER BY s.attempts = 0, COALESCE(t.served, 0), s.id "
                "LIMIT 1"
            ).fetchone()
            if row is None:
                return None
            job_id, team = int(row[0]), str(row[1])
            db.execute("UPDATE submissions SET state = 'running', attempts = attempts + 1, "
                       "started = ?, progress = 'starting' WHERE id = ?", (now, job_id))
            db.execute("INSERT INTO turns(team, served) VALUES (?, (SELECT COALESCE(MAX(served),"
                       " 0) + 1 FROM turns)) ON CONFLICT(team) DO UPDATE SET served = "
                       "excluded.served", (team,))
            got = db.execute("SELECT header, body, sha256, attempts FROM submissions WHERE "
                             "id = ?", (job_id,)).fetchone()
        return Job(job_id, team, bytes(got[0]), bytes(got[1]), str(got[2]), int(got[3]))

    def progress(self, job: Job, text: str) -> bool:
        with self.tx() as db:
            return db.execute("UPDATE submissions SET progress = ? WHERE id = ? AND state = "
                              "'running' AND attempts = ?", (text, job.id, job.attempt)
                              ).rowcount == 1

    def finish(self, job: Job, state: str, result: dict[str, Any] | None, reason: str,
               log: str, now: float) -> bool:
        """Write the result of this attempt; False (nothing changed) when it was written
        before or the job is no longer this attempt's."""
        if state not in ("scored", "failed"):
            raise ValueError(f"a job finishes scored or failed, not {state!r}")
        with self.tx() as db:
            return db.execute(
                "UPDATE submissions SET state = ?, result = ?, reason = ?, log = ?, "
                "finished = ?, progress = '' WHERE id = ? AND state = 'running' AND "
                "attempts = ?", (state, json.dumps(result) if result is not None else None,
                                 reason, log, now, job.id, job.attempt)).rowcount == 1

    def recover(self, now: float) -> list[tuple[int, str]]:
        """After a restart: what was running is queued again, or failed after
        MAX_ATTEMPTS; (id, what became of it) for each."""
        with self.tx() as db:
            rows = db.execute("SELECT id, attempts FROM submissions WHERE state = 'running'"
                              ).fetchall()
            done = []
            for job_id, attempts in rows:
                if attempts >= MAX_ATTEMPTS:
                    db.execute("UPDATE submissions SET state = 'failed', finished = ?, "
                               "progress = '', reason = ? WHERE id = ?",
                               (now, f"the scorer stopped during each of its {attempts} "
                                "attempts; ask the teacher", job_id))
                    done.append((int(job_id), "failed"))
                else:
                    db.execute("UPDATE submissions SET state = 'queued', progress = '' "
                               "WHERE id = ?", (job_id,))
                    done.append((int(job_id), "queued"))
        return done

    def queue_order(self) -> list[int]:
        """The queued ids in the order `claim` will take them: what a restart put back
        first, then by turns, then by age."""
        served = {r[0]: int(r[1]) for r in self.db.execute("SELECT team, served FROM turns")}
        waiting: dict[str, list[int]] = {}
        order = []
        for job_id, team, attempts in self.db.execute(
                "SELECT id, team, attempts FROM submissions WHERE state = 'queued' ORDER BY "
                "attempts = 0, COALESCE((SELECT served FROM turns t WHERE t.team = "
                "submissions.team), 0), id"):
            if attempts:
                order.append(int(job_id))
            else:
                waiting.setdefault(str(team), []).append(int(job_id))
        counter = max(served.values(), default=0)
        while waiting:
            team = min(waiting, key=lambda t: (served.get(t, 0), waiting[t][0]))
            order.append(waiting[team].pop(0))
            counter += 1
            served[team] = counter
            if not waiting[team]:
                del waiting[team]
        return order

    def position(self, job_id: int) -> int | None:
        order = self.queue_order()
        return order.index(job_id) + 1 if job_id in order else None

    def submission(self, job_id: int) -> Submission | None:
        row = self.db.execute(
            "SELECT id, team, state, created, started, finished, attempts, progress, result, "
            "reason, log, sha256 FROM submissions WHERE id = ?", (job_id,)).fetchone()
        return _submission(row) if row else None

    def history(self, team: str, limit: int = 200) -> list[Submission]:
        return [_submission(r) for r in self.db.execute(
            "SELECT id, team, state, created, started, finished, attempts, progress, result, "
            "reason, '', sha256 FROM submissions WHERE team = ? ORDER BY id DESC LIMIT ?",
            (team, limit))]

    def counts(self) -> dict[str, int]:
        found = {s: 0 for s in STATES}
        for state, n in self.db.execute("SELECT state, COUNT(*) FROM submissions GROUP BY "
                                        "state"):
            found[str(state)] = int(n)
        return found

    def all_submissions(self) -> Iterator[tuple[int, str, str, int]]:
        """(id, team, state, attempts) of every submission (tests, the teacher)."""
        for r in self.db.execute("SELECT id, team, state, attempts FROM submissions ORDER BY id"):
            yield int(r[0]), str(r[1]), str(r[2]), int(r[3])

    # Boards and their figures (written by the scorer, which can read the results) ----

    def set_boards(self, boards: list[dict[str, Any]], figures: dict[str, bytes],
                   now: float) -> None:
        with self.tx() as db:
            db.execute("INSERT INTO boards(id, json, updated) VALUES (1, ?, ?) ON CONFLICT(id) "
                       "DO UPDATE SET json = excluded.json, updated = excluded.updated",
                       (json.dumps(boards), now))
            for key, data in figures.items():
                db.execute("INSERT OR REPLACE INTO figures(key, data) VALUES (?, ?)", (key, data))

    def boards(self) -> tuple[list[dict[str, Any]], float | None]:
        row = self.db.execute("SELECT json, updated FROM boards WHERE id = 1").fetchone()
        return (json.loads(row[0]), float(row[1])) if row else ([], None)

    def figure_keys(self) -> set[str]:
        return {str(r[0]) for r in self.db.execute("SELECT key FROM figures")}

    def figure(self, key: str) -> bytes | None:
        row = self.db.execute("SELECT data FROM figures WHERE key = ?", (key,)).fetchone()
        return bytes(row[0]) if row else None


def _submission(row: Any) -> Submission:
    try:
        result = json.loads(row[8]) if row[8] else None
    except ValueError:
        result = None
    return Submission(int(row[0]), str(row[1]), str(row[2]), float(row[3]),
                      row[4], row[5], int(row[6]), str(row[7]),
                      result if isinstance(result, dict) else None, str(row[9]), str(row[10]),
                      str(row[11]))


def now() -> float:
    return time.time()
