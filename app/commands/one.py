"""`repro one`: one run, its metrics printed (text, or one JSON object)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from app.commands.scheme_flags import add_scheme_flags, scheme_params
from app.commands.shared import require_root, traces_of
from app.validation import DELAY_MS, DURATION
from core.errors import EXIT_FAILED, EXIT_OK
from core.paths import ProjectPaths
from core.runspec import RunSpec, make_params
from core.settings import Setting, for_argparse
from kernel import socket_samples
from topologies import link_conditions

SOCKET_SAMPLE_MS = Setting(socket_samples.OPTION, int, "sample the TCP sender's sockets (tcp_info, "
                           "BBR's state) every N ms into socket-samples.csv",
                           minimum=socket_samples.MIN_INTERVAL_MS,
                           maximum=socket_samples.MAX_INTERVAL_MS)

NAME = "one"


def add_parser(sub: Any) -> None:
    one = sub.add_parser(NAME, help="one run, metrics printed")
    one.add_argument("--scheme", required=True)
    add_scheme_flags(one)  # --window, --confidence, --cc-impl...: from the scheme tables
    one.add_argument("--both-directions", action="store_true",
                     help="load both directions at once (data one way and the other)")
    one.add_argument("--warmup-s", type=float, help="seconds played but not scored")
    one.add_argument("--offset-s", type=float, help="start this far into the traces")
    one.add_argument("--data-trace", required=True,
                     help="trace name or path (data direction), or rate:<Mbit/s> for a fixed rate")
    one.add_argument("--ack-trace", required=True,
                     help="trace name or path (ack direction), or rate:<Mbit/s>")
    one.add_argument("--delay-ms", type=DELAY_MS.argtype(), default=20,
                     help="fixed delay each way (default 20)")
    one.add_argument("--queue", default="infinite",
                     help="infinite | droptail:packets=N | droptail:bytes=N | "
                          "codel[:target=MS,interval=MS] | ecn:k=K,packets=N")
    for setting in (*link_conditions.SETTINGS, SOCKET_SAMPLE_MS):
        one.add_argument(setting.flag, dest=setting.name, type=setting.argtype(),
                         help=for_argparse(f"{setting.help} ({setting.accepted()})"))
    span = one.add_mutually_exclusive_group(required=True)
    span.add_argument("--duration", type=DURATION.argtype(), help="seconds (the trace loops)")
    span.add_argument("--once", action="store_true", help="the whole data trace once")
    one.add_argument("--out", help="results folder (default results/one)")
    one.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace, paths: ProjectPaths) -> int:
    from app.executor import execute
    from app.validation import check_spec
    from core.results import ExperimentStore
    from runkinds.registry import kind_of
    require_root()
    traces = traces_of(args, paths)
    spec = RunSpec(experiment="one", scheme=args.scheme, data_trace=args.data_trace,
                   ack_trace=args.ack_trace, delay_ms=args.delay_ms, queue=args.queue,
                   duration_s=None if args.once else args.duration,
                   params=scheme_params(args, args.scheme),
                   options=make_params(directions="both" if args.both_directions else None,
                                       warmup_s=args.warmup_s, offset_s=args.offset_s,
                                       **{s.name: getattr(args, s.name) for s in
                                          (*link_conditions.SETTINGS, SOCKET_SAMPLE_MS)}))
    # Refused before anything is built: ranges, the scheme and its parameters, the queue,
    # the traces or fixed rates and the span.
    check_spec(spec)
    kind_of(spec).check(spec, traces)
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
