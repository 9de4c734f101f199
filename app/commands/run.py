"""`repro run`: an experiment's matrix (or every experiment's), resumable, then its figures,
its claims and results/index.html."""
from __future__ import annotations

import argparse
from typing import Any

from app.commands.shared import jobs_of, refresh_figures_input, require_root, traces_of
from app.validation import JOBS, TRIALS
from core.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError
from core.paths import ProjectPaths, display
from core.settings import SettingError, for_argparse
from core.traces import TraceSet

NAME = "run"
# The namespace holds a given experiment option as OPTION_DEST + its name (absent when not
# given).
OPTION_DEST = "option_"


def add_parser(sub: Any) -> None:
    # Its own --help: with an experiment named, the help shows that experiment's options too
    # (they are parsed once the experiment is known: `complete`).
    run = sub.add_parser(NAME, help="run an experiment's matrix (resumable)", add_help=False,
                         usage="repro run EXPERIMENT [options] [EXPERIMENT's own options]")
    run.add_argument("experiment", nargs="?",
                     help="an experiment name from `repro list`, or `all`")
    add_run_options(run)


def add_run_options(run: argparse.ArgumentParser) -> None:
    """The options every experiment's run takes."""
    run.add_argument("-h", "--help", action="store_true",
                     help="show this help and exit (after an experiment's name: with its own "
                          "options)")
    run.add_argument("--quick", action="store_true", help="the short version of the matrix")
    run.add_argument("--jobs", type=JOBS.argtype(), default=None,
                     help="runs side by side (default: the experiment's measured safe level)")
    run.add_argument("--force", action="store_true", help="redo runs that are already done")
    run.add_argument("--redo-late", action="store_true",
                     help="redo finished runs whose emulator was late (p99 lateness > 2 ms, or "
                          "under 95%% of departure gaps within 10%% of schedule)")
    run.add_argument("--redo-invalid", action="store_true",
                     help="redo finished runs the experiment leaves out as invalid (a busy "
                          "machine, window-limited flows: verify lists each with its reason)")
    run.add_argument("--trials", type=TRIALS.argtype(), default=1, help="repeats of every run")
    run.add_argument("--dry-run", action="store_true",
                     help="print the plan and stop: how many runs are done, how many would "
                          "run, and why each would (a new spec, or which files of its code "
                          "changed); needs no root and changes nothing")
    run.add_argument("--cluster", metavar="ADDRESS", type=cluster_address,
                     help="run on a Dask cluster: tcp://HOST:8786 (or tls://) of a scheduler "
                          "with `repro worker`s, or local:N worker processes here "
                          "(docs/cluster.md)")
    run.add_argument("--dashboard", metavar="HOST:PORT", default=None,
                     help="local:N only: serve the Dask dashboard there (default: off)")


def cluster_address(text: str) -> str:
    """--cluster's value, checked before anything starts (a refusal is argparse's, exit 2)."""
    from app.cluster.backend import parse_cluster
    try:
        parse_cluster(text)
    except SettingError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def complete(args: argparse.Namespace, rest: list[str], parser_class: type) -> None:
    """Parse what the command line gave beyond the common options: the named experiment's
    own options (each experiment declares them: experiments/options.py). `--help` prints
    the experiment's help and exits; an option it does not take is refused naming it."""
    from experiments.registry import experiment_classes, get_class
    name = args.experiment
    if args.help:
        print(help_text(name, parser_class))
        raise SystemExit(EXIT_OK)
    if name is None:
        raise UsageError("run: the following arguments are required: experiment (an "
                         "experiment name from `repro list`, or `all`)")
    classes = list(experiment_classes()) if name == "all" else [get_class(name)]
    options = experiment_parser(name, classes, parser_class)
    given, unknown = options.parse_known_args(rest)
    if unknown:
        flag = unknown[0].split("=", 1)[0]
        takes = ", ".join(o.flag for c in classes for o in c.options) or "no options"
        if any(o.flag == flag for c in experiment_classes() for o in c.options):
            raise UsageError(f"{name} does not take {flag}; it takes {takes} (see: repro run "
                             f"{name} --help)")
        raise UsageError(f"run {name}: unrecognized arguments: {' '.join(unknown)} (see: "
                         f"repro run {name} --help)")
    for key, value in vars(given).items():
        setattr(args, key, value)


def experiment_parser(name: str, classes: list[Any],
                      parser_class: type) -> argparse.ArgumentParser:
    """One flag per option the experiments declare (for `all`: every experiment's, each
    flag once, saying which experiments take it)."""
    parser = parser_class(prog=f"repro run {name}", add_help=False)
    group = parser.add_argument_group(f"{name}'s own options" if len(classes) == 1 else
                                      "the experiments' own options")
    seen: dict[str, Any] = {}
    for cls in classes:
        for option in cls.options:
            if option.flag in seen:
                if seen[option.flag] != option:
                    raise ValueError(f"{option.flag} is declared twice, differently")
                continue
            seen[option.flag] = option
            users = [c.name for c in classes if option in c.options]
            whose = f"; {', '.join(users)}" if len(classes) > 1 else ""
            help_text = for_argparse(
                f"{option.help} ({option.accepted()}; default {option.default!r}{whose})")
            if option.type is bool:
                group.add_argument(option.flag, dest=OPTION_DEST + option.name,
                                   action="store_true", default=argparse.SUPPRESS,
                                   help=help_text)
            else:
                group.add_argument(option.flag, dest=OPTION_DEST + option.name,
                                   type=option.argtype(), metavar=option.name.upper(),
                                   default=argparse.SUPPRESS, help=help_text)
    return parser


