"""`repro contest serve` and `repro contest team`: the contest for a class, from a browser.

    repro contest serve [--host 127.0.0.1] [--port 8088] [--trace T] [--trials N]
                        [--cluster ADDRESS] [--close-at TIME] [--reveal-testing]
                        [--per-hour N] [--in-flight N] [--state-dir DIR] [--user NAME]
    repro contest team add NAME | list | revoke NAME

`serve` (as root) is a small supervisor of two processes:
- the web process (experiments/contest/serve/web.py): forked after the socket is bound
  and everything it runs is imported, it then drops to the service user (made when
  missing: a system user with no login and no home) and touches only the state file;
- the scorer (serve/scorer.py), root: it takes jobs from the state file and runs
  `repro contest submit` on each.
Either one that dies is started again; both die with the supervisor (PDEATHSIG), and
the scorer's submit then tears its network down. docs/contest-hosting.md walks a
teacher through it.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from app.commands.shared import traces_of
from core.errors import EXIT_OK, UsageError, Unavailable
from core.paths import REPO_ROOT, ProjectPaths
from core.privileges import PrivilegeError, ServiceUser, drop_to, service_user
from core.traces import TraceError
from experiments.contest.commands import DEFAULT_TRIALS, MAX_TRIALS, TEAM_RE, TRIALS, \
    resolve_trace
from experiments.contest.serve import tokens
from experiments.contest.serve.policy import Policy, utc
from experiments.contest.serve.store import Store, StoreError

DEFAULT_STATE_DIR = Path("/var/lib/netrepro-contest")
DEFAULT_USER = "netrepro-contest"
DB_NAME = "contest.sqlite"
RESTARTS = 5  # a child that dies this many times within RESTART_WINDOW_S stops the server
RESTART_WINDOW_S = 60.0
STOP_GRACE_S = 150.0  # the scorer's submit tears its network down within this
PR_SET_PDEATHSIG = 1


def add_parsers(actions: Any) -> None:
    serve = actions.add_parser(
        "serve", help="the contest for a class: web pages and an API that queue uploads, a "
        "scorer that runs them (docs/contest-hosting.md)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: put a TLS proxy in front)")
    serve.add_argument("--port", type=int, default=8088, help="port (default 8088)")
    serve.add_argument("--trace", default="training",
                       help="the trace submissions are scored on, as contest submit's "
                            "(default training)")
    serve.add_argument("--trials", type=TRIALS.argtype(), default=DEFAULT_TRIALS,
                       help=f"trials per submission (default {DEFAULT_TRIALS}, at most "
                            f"{MAX_TRIALS})")
    serve.add_argument("--cluster", metavar="ADDRESS",
                       help="score on a Dask cluster's workers (tcp://HOST:8786, tls://, "
                            "local:N), as contest submit --cluster")
    serve.add_argument("--close-at", metavar="TIME",
                       help="when submissions close, UTC: 2026-12-01T23:59 (after it uploads "
                            "are refused and the testing board is shown)")
    serve.add_argument("--reveal-testing", action="store_true",
                       help="show the testing board now, before the close")
    serve.add_argument("--per-hour", type=int, default=6,
                       help="submissions each team may make in an hour (default 6)")
    serve.add_argument("--in-flight", type=int, default=1,
                       help="submissions each team may have queued or running (default 1)")
    serve.add_argument("--secure-cookies", action="store_true",
                       help="send the login cookie over HTTPS only (behind a TLS proxy)")
    serve.add_argument("--allow-without-cgroups", action="store_true",
                       help="as contest submit's: score where the boxes' cgroup controllers "
                            "are missing")
    _state_args(serve)
    serve.add_argument("--user", default=DEFAULT_USER,
                       help=f"the service user the web process runs as (default {DEFAULT_USER}"
                            "; made when missing)")
    team = actions.add_parser("team", help="the contest server's teams and their tokens")
    what = team.add_subparsers(dest="team_command", required=True, metavar="ACTION")
    add = what.add_parser("add", help="add a team and print its token (shown once)")
    add.add_argument("name", help="1-40 letters, digits, '.', '_' or '-'")
    _state_args(add)
    revoke = what.add_parser("revoke", help="revoke a team's token (its entries stay)")
    revoke.add_argument("name")
    _state_args(revoke)
    _state_args(what.add_parser("list", help="the teams, when added or revoked, submissions"))


def _state_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help=f"where the state file is (default {DEFAULT_STATE_DIR})")


def _require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise Unavailable(f"{what} needs root: run it with sudo")


def team(args: argparse.Namespace) -> int:
    _require_root("contest team")
    try:
        store = Store(args.state_dir / DB_NAME)
    except StoreError as e:
        raise Unavailable(str(e)) from None
    now = time.time()
    if args.team_command == "add":
        if not TEAM_RE.fullmatch(args.name):
            raise UsageError(f"team name {args.name!r} refused: use 1-40 letters, digits, '.',"
                             " '_' or '-', starting with a letter or digit")
        token = tokens.new_token()
        try:
            store.add_team(args.name, tokens.digest(token), now)
        except StoreError as e:
            raise UsageError(str(e)) from None
        print(f"team {args.name}: its token (shown once, only its hash is kept):")
        print(token)
    elif args.team_command == "revoke":
        if not store.revoke_team(args.name, now):
            raise UsageError(f"no team {args.name!r} with a live token")
        print(f"team {args.name}: token revoked (its submissions and entries stay)")
    else:
        for name, created, revoked, count in store.teams():
            state = f"revoked {utc(revoked)}" if revoked else "active"
            print(f"{name:40}  added {utc(created)}  {state}  {count} submission(s)")
    return EXIT_OK


def close_time(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--close-at {text!r}: give a time such as 2026-12-01T23:59 (UTC) "
                         "or with its offset, 2026-12-01T23:59+01:00") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def prepare_state(state_dir: Path, user: ServiceUser) -> Path:
    """The state folder (root's, the service user's group may write: SQLite makes its WAL
    files there) and the state file (the service user's, so files SQLite makes for it as
    root are given to that user too); `private/`, root's alone, for the scorer."""
    state_dir.mkdir(parents=True, exist_ok=True)
    os.chown(state_dir, 0, user.gid)
    state_dir.chmod(0o1770)  # sticky: the web user may not remove or replace root's files
    private = state_dir / "private"
    private.mkdir(exist_ok=True)
    os.chown(private, 0, 0)
    private.chmod(0o700)
    db = state_dir / DB_NAME
    Store(db, create=True).close()
    for path in (db, db.with_name(DB_NAME + "-wal"), db.with_name(DB_NAME + "-shm")):
        if path.exists():
            os.chown(path, user.uid, user.gid)
            path.chmod(0o660)
    return db


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _fork(child: Callable[[], int]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _die_with_parent()
            code = child()
        except KeyboardInterrupt:
            code = 0
        except BaseException as e:  # the child's own error, said before it exits
            print(f"error: {e}", file=sys.stderr, flush=True)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid


def serve(args: argparse.Namespace, paths: ProjectPaths) -> int:
    _require_root("contest serve (its scorer builds and runs submissions in boxes)")
    traces = traces_of(args, paths)
    try:
        trace, role = resolve_trace(args.trace, traces)
    except TraceError as e:
        raise UsageError(str(e)) from None
    if not 1 <= args.trials <= MAX_TRIALS:
        raise UsageError(f"--trials {args.trials}: 1 to {MAX_TRIALS}")
    if args.per_hour < 1 or args.in_flight < 1:
        raise UsageError("--per-hour and --in-flight are at least 1")
    if args.allow_without_cgroups:
        from schemes.submission.hosting import allow_without_cgroups
        allow_without_cgroups()
    if not args.cluster or args.cluster.startswith("local:"):
        from schemes.submission.box import box_unavailable
        from schemes.submission.hosting import refusal
        why = box_unavailable() or refusal()
        if why:
            raise Unavailable(f"cannot box submitted code here: {why}")
    policy = Policy(per_hour=args.per_hour, in_flight=args.in_flight,
                    close_at=close_time(args.close_at), reveal_testing=args.reveal_testing)
    try:
        user = service_user(args.user, create=True)
    except PrivilegeError as e:
        raise Unavailable(str(e)) from None
    db = prepare_state(args.state_dir, user)
    # Imported before any fork: the web process may not read the checkout once it is not
    # root (a clone in /root).
    from experiments.contest.serve.web import Settings, load_templates, make_app
    from aiohttp import web
    settings = Settings(trace, role, args.trials, policy, args.secure_cookies)
    templates = load_templates()
    try:
        sock = socket.create_server((args.host, args.port), reuse_port=False)
    except OSError as e:
        raise Unavailable(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}"
                          ) from None

    supervisor = os.getpid()

    def web_child() -> int:
        drop_to(user)
        # A change of credentials clears the parent-death signal: set it again, and go
        # if the supervisor died before it was set.
        _die_with_parent()
        if os.getppid() != supervisor:
            return 1
        os.umask(0o007)
        store = Store(db)
        app = make_app(store, settings, templates)
        print(f"web         http://{args.host}:{args.port}/ as {user.name} (uid {user.uid}), "
              f"pid {os.getpid()}", flush=True)
        web.run_app(app, sock=sock, print=lambda *_: None, handle_signals=True,
                    access_log_format='%a "%r" %s %b %Tf')
        return 0

    def scorer_child() -> int:
        sock.close()
        from experiments.contest.serve.scorer import Scorer, SubmitRunner
        from experiments.contest.serve.snapshot import refresh
        private = args.state_dir / "private"
        env = {"NETREPRO_TRACES": str(args.traces_dir)} if args.traces_dir else {}
        runner = SubmitRunner(REPO_ROOT / "repro", trace, args.trials, args.cluster,
                              args.allow_without_cgroups, private / "submit.pid", env)
        store = Store(db)
        root = paths.results_dir / "contest"
        scorer = Scorer(store, runner, private / "scratch",
                        lambda s: refresh(s, root, traces, trace), private / "submit.pid")
        print(f"scorer      root, pid {os.getpid()}: {args.trials} trial(s) on {trace}"
              f"{' on ' + args.cluster if args.cluster else ''}", flush=True)
        scorer.run()
        return 0

    print(f"serve       state {db}; teams: ./repro contest team add NAME"
          f"{'; closes ' + utc(policy.close_at) if policy.close_at else ''}", flush=True)
    return supervise({"scorer": scorer_child, "web": web_child})


