"""The `repro` command: doctor, list, run, one, report, clean, bench.

Exit status: 0 success; 1 a run or check failed; 2 bad usage or input;
3 the machine cannot run the suite (not root, not built); 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any, Callable

from app.validation import DELAY_MS, DURATION, JOBS, TRIALS
from core.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Unavailable, UsageError
from core.paths import ProjectPaths, display
from core.runspec import RunSpec, make_params
from core.traces import TraceSet


log = logging.getLogger("repro")


def _traces(args: argparse.Namespace, paths: ProjectPaths) -> TraceSet:
    return TraceSet.for_project(paths.root, extra_dir=args.traces_dir)


def _require_root() -> None:
    if os.geteuid() != 0:
        raise Unavailable("this command needs root (network namespaces, raw sockets, BPF): "
                          "run it with sudo")


def cmd_doctor(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.doctor import run_doctor
    return run_doctor(paths, _traces(args, paths))


def cmd_list(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from experiments.registry import all_experiments
    from schemes.registry import known_schemes
    traces = _traces(args, paths)
    print("experiments:")
    for exp in all_experiments(traces):
        full = exp.matrix(quick=False)
        quick = exp.matrix(quick=True)
        print(f"  {exp.name:22s} {exp.title}")
        print(f"  {'':22s} {len(full)} runs in full mode; --quick: {len(quick)} runs "
              f"({exp.quick_note})")
        for option in exp.options:
            print(f"  {'':22s} option {option.describe()}")
    print("schemes:")
    for info in known_schemes():
        print(f"  {info.name:22s} [{info.family}] {info.description}")
        if info.flags:
            print(f"  {'':22s} takes {', '.join(info.flags)} (see `repro one --help`)")
    print("traces:")
    for name in traces.known_traces():
        print(f"  {name}")
    return EXIT_OK


def cmd_clean(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.cleanup import clean_ours
    _require_root()
    for line in clean_ours(paths):
        print(line)
    return EXIT_OK


def cmd_run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.report import write_report
    from core.results import experiment_store
    from app.runner import MatrixRunner, print_summary
    from app.recorded_options import pinned, record_plans
    from experiments.registry import all_experiments
    _require_root()
    traces = _traces(args, paths)
    # Every choice the machine makes (--controller auto...) decided once, planned from, recorded.
    experiments = [pinned(exp) for exp in _chosen_experiments(args, traces)]
    plan = [(exp, exp.matrix(quick=args.quick, trials=args.trials)) for exp in experiments]
    jobs = _jobs(args, paths)
    backend = _cluster(args, paths, traces, jobs)  # None without --cluster
    runner = MatrixRunner(paths, traces, jobs=backend.slots if backend else jobs,
                          force=args.force, redo_late=args.redo_late, backend=backend)
    if args.quick:
        _print_full_mode_estimate(experiments, args.trials, runner)
    record_plans(paths.results_dir, experiments)  # what verify and report judge them by
    try:
        results = runner.run_plan(plan)
    finally:
        for line in backend.close() if backend else []:
            print(line, flush=True)
    status = EXIT_OK
    for exp, _ in plan:
        result = results[exp.name]
        print_summary(result, title=exp.name)
        if result.interrupted:
            continue
        store = experiment_store(paths.results_dir, exp.name)
        if not _refresh(store, exp):
            status = EXIT_FAILED  # a run's metrics could not be computed (listed above)
        for f in exp.make_figures(store, store.root):
            print(f"wrote {display(f)}")
        if result.failed:
            status = EXIT_FAILED
    if any(r.interrupted for r in results.values()):
        print("interrupted: rerun the same command to resume; `./repro report` draws the "
              "figures from the runs that finished")
        return EXIT_INTERRUPTED
    print(f"wrote {display(write_report(paths, all_experiments(traces)))}")
    return status


def _cluster(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet,
             jobs: int) -> Any:
    """`--cluster`: the runs go to Dask workers (app/cluster.py)."""
    if not getattr(args, "cluster", None):
        return None
    from app.cluster import ClusterUnavailable, open_cluster
    try:
        return open_cluster(args.cluster, paths, traces, jobs, jobs_given=args.jobs is not None,
                            dashboard=args.dashboard)
    except ClusterUnavailable as e:
        raise Unavailable(str(e)) from None


def cmd_worker(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.cluster_worker import serve_worker
    _require_root()
    if args.traces_dir:  # the runs' child processes look there too
        os.environ["NETREPRO_TRACES"] = str(Path(args.traces_dir).resolve())
    return serve_worker(args.scheduler, paths, _traces(args, paths), _jobs(args, paths),
                        listen=args.listen, name=args.name)


def _chosen_experiments(args: argparse.Namespace, traces: TraceSet) -> list[Any]:
    """`run`'s experiments, each given the options it declares (refused if it takes none)."""
    from experiments.registry import all_experiments, get_experiment
    given = {name[len(OPTION_DEST):]: value for name, value in vars(args).items()
             if name.startswith(OPTION_DEST)}
    if args.experiment != "all":
        return [get_experiment(args.experiment, traces, given)]
    experiments = all_experiments(traces)
    return [type(exp)(traces, {k: v for k, v in given.items()
                               if k in {o.name for o in exp.options}}) for exp in experiments]