def help_text(name: str | None, parser_class: type) -> str:
    """`repro run --help`, or `repro run EXPERIMENT --help` with that experiment's options."""
    from experiments.registry import experiment_classes, get_class
    if name is None or name == "all":
        listing = "\n".join(f"  {c.name:<20} {c.title}" for c in experiment_classes())
        parser = parser_class(
            prog="repro run", add_help=False, formatter_class=argparse.RawDescriptionHelpFormatter,
            usage="repro run EXPERIMENT [options] [EXPERIMENT's own options]",
            description="Runs an experiment's matrix (resumable), then its figures, its claims "
                        "and results/index.html.\n`repro run EXPERIMENT --help` shows the "
                        f"experiment's own options.\n\nexperiments:\n{listing}")
        parser.add_argument("experiment", help="an experiment above, or `all`")
        add_run_options(parser.add_argument_group("run options"))
        return parser.format_help()
    cls = get_class(name)
    parser = experiment_parser(name, [cls], parser_class)
    parser.usage = f"repro run {name} [options] [{name}'s own options]"
    parser.description = f"{cls.title}."
    add_run_options(parser.add_argument_group("run options"))
    return parser.format_help()


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.publish.report import write_report
    from app.recorded_options import pinned, record_plans
    from app.runner import MatrixRunner, print_summary
    from core.results import experiment_store
    from experiments.registry import all_experiments
    traces = traces_of(args, paths)
    if args.dry_run:
        return dry_run(args, paths, traces)
    require_root()
    # Every choice the machine makes (--controller auto...) decided once, planned from,
    # recorded.
    experiments = [pinned(exp) for exp in chosen_experiments(args, traces)]
    plan = [(exp, exp.matrix(quick=args.quick, trials=args.trials)) for exp in experiments]
    jobs = jobs_of(args, paths)
    backend = _cluster(args, paths, traces, jobs)  # None without --cluster
    runner = MatrixRunner(paths, traces, jobs=backend.slots if backend else jobs,
                          force=args.force, redo_late=args.redo_late, backend=backend,
                          redo_invalid=args.redo_invalid)
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
        if not refresh_figures_input(store, exp):
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


def dry_run(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet) -> int:
    """The plan, and why each run that is not done would run; nothing is run or written."""
    from app.recorded_options import pinned
    from app.run_reasons import describe, finished_by_spec, invalid_finder, plan_reasons
    from core.results import experiment_store
    from experiments.registry import experiment_classes
    experiments = [pinned(exp) for exp in chosen_experiments(args, traces)]
    stores = [experiment_store(paths.results_dir, cls.name) for cls in experiment_classes()]
    earlier = finished_by_spec(stores)
    for exp in experiments:
        store = experiment_store(paths.results_dir, exp.name)
        invalid = invalid_finder(exp.invalid_reason, store) if args.redo_invalid else None
        planned = plan_reasons(exp.matrix(quick=args.quick, trials=args.trials), store,
                               earlier, force=args.force, redo_late=args.redo_late,
                               invalid=invalid)
        for line in describe(exp.name, planned):
            print(line)
    return EXIT_OK


def chosen_experiments(args: argparse.Namespace, traces: TraceSet) -> list[Any]:
    """The experiments asked for, each given the options it declares (refused if it takes
    none)."""
    from experiments.registry import all_experiments, get_experiment
    given = {name[len(OPTION_DEST):]: value for name, value in vars(args).items()
             if name.startswith(OPTION_DEST)}
    if args.experiment != "all":
        return [get_experiment(args.experiment, traces, given)]
    experiments = all_experiments(traces)
    return [type(exp)(traces, {k: v for k, v in given.items()
                               if k in {o.name for o in exp.options}}) for exp in experiments]


def _cluster(args: argparse.Namespace, paths: ProjectPaths, traces: TraceSet,
             jobs: int) -> Any:
    """`--cluster`: the runs go to Dask workers (app/cluster/backend.py)."""
    if not getattr(args, "cluster", None):
        return None
    from app.cluster.backend import open_cluster  # its ClusterUnavailable is exit 3
    return open_cluster(args.cluster, paths, traces, jobs, jobs_given=args.jobs is not None,
                        dashboard=args.dashboard)


def _print_full_mode_estimate(experiments: list, trials: int, runner: Any) -> None:
    """Before a --quick run: what the full run would take, so nobody starts it blind."""
    from app.runner import estimate_s, format_duration
    for exp in experiments:
        full = exp.matrix(quick=False, trials=trials)
        eta = estimate_s(full, runner.traces, runner.jobs)
        print(f"full mode: {exp.name}: {len(full)} runs, expected {format_duration(eta)} "
              f"with --jobs {runner.jobs}", flush=True)
