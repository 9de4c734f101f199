"""`repro contest`: submit a controller to the contest, and redraw the leaderboards.

    repro contest submit DIR_OR_FILES [--name TEAM] [--trace training|validation|testing|NAME]
                         [--trials N] [--json] [--force] [--cluster tcp://HOST:8786|local:N]
    repro contest board [--publish-sources | --withdraw-sources]
    repro contest serve [--port 8088] [--trace T] [--trials N] [--close-at TIME] ...
    repro contest team add NAME | list | revoke NAME

A submission is checked (schemes/submission/: two files, one of the three API
generations), built in a box of its own, run N times (3 by default, as the
contest's final ranking: every trial kept, ranked by the best) on the contest
path of the trace, recorded under results/contest/submissions/<team>/<time>-<hash>/
and placed on the leaderboard. Nothing from the command line reaches a shell.
With --cluster the trials run side by side on Dask workers, each built there
from the sources shipped with it (cluster.py beside this module); nothing is
compiled or run on the client. This is the contest paper's own command: app code
kept in its folder (app/cli.py finds it).

Exit status: 0 at least one trial scored; 1 the submission failed (does not
compile, or no trial scored: the reasons are printed); 2 refused (bad files,
API, name, trace, arguments); 3 the machine cannot run it (not root, no box can
be made, native build missing; with --cluster: no scheduler or Dask).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from experiments.contest.leaderboard import best_trial, board, late_text, write_leaderboards
from experiments.contest.published_sources import set_published
from app.executor import execute
from app.commands.shared import traces_of
from core.errors import EXIT_FAILED, EXIT_OK
from core.paths import ProjectPaths, display
from core.results import ExperimentStore, read_json, write_json
from core.settings import Setting
from core.traces import TraceError, TraceSet
from experiments.contest.board import TRACE_ROLES, board_traces, contest_spec
from schemes.submission.box import box_unavailable
from schemes.submission.box_users import BoxUnavailable
from schemes.submission.api import GENERATIONS, SubmissionRefused
from schemes.submission.build import binary_path, build
from schemes.submission.hosting import FLAG, allow_without_cgroups, refusal
from schemes.submission.sources import Sources
from schemes.submission.untrusted_text import reason as shown

EXPERIMENT = "contest"
TEAM_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
TRACE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
SUMMARY_KEYS = ("throughput_mbps", "p95_e2e_delay_ms", "p95_signal_delay_ms", "power", "score",
                "utilization", "capacity_mbps", "window_capped", "lateness_p99_us",
                "ack_lateness_p99_us", "lateness_ok")
NAME = "contest"
DEFAULT_TRIALS = 3
MAX_TRIALS = 20
# The training trace's name, for --help (experiments/contest/board.py holds the roles).
TRAINING = "Verizon-LTE-short"
TRIALS = Setting("trials", int, "runs of the whole trace", minimum=1, maximum=MAX_TRIALS)


def add_parser(sub: Any) -> None:
    """The `contest` subcommand and its own subcommands."""
    contest = sub.add_parser(NAME, help="the congestion-control contest: submit a "
                             "controller, redraw the leaderboards (docs/contest.md)")
    actions = contest.add_subparsers(dest="contest_command", required=True, metavar="ACTION")
    submit = actions.add_parser(
        "submit", help="build, run and score a controller.hh + controller.cc")
    submit.add_argument("sources", nargs="+", metavar="DIR_OR_FILES",
                        help="a directory holding controller.hh and controller.cc, or the "
                             "two files")
    submit.add_argument("--name", help="team name: letters, digits, '.', '_', '-' (at most "
                        "40; default: the directory's name)")
    submit.add_argument("--trace", default="training",
                        help="training, validation, testing, or a trace name with .down and "
                             ".up files (default training: "
                             f"{TRAINING})")
    submit.add_argument("--trials", type=TRIALS.argtype(), default=DEFAULT_TRIALS,
                        help=f"runs of the whole trace; ranked by the best (default "
                             f"{DEFAULT_TRIALS}, at most {MAX_TRIALS})")
    submit.add_argument("--force", action="store_true",
                        help="rerun trials already done for these exact sources")
    submit.add_argument("--json", action="store_true",
                        help="end with one JSON object (the best trial's metrics)")
    submit.add_argument(FLAG, action="store_true",
                        help="host the contest even where the boxes' cgroup controllers are "
                             "missing (each box then has per-process limits only; "
                             "docs/contest.md says what is then unbounded)")
    submit.add_argument("--cluster", metavar="ADDRESS",
                        help="run the trials on a Dask cluster (tcp://HOST:8786 or tls://, or "
                             "local:N), each built on its worker from the sources shipped with "
                             "it (docs/cluster.md)")
    board_parser = actions.add_parser(
        "board", help="redraw results/contest/leaderboard.html and its CSVs")
    sources = board_parser.add_mutually_exclusive_group()
    sources.add_argument("--publish-sources", action="store_true",
                         help="from now on, link every team's sources from the leaderboard "
                              "(copies readable by all; off by default: sources are root's)")
    sources.add_argument("--withdraw-sources", action="store_true",
                         help="stop linking the sources and remove the published copies")
    from experiments.contest.commands.serve import add_parsers
    add_parsers(actions)


def team_name(given: str | None, sources: list[str]) -> str:
    """--name as given (refused unless plain), else the directory's name made plain."""
    if given is not None:
        if not TEAM_RE.fullmatch(given):
            raise SubmissionRefused(
                f"team name {given!r} refused: use 1-40 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit (no spaces, slashes or shell characters)")
        return given
    base = Path(sources[0]).resolve()
    base = base if base.is_dir() else base.parent
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "-", base.name).strip(".-_")[:40]
    return plain if plain and TEAM_RE.fullmatch(plain) else "anonymous"