def supervise(children: dict[str, Callable[[], int]]) -> int:
    """Start each child, start again one that dies (at most RESTARTS a minute), stop all
    on SIGINT/SIGTERM."""
    running: dict[int, str] = {}
    deaths: dict[str, list[float]] = {name: [] for name in children}
    for name, child in children.items():
        running[_fork(child)] = name
    try:
        while True:
            pid, status = os.wait()
            name = running.pop(pid, "")
            if not name:
                continue
            now = time.monotonic()
            deaths[name] = [t for t in deaths[name] if now - t < RESTART_WINDOW_S] + [now]
            print(f"serve       the {name} process (pid {pid}) ended ({_how(status)})",
                  flush=True)
            if len(deaths[name]) >= RESTARTS:
                print(f"serve       it ended {RESTARTS} times within {RESTART_WINDOW_S:.0f} s:"
                      " stopping", file=sys.stderr, flush=True)
                return 1
            time.sleep(1.0)
            running[_fork(children[name])] = name
            print(f"serve       the {name} process started again", flush=True)
    except KeyboardInterrupt:
        print("serve       stopping (the scorer stops its trial; it is rerun on the next "
              "start)", flush=True)
        return 0
    finally:
        _stop(running)


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"status {os.waitstatus_to_exitcode(status)}"


def _stop(running: dict[int, str]) -> None:
    for pid in running:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    while running and time.monotonic() < deadline:
        for pid in list(running):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                running.pop(pid)
        time.sleep(0.1)
    for pid, name in running.items():
        print(f"serve       the {name} process did not stop within {STOP_GRACE_S:.0f} s: "
              "killed", file=sys.stderr, flush=True)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
