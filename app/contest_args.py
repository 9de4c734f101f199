"""The `repro contest` command line (light: the work is in app/contest.py)."""
from __future__ import annotations

from typing import Any

DEFAULT_TRIALS = 3
MAX_TRIALS = 20
# The training trace's name, for --help (experiments/contest/board.py holds the roles).
TRAINING = "Verizon-LTE-short"


def add_contest_parser(sub: Any) -> None:
    """The `contest` subcommand and its own subcommands."""
    contest = sub.add_parser("contest", help="the congestion-control contest: submit a "
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
    submit.add_argument("--trials", type=int, default=DEFAULT_TRIALS,
                        help=f"runs of the whole trace; ranked by the best (default "
                             f"{DEFAULT_TRIALS}, at most {MAX_TRIALS})")
    submit.add_argument("--force", action="store_true",
                        help="rerun trials already done for these exact sources")
    submit.add_argument("--json", action="store_true",
                        help="end with one JSON object (the best trial's metrics)")
    submit.add_argument("--cluster", metavar="ADDRESS",
                        help="run the trials on a Dask cluster (tcp://HOST:8786 or tls://, or "
                             "local:N), each built on its worker from the sources shipped with "
                             "it (docs/cluster.md)")
    actions.add_parser("board", help="redraw results/contest/leaderboard.html and its CSVs")