def resolve_trace(given: str, traces: TraceSet) -> tuple[str, str | None]:
    """(trace base name, role or None); TraceError when its .down or .up is missing."""
    name = TRACE_ROLES.get(given, given)
    roles = [r for r, n in TRACE_ROLES.items() if n == name]
    role = given if given in TRACE_ROLES else (roles[0] if roles else None)
    for suffix in (".down", ".up"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if not TRACE_NAME_RE.fullmatch(name):
        raise TraceError(f"--trace {given!r}: give training, validation, testing or a trace "
                         "name (no paths)")
    for suffix in (".down", ".up"):
        traces.resolve(name + suffix)  # raises TraceError naming the file and the fix
    return name, role


def _new_folder(root: Path, team: str, digest: str) -> Path:
    """The submission's own folder; submissions/ and everything in it are root's only
    (folders 0700, files 0600): a team's sources are nobody else's to read."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder = root / "submissions" / team / f"{stamp}-{digest}"
    n = 1
    while folder.exists():
        n += 1
        folder = root / "submissions" / team / f"{stamp}-{digest}-{n}"
    folder.mkdir(parents=True, mode=0o700)
    for private in (root / "submissions", folder.parent, folder):
        private.chmod(0o700)
    return folder


def _private_text(path: Path, text: str) -> None:
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(text)


def _summary(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: metrics.get(k) for k in SUMMARY_KEYS}


def _line(metrics: dict[str, Any]) -> str:
    def f(key: str, fmt: str) -> str:
        v = metrics.get(key)
        return format(v, fmt) if isinstance(v, (int, float)) else "-"
    return (f"score {f('score', '.3f')}  throughput {f('throughput_mbps', '.3f')} Mbit/s  "
            f"p95 e2e delay {f('p95_e2e_delay_ms', '.0f')} ms  signal delay "
            f"{f('p95_signal_delay_ms', '.0f')} ms  power {f('power', '.1f')}")


def submit(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet) -> int:
    if not 1 <= args.trials <= MAX_TRIALS:
        raise SubmissionRefused(f"--trials {args.trials} is out of range: 1 to {MAX_TRIALS}")
    sources = Sources.collect([Path(p) for p in args.sources])
    team = team_name(args.name, args.sources)
    api = sources.api()
    trace, role = resolve_trace(args.trace, traces)
    cluster = getattr(args, "cluster", None)
    if getattr(args, "allow_without_cgroups", False):
        allow_without_cgroups()
    if cluster is None:
        if os.geteuid() != 0:
            raise BoxUnavailable("contest submit needs root (it builds and runs the code in "
                                 "boxes of its own, in network namespaces): use sudo, or "
                                 "--cluster to run it on workers")
        why = box_unavailable() or refusal()
        if why:
            raise BoxUnavailable(f"cannot box submitted code here: {why}")
    elif cluster.startswith("local:") and os.geteuid() != 0:
        raise BoxUnavailable(f"--cluster {cluster} builds and runs the trials on this "
                             "machine, in boxes, which takes root: use sudo")
    elif cluster.startswith("local:") and refusal():
        raise BoxUnavailable(f"cannot box submitted code here: {refusal()}")
    digest = sources.digest
    root = paths.results_dir / EXPERIMENT
    folder = _new_folder(root, team, digest)
    sources.write(folder)
    record: dict[str, Any] = {
        "team": team, "source_hash": digest, "api_generation": api,
        "api": GENERATIONS[api], "origin": sources.origin, "trace": trace, "role": role,
        "trials_requested": args.trials, "submitted_at": time.strftime(
            "%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "submitted_unix": time.time(),
        "trials": []}
    out = sys.stdout
    print(f"submission  {team}: sources {digest}, API {GENERATIONS[api]}", file=out)
    print(f"trace       {trace}{f' ({role})' if role else ''}: {args.trials} trial(s) of the "
          "whole trace", file=out, flush=True)
    if cluster is not None:
        return _submit_on_cluster(args, paths, traces, root, folder, record, sources)

    built = build(sources, api, paths)
    _private_text(folder / "build.log", built.log + "\n")
    record["build_box"] = built.box
    if not built.ok:
        print(f"build failed: {built.reason}; the compiler said:", file=sys.stderr)
        print(built.message(), file=sys.stderr)
        record.update(status="build failed", reason=f"does not compile: {built.reason} "
                      "(see build.log)")
        return _finish(args, paths, traces, root, folder, record, None)
    print(f"built       {display(binary_path(paths, digest))}", file=out, flush=True)

    store = ExperimentStore(root)
    for trial in range(1, args.trials + 1):
        spec = contest_spec(EXPERIMENT, "submission", trace, trial, {"submission": digest})
        if store.is_done(spec) and not args.force:
            run_dir = store.run_dir(spec)
            metrics = read_json(run_dir / "metrics.json")
            entry = {"trial": trial, "ok": True, "run": os.path.relpath(run_dir, root),
                     "reused": True, **_summary(metrics)}
        else:
            outcome = execute(spec, store, paths, traces)
            entry = {"trial": trial, "ok": outcome.ok, "run": os.path.relpath(outcome.path, root)}
            if outcome.ok:
                assert outcome.metrics is not None
                entry.update(_summary(outcome.metrics))
            else:
                entry["reason"] = outcome.reason
        _show(entry)  # a run without a score fails here
        record["trials"].append(entry)
    return _score(args, paths, traces, root, folder, record)


def _show(entry: dict[str, Any]) -> None:
    if entry["ok"] and not isinstance(entry.get("score"), (int, float)):
        entry.update(ok=False, reason="no score: the run has no throughput or delay")
    text = _line(entry) if entry["ok"] else f"FAILED: {shown(entry['reason'])}"
    where = f" (on {entry['worker']})" if entry.get("worker") else ""
    print(f"trial {entry['trial']}     {text}{' (done before)' if entry.get('reused') else ''}"
          f"{where}", flush=True)
    late = late_text(entry) if entry["ok"] else ""
    if late:
        print(f"            {late} with --force; a timely trial ranks before it", flush=True)


def _submit_on_cluster(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet,
                       root: Path, folder: Path, record: dict[str, Any],
                       sources: Sources) -> int:
    """The trials on Dask workers, each built there from the sources it carries."""
    from app.cluster.backend import open_cluster
    from experiments.contest.commands.cluster import ClusterTrials, build_log_text, run_trials
    from core.jobs import default_jobs
    store = ExperimentStore(root)
    reused, specs = [], []
    for trial in range(1, args.trials + 1):
        spec = contest_spec(EXPERIMENT, "submission", record["trace"], trial,
                            {"submission": record["source_hash"]})
        if store.is_done(spec) and not args.force:
            run_dir = store.run_dir(spec)
            entry = {"trial": trial, "ok": True, "run": os.path.relpath(run_dir, root),
                     "reused": True, **_summary(read_json(run_dir / "metrics.json"))}
            reused.append(entry)
            _show(entry)
        else:
            specs.append(spec)
    trials = ClusterTrials(entries=[])
    if specs:
        backend = open_cluster(args.cluster, paths, traces, default_jobs(paths.state_dir).jobs)
        print(f"build       on the workers: the sources (sha256 {sources.sha256}) go with "
              "each trial", flush=True)
        try:
            trials = run_trials(backend, store, sources, specs, _summary, _show)
        finally:
            for line in backend.close():
                print(line, flush=True)
    _private_text(folder / "build.log", build_log_text(trials, len(reused)) + "\n")
    record["trials"] = sorted(reused + trials.entries, key=lambda t: int(t["trial"]))
    record["cluster"] = args.cluster
    if trials.build_failed and not any(t["ok"] for t in record["trials"]):
        reason = trials.build_failed[0]
        print(f"build failed: {shown(reason)}", file=sys.stderr)
        record.update(status="build failed", reason=f"{reason} (see build.log)")
        return _finish(args, paths, traces, root, folder, record, None)
    return _score(args, paths, traces, root, folder, record)


def _score(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet, root: Path,
           folder: Path, record: dict[str, Any]) -> int:
    best = best_trial([t for t in record["trials"] if t["ok"]], lambda t: t)
    if best is None:
        reasons = sorted({t.get("reason", "") for t in record["trials"]})
        record.update(status="failed", reason=shown("no trial scored: " + "; ".join(reasons)))
    else:
        record.update(status="scored", best_trial=best["trial"])
    return _finish(args, paths, traces, root, folder, record, best)


def _finish(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet, root: Path,
            folder: Path, record: dict[str, Any], best: dict[str, Any] | None) -> int:
    write_json(folder / "submission.json", record)
    (folder / "submission.json").chmod(0o600)
    boards = board_traces(root, traces)
    files = write_leaderboards(root, boards)
    page = next(f for f in files if f.name == "leaderboard.html")
    rank, entries = None, 0
    for b in boards:
        if b.name == record["trace"]:
            rows = board(root, b)
            entries = sum(1 for r in rows if r.rank is not None)
            rank = next((r.rank for r in rows if r.kind == "submission"
                         and r.name == record["team"]), None)
    result: dict[str, Any] = {
        "ok": best is not None, "team": record["team"], "source_hash": record["source_hash"],
        "api_generation": record["api_generation"], "trace": record["trace"],
        "role": record["role"], "trials": record["trials"],
        "best_trial": record.get("best_trial"), "submission_dir": str(folder),
        "leaderboard": str(page), "rank": rank}
    if best is not None:
        result.update({k: best.get(k) for k in SUMMARY_KEYS})
        result["run_dir"] = str(root / best["run"])
        print(f"best        trial {best['trial']} of {len(record['trials'])}: {_line(best)}")
        late = late_text(best)
        if late:
            print(f"            no trial was timely: {late} with --force")
        if best.get("window_capped"):
            print("            (the window asked for was above 10,000 datagrams and was capped)")
        print(f"leaderboard {display(page)}: rank {rank} of {entries} on {record['trace']}")
    else:
        result["reason"] = record["reason"]
        print(f"failed      {shown(record['reason'])}")
        print(f"leaderboard {display(page)} (listed as failed)")
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return EXIT_OK if best is not None else EXIT_FAILED


def redraw(paths: ProjectPaths, traces: TraceSet, args: argparse.Namespace) -> int:
    root = paths.results_dir / EXPERIMENT
    if getattr(args, "publish_sources", False) or getattr(args, "withdraw_sources", False):
        set_published(root, bool(args.publish_sources))
        state = ("published: the leaderboard links every team's sources" if args.publish_sources
                 else "withdrawn: not linked, copies removed")
        print(f"sources     {state}")
    for f in write_leaderboards(root, board_traces(root, traces)):
        print(f"wrote {display(f)}")
    return EXIT_OK


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """A refused submission (exit 2) or a machine that cannot build it (exit 3) reaches the
    command line as the error it is."""
    traces = traces_of(args, paths)
    if args.contest_command == "board":
        return redraw(paths, traces, args)
    if args.contest_command in ("serve", "team"):
        from experiments.contest.commands import serve
        return serve.serve(args, paths) if args.contest_command == "serve" else serve.team(args)
    return submit(args, paths, traces)