def _jobs(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """--jobs, else this machine's default; the plan says where the number comes from."""
    from core.jobs import default_jobs
    if args.jobs is not None:
        print(f"jobs: {args.jobs} runs side by side (--jobs)", flush=True)
        return args.jobs
    default = default_jobs(paths.state_dir)
    print(f"jobs: {default.jobs} runs side by side ({default.source})", flush=True)
    return default.jobs


def _print_full_mode_estimate(experiments: list, trials: int, runner: Any) -> None:
    """Before a --quick run: what the full run would take, so nobody starts it blind."""
    from app.runner import estimate_s, format_duration
    for exp in experiments:
        full = exp.matrix(quick=False, trials=trials)
        eta = estimate_s(full, runner.traces, runner.jobs)
        print(f"full mode: {exp.name}: {len(full)} runs, expected {format_duration(eta)} "
              f"with --jobs {runner.jobs}", flush=True)


def cmd_one(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.executor import execute
    from app.scheme_args import scheme_params
    from core.results import ExperimentStore
    _require_root()
    traces = _traces(args, paths)
    spec = RunSpec(experiment="one", scheme=args.scheme, data_trace=args.data_trace,
                   ack_trace=args.ack_trace, delay_ms=args.delay_ms, queue=args.queue,
                   duration_s=None if args.once else args.duration,
                   params=scheme_params(args, args.scheme),
                   options=make_params(directions="both" if args.both_directions else None,
                                       warmup_s=args.warmup_s, offset_s=args.offset_s))
    _validate_spec(spec, traces)
    store = ExperimentStore(Path(args.out) if args.out else paths.results_dir / "one")
    outcome = execute(spec, store, paths, traces)
    result: dict[str, Any] = {"ok": outcome.ok, "run_dir": str(outcome.path),
                              "scheme": spec.scheme}
    if outcome.ok:
        assert outcome.metrics is not None
        result.update(outcome.metrics)
    else:
        result["reason"] = outcome.reason
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for k, v in result.items():
            print(f"{k:24s} {v}")
    return EXIT_OK if outcome.ok else EXIT_FAILED


def _validate_spec(spec: RunSpec, traces: TraceSet) -> None:
    """Fail before building anything when the request cannot be run."""
    from app.validation import check_spec
    check_spec(spec)  # ranges, the scheme and its parameters, the queue
    from runkinds.registry import kind_of
    kind_of(spec).check(spec, traces)  # its traces or fixed rates, its span


def cmd_report(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.report import write_report
    from core.results import experiment_store
    from app.recorded_options import RecordError, as_recorded
    from experiments.registry import all_experiments
    experiments = all_experiments(_traces(args, paths))
    status = EXIT_OK
    for exp in experiments:
        store = experiment_store(paths.results_dir, exp.name)
        try:  # the plan its runs were made for, not this machine's choices
            exp = as_recorded(exp, store.root) if store.root.is_dir() else exp
        except RecordError as e:
            print(f"{exp.name}: figures not redrawn, the plan is unknown: {e}", flush=True)
            continue
        if not _refresh(store, exp):
            status = EXIT_FAILED  # some run's metrics could not be computed (listed above)
        for f in exp.make_figures(store, store.root):
            print(f"wrote {display(f)}")
    print(f"wrote {display(write_report(paths, experiments))}")
    return status


def _refresh(store: Any, exp: Any) -> bool:
    """Shared runs linked in, stale metrics recomputed from the logs, before the figures;
    False if some run's metrics could not be computed."""
    from app.refresh import refresh
    done = refresh(store, exp)
    for line in done.lines(exp.name):
        print(line, flush=True)
    return not done.failed


def cmd_verify(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.verify_command import run_verify
    return run_verify(args, paths, _traces(args, paths))


def cmd_pack(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.verify_command import run_pack
    return run_pack(args, paths, _traces(args, paths))


def cmd_bench(args: argparse.Namespace, paths: ProjectPaths) -> int:
    import importlib
    _require_root()
    module = importlib.import_module(f"bench.{args.what}")
    return module.main(paths, _traces(args, paths), args)


def cmd_contest(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.contest import main as contest_main
    return contest_main(args, paths, _traces(args, paths))


def cmd_execute(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """Internal: one run of a matrix, in a child process of `repro run`."""
    from app.executor import execute
    from core.results import experiment_store
    spec = RunSpec.from_dict(json.loads(args.spec_json))
    store = experiment_store(paths.results_dir, args.experiment)
    outcome = execute(spec, store, paths, _traces(args, paths))
    print(json.dumps({"ok": outcome.ok, "reason": outcome.reason, "path": str(outcome.path),
                      "lateness_ok": (outcome.metrics or {}).get("lateness_ok")}))
    return EXIT_OK if outcome.ok else EXIT_FAILED


def cmd_required_traces(args: argparse.Namespace, paths: ProjectPaths) -> int:
    """Internal: the trace names the experiments need, one per line (for setup)."""
    from app.doctor import required_traces
    for name in sorted(required_traces(_traces(args, paths))):
        print(name)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from app.contest_args import add_contest_parser
    from app.scheme_args import add_scheme_flags
    parser = argparse.ArgumentParser(prog="repro", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces-dir", default=os.environ.get("NETREPRO_TRACES"),
                        help="a directory holding the cellular traces (env NETREPRO_TRACES)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("doctor", help="check every prerequisite and say how to fix what is missing")
    sub.add_parser("list", help="list experiments, schemes and traces")
    sub.add_parser("clean", help="remove leftovers of our own killed runs (never anything else)")
    sub.add_parser("report", help="regenerate figures and results/index.html from artifacts")

    run = sub.add_parser("run", help="run an experiment's matrix (resumable)")
    run.add_argument("experiment", help="an experiment name from `repro list`, or `all`")
    run.add_argument("--quick", action="store_true", help="the short version of the matrix")
    run.add_argument("--jobs", type=JOBS.argtype(), default=None,
                     help="runs side by side (default: the experiment's measured safe level)")
    run.add_argument("--force", action="store_true", help="redo runs that are already done")
    run.add_argument("--redo-late", action="store_true",
                     help="redo finished runs whose emulator was late (p99 lateness > 2 ms)")
    run.add_argument("--trials", type=TRIALS.argtype(), default=1, help="repeats of every run")
    _add_experiment_options(run)
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="run on a Dask cluster: tcp://HOST:8786 (or tls://) of a scheduler "
                          "with `repro worker`s, or local:N worker processes here "
                          "(docs/cluster.md)")
    run.add_argument("--dashboard", metavar="HOST:PORT", default=None,
                     help="local:N only: serve the Dask dashboard there (default: off)")

    worker = sub.add_parser("worker", help="serve runs to a Dask scheduler (docs/cluster.md)")
    worker.add_argument("--scheduler", required=True, help="tcp://HOST:8786 or tls://HOST:8786")
    worker.add_argument("--jobs", type=JOBS.argtype(), default=None,
                        help="runs side by side (default: this machine's measured level)")
    worker.add_argument("--listen", default=None,
                        help="the address to listen on (default: the one facing the scheduler)")
    worker.add_argument("--name", default=None, help="the worker's name (default: its address)")

    one = sub.add_parser("one", help="one run, metrics printed")
    one.add_argument("--scheme", required=True)
    add_scheme_flags(one)  # --window, --confidence, --cc-impl...: from the scheme tables
    one.add_argument("--both-directions", action="store_true",
                     help="load both directions at once (the Sprout paper's mode)")
    one.add_argument("--warmup-s", type=float, help="seconds played but not scored")
    one.add_argument("--offset-s", type=float, help="start this far into the traces")
    one.add_argument("--data-trace", required=True,
                     help="trace name or path (data direction), or rate:<Mbit/s> for a fixed rate")
    one.add_argument("--ack-trace", required=True,
                     help="trace name or path (ack direction), or rate:<Mbit/s>")
    one.add_argument("--delay-ms", type=DELAY_MS.argtype(), default=20,
                     help="fixed delay each way (default 20)")
    one.add_argument("--queue", default="infinite",
                     help="infinite | droptail:packets=N | droptail:bytes=N | codel | "
                          "ecn:k=K,packets=N")
    span = one.add_mutually_exclusive_group(required=True)
    span.add_argument("--duration", type=DURATION.argtype(), help="seconds (the trace loops)")
    span.add_argument("--once", action="store_true", help="the whole data trace once")
    one.add_argument("--out", help="results folder (default results/one)")
    one.add_argument("--json", action="store_true", help="print one JSON object")

    bench = sub.add_parser("bench", help="benchmarks that print their figures (JSON last line)")
    bench.add_argument("what", choices=("link", "cc", "concurrency", "cluster"))
    bench.add_argument("--seconds", type=float, default=None, help="shorter/longer measurement")
    bench.add_argument("--variant", help="cc: the TCP variant to compare (e.g. vegas)")
    bench.add_argument("--max-jobs", type=_positive_int, default=None,
                       help="concurrency: the highest level to try (levels 2..N)")
    bench.add_argument("--levels", type=_levels, default=None,
                       help="concurrency: only these levels, e.g. 8,10,12 (those below the "
                            "lowest are taken to hold: contention only grows with the level)")

    add_contest_parser(sub)  # repro contest submit|board (app/contest_args.py)
    from app.verify_command import add_pack_parser, add_verify_parser
    add_verify_parser(sub)
    add_pack_parser(sub)

    sub.add_parser("_required-traces")
    ex = sub.add_parser("_execute")
    ex.add_argument("--experiment", required=True)
    ex.add_argument("--spec-json", required=True)
    return parser


# `run`'s namespace holds a given option as OPTION_DEST + its name (absent when not given).
OPTION_DEST = "option_"


def _add_experiment_options(run: argparse.ArgumentParser) -> None:
    """One flag per option an experiment declares (experiments/options.py)."""
    from experiments.registry import experiment_classes
    seen: dict[str, Any] = {}
    for cls in experiment_classes():
        for option in cls.options:
            if option.flag in seen:
                if seen[option.flag] != option:
                    raise ValueError(f"{option.flag} is declared twice, differently")
                continue
            seen[option.flag] = option
            users = [c.name for c in experiment_classes() if option in c.options]
            help_text = f"{option.help} ({option.accepted()}; default {option.default!r}; " \
                        f"{', '.join(users)})"
            if option.type is bool:
                run.add_argument(option.flag, dest=OPTION_DEST + option.name,
                                 action="store_true", default=argparse.SUPPRESS, help=help_text)
            else:
                run.add_argument(option.flag, dest=OPTION_DEST + option.name, type=option.argtype(),
                                 metavar=option.name.upper(),
                                 default=argparse.SUPPRESS, help=help_text)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def _levels(text: str) -> list[int]:
    try:
        levels = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected levels like 8,10,12: {text}") from None
    if not levels or levels[0] < 2:
        raise argparse.ArgumentTypeError(f"levels are 2 or more runs side by side: {text}")
    return levels


COMMANDS: dict[str, Callable[[argparse.Namespace, ProjectPaths], int]] = {
    "doctor": cmd_doctor, "list": cmd_list, "clean": cmd_clean, "run": cmd_run,
    "one": cmd_one, "report": cmd_report, "bench": cmd_bench, "_execute": cmd_execute,
    "_required-traces": cmd_required_traces, "contest": cmd_contest, "worker": cmd_worker,
}
COMMANDS.update(verify=cmd_verify, pack=cmd_pack)


def _interrupt_once(signum: int, frame: Any) -> None:
    """First SIGINT/SIGTERM raises KeyboardInterrupt; later ones are ignored so teardown
    finishes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    signal.signal(signal.SIGINT, _interrupt_once)
    signal.signal(signal.SIGTERM, _interrupt_once)
    paths = ProjectPaths()
    try:
        return COMMANDS[args.command](args, paths)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UsageError, Unavailable) as e:  # every refusal derives from one of these
        print(f"error: {e}", file=sys.stderr)
        return e.exit_status
