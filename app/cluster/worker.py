"""The worker's side of a cluster: what it can serve, and one run executed there.

At start-up a worker reports what it can serve as Dask worker resources:
`runs` (its machine's --jobs: how many runs it holds side by side), its code
version, every known trace it holds verified (name and hash), and each
congestion control it can provide. A run asks for one `runs` and for each of
the others it needs, so the scheduler never gives it to a worker that would run
it on different code, traces or congestion controls. What else it offers, the
run kinds and scheme families say (`worker_offers`): a worker that can build
submitted code in boxes (a probe box is made at start-up) reports the submission
family's build resource, one with Open vSwitch running the switched path's switch
and each OpenFlow controller that can start there. A run that carries something
beside its spec (a submission's sources and hash) has it made ready there first,
by its scheme family (schemes/registry.py `prepare_on_worker`).

A run executes as it does locally, in a `repro _execute` child process, but into
a folder of its own attempt (var/cluster/attempts/<worker pid>-<random>/): a
killed attempt's partial artifacts stay there and are never read as a result;
the next attempt starts in a new folder. The finished folder goes home as an
archive with its hash (app/cluster/archive.py); the attempt's folder is then removed.
The child dies with its worker (PR_SET_PDEATHSIG, SIGINT: it tears its network
down), and stops when the client sets the session's stop event or releases the
run.
"""
from __future__ import annotations

import ctypes
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.cluster.archive import RunArchive, pack
from runkinds.registry import measurement_version
from core.paths import ProjectPaths
from core.processes import pid_alive
from core.results import FAILED
from core.runspec import RunSpec
from core.traces import TraceError, TraceSet
from core.worker_resources import CC, CODE, RUNS, TRACE, file_sha256, trace_resource

log = logging.getLogger(__name__)

STOP_EVENT = "netrepro-stop-"  # + the client's session id: set on Ctrl-C
STARTED_TOPIC = "netrepro-run-started"  # worker events: one per attempt started
CHILD_EXIT_GRACE_S = 30.0
POLL_S = 0.5
PR_SET_PDEATHSIG = 1


def capabilities(paths: ProjectPaths, traces: TraceSet, jobs: int) -> dict[str, float]:
    """This machine's report, as Dask worker resources (each token as many as `runs`, so
    only `runs` limits how many run side by side)."""
    tokens = [CODE + measurement_version()]
    for name in traces.known_traces():
        try:
            traces.resolve(name)  # found and verified by its hash
        except TraceError:
            continue
        tokens.append(trace_resource(name, traces.manifest[name].git_blob_sha1))
    from kernel.congestion_control import CongestionControlResolver
    from schemes.registry import TCP_VARIANTS
    for variant, provider in CongestionControlResolver.for_project(paths) \
            .available_variants(TCP_VARIANTS).items():
        if provider is not None:
            tokens.append(CC + variant)
            tokens.append(f"{CC}{variant}:{'ebpf' if provider == 'ebpf' else 'kernel'}")
    from schemes.registry import worker_offers
    tokens += worker_offers(paths)
    from runkinds.registry import KINDS
    for kind in KINDS.values():
        tokens += kind.worker_offers(paths)
    resources: dict[str, float] = {RUNS: float(jobs)}
    resources.update({t: float(jobs) for t in tokens})
    return resources


def worker_facts() -> dict[str, Any]:
    """Who ran a run, for its meta.json."""
    facts: dict[str, Any] = {"host": socket.gethostname(), "cpus": os.cpu_count() or 1,
                             "kernel": platform.release(), "pid": os.getpid()}
    try:
        from distributed import get_worker
        worker = get_worker()
        facts.update(address=worker.address, name=str(worker.name),
                     jobs=worker.state.total_resources.get(RUNS))
    except (ImportError, ValueError):
        pass
    return facts


@dataclass(frozen=True)
class RemoteTask:
    experiment: str
    spec: dict[str, Any]
    run_id: str  # the client's: the same spec and the same code give the same id here
    session: str
    # Traces not in the manifest (a path, or a name found in a trace directory) -> the
    # sha256 of the content the client has; the worker resolves each and compares.
    trace_files: dict[str, str] = field(default_factory=dict)
    # What the run's scheme needs shipped with it (a submission's sources and hash), made
    # ready on the worker by its scheme family first (schemes/registry.prepare_on_worker).
    attachment: Any = None


@dataclass(frozen=True)
class RemoteResult:
    ok: bool
    reason: str
    late: bool
    archive: RunArchive | None
    worker: dict[str, Any]
    wall_s: float = 0.0
    build_log: str = ""  # what preparing the attachment printed (a build's commands)


def attempts_dir(paths: ProjectPaths) -> Path:
    return paths.state_dir / "cluster" / "attempts"


def clean_dead_attempts(paths: ProjectPaths) -> list[Path]:
    """Remove the attempt folders of workers that died (their partial runs are no result)."""
    removed = []
    base = attempts_dir(paths)
    if base.is_dir():
        for entry in base.iterdir():
            owner = entry.name.split("-", 1)[0]
            if owner.isdigit() and not pid_alive(int(owner)):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    return removed


def execute_remote(task: RemoteTask) -> RemoteResult:
    """Run one spec on this worker; its folder comes back as an archive."""
    started = time.time()
    facts = worker_facts()
    paths = ProjectPaths()
    mine = RunSpec.from_dict(task.spec).run_id()
    if task.run_id != mine:
        return RemoteResult(False, f"the run's code on this worker gives run {mine}, the "
                            f"client's gives {task.run_id} (another version of the code it "
                            "executes): not run", False, None, facts)
    if task.trace_files:  # looked up as the run process will (NETREPRO_TRACES first)
        try:
            traces = TraceSet.for_project(paths.root)
        except TraceError as e:
            return RemoteResult(False, f"worker {facts['host']} cannot look traces up: {e}",
                                False, None, facts)
    for trace, sha in task.trace_files.items():
        try:
            mine = file_sha256(traces.resolve(trace))
        except (TraceError, OSError) as e:
            return RemoteResult(False, f"trace {trace} is not usable on worker "
                                f"{facts['host']} ({e}): not run", False, None, facts)
        if mine != sha:
            return RemoteResult(False, f"trace {trace} on worker {facts['host']} differs from "
                                "the client's (sha256): not run", False, None, facts)
    stop = _StopWatch(task.session)
    if stop.requested():
        return RemoteResult(False, "not started: interrupted", False, None, facts)
    _log_start(task, facts)  # an attempt, from here (a worker dying in the build counts)
    build_log = ""
    if task.attachment is not None:
        from schemes.registry import prepare_on_worker
        built = prepare_on_worker(RunSpec.from_dict(task.spec), task.attachment, paths,
                                  host=facts["host"])
        facts["build"] = built.facts
        build_log = built.log
        if not built.ok:
            return RemoteResult(False, built.reason, False, None, facts, time.time() - started,
                                build_log)
    attempt = attempts_dir(paths) / f"{os.getpid()}-{uuid.uuid4().hex[:10]}"
    results = attempt / "results"
    results.mkdir(parents=True)
    try:
        ok, reason, late, folder = _run_child(task, paths, results, stop)
        archive = pack(folder) if folder is not None and folder.is_dir() else None
        return RemoteResult(ok, reason, late, archive, facts, time.time() - started, build_log)
    finally:
        shutil.rmtree(attempt, ignore_errors=True)


def _run_child(task: RemoteTask, paths: ProjectPaths, results: Path,
               stop: "_StopWatch") -> tuple[bool, str, bool, Path | None]:
    args = [sys.executable, str(paths.root / "repro"), "_execute",
            "--experiment", task.experiment, "--spec-json", json.dumps(task.spec)]
    env = dict(os.environ, NETREPRO_RESULTS=str(results))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=_die_with_parent)
    out: dict[str, str] = {}
    reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"),
                                                            proc.communicate())))
    reader.start()
    interrupted = False
    while reader.is_alive():
        reader.join(POLL_S)
        if reader.is_alive() and not interrupted and stop.requested():
            interrupted = True
            proc.send_signal(signal.SIGINT)  # the child tears its network down
            deadline = time.monotonic() + CHILD_EXIT_GRACE_S
            while reader.is_alive() and time.monotonic() < deadline:
                reader.join(POLL_S)
            if proc.poll() is None:
                proc.kill()
    reader.join()
    lines = [line for line in out.get("stdout", "").splitlines() if line.startswith("{")]
    if not lines:
        tail = " | ".join(out.get("stderr", "").strip().splitlines()[-3:])
        reason = ("interrupted by the user (Ctrl-C)" if interrupted else
                  f"run process exited with status {proc.returncode}: {tail}")
        return False, reason, False, _failed_folder(results, task.experiment)
    outcome = json.loads(lines[-1])
    folder = Path(outcome["path"]).resolve() if outcome.get("path") else None
    if outcome["ok"]:
        return True, outcome.get("reason", ""), outcome.get("lateness_ok") is False, folder
    return False, outcome.get("reason", ""), False, folder


def _failed_folder(results: Path, experiment: str) -> Path | None:
    failed = sorted((results / experiment / "failed").glob(f"*/{FAILED}"))
    return failed[-1].parent if failed else None


_LIBC = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    """In the child, before exec: SIGINT when the worker thread that started it dies."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGINT, 0, 0, 0)


class _StopWatch:
    """Whether the client asked this run to stop: its session's event, or the run released
    (the client went away)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self._event: Any = None
        self._key: str | None = None
        self._next = 0.0
        self._stopped = False
        try:
            from distributed import Event, get_client
            from distributed.worker import thread_state
            self._key = getattr(thread_state, "key", None)
            self._event = Event(STOP_EVENT + session, client=get_client())
        except (ImportError, ValueError):
            pass

    def requested(self) -> bool:
        if self._stopped or self._event is None:
            return self._stopped
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + 1.0
        try:
            self._stopped = bool(self._event.is_set()) or self._released()
        except Exception as e:  # the scheduler is gone: the worker closes, and so does the run
            log.warning("cannot reach the scheduler to ask about stopping: %s", e)
        return self._stopped

    def _released(self) -> bool:
        if self._key is None:  # not running as a Dask task: only the event can stop it
            return False
        from distributed import get_worker
        ts = get_worker().state.tasks.get(self._key)
        return ts is None or ts.state in ("cancelled", "released", "forgotten")


def _log_start(task: RemoteTask, facts: dict[str, Any]) -> None:
    try:
        from distributed import get_worker
        get_worker().log_event(STARTED_TOPIC, {"key": _current_key(), **facts})
    except (ImportError, ValueError):
        pass


def _current_key() -> str:
    from distributed.worker import thread_state
    return str(getattr(thread_state, "key", ""))


def ignore_interrupts() -> None:
    """Worker processes leave Ctrl-C to their client (which stops runs through the stop
    event) and to the runs themselves, which tear down on it."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def dask_setup(worker: Any) -> None:
    """Dask preload hook (`preload=["app.cluster.worker"]`): runs in each worker process."""
    ignore_interrupts()
    clean_dead_attempts(ProjectPaths())


def loopback_nanny() -> Any:
    """Dask's Nanny, but its worker's HTTP server (health, metrics; no dashboard) listens on
    the worker's own address instead of on every interface, as it does by default."""
    from distributed import Nanny

    class OwnAddressNanny(Nanny):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            if not kwargs.get("dashboard"):
                kwargs["dashboard"] = False
                kwargs["dashboard_address"] = f"{kwargs.get('host') or '127.0.0.1'}:0"
            super().__init__(*args, **kwargs)

    return OwnAddressNanny


def serve_worker(scheduler: str, paths: ProjectPaths, traces: TraceSet, jobs: int,
                 listen: str | None = None, name: str | None = None,
                 out: Any = sys.stdout) -> int:
    """`repro worker`: join the scheduler with this machine's report until interrupted.

    A nanny watches the worker process and restarts it if it dies (its runs in flight
    go to other workers: the scheduler's allowed-failures)."""
    import asyncio
    try:
        import distributed  # noqa: F401  (only: is it installed?)
    except ImportError:
        print("error: `repro worker` needs Dask distributed: apt-get install "
              "python3-distributed (./setup/install.sh installs it)", file=sys.stderr)
        return 3
    if listen is None:  # the address facing the scheduler, not every interface
        from distributed.comm import get_address_host
        from distributed.utils import get_ip
        listen = get_ip(get_address_host(scheduler))
    for removed in clean_dead_attempts(paths):
        print(f"removed the attempt folder of a dead worker: {removed}", file=out)
    resources = capabilities(paths, traces, jobs)
    trace_count = sum(k.startswith(TRACE) for k in resources)
    ccs = sorted(k[len(CC):] for k in resources if k.startswith(CC) and ":" not in k[len(CC):])
    # What the run kinds and scheme families offer beyond those (a switch, a controller,
    # boxed builds): `./repro doctor` there says why something is missing.
    extras = sorted(k for k in resources if not k.startswith((RUNS, CODE, TRACE, CC)))
    print(f"worker: {socket.gethostname()}, {jobs} runs side by side; code version "
          f"{measurement_version()}; {trace_count} traces verified; congestion controls "
          f"{', '.join(ccs) or 'none'}; also offers: {', '.join(extras) or 'nothing else'} "
          f"(./repro doctor says why something is missing); joining {scheduler}, listening "
          f"on {listen}", file=out, flush=True)

    async def serve() -> None:
        async with loopback_nanny()(scheduler, nthreads=jobs, resources=resources,
                                    host=listen, name=name, preload=["app.cluster.worker"],
                                    local_directory=str(paths.state_dir / "cluster")) as nanny:
            await nanny.finished()

    (paths.state_dir / "cluster").mkdir(parents=True, exist_ok=True)
    asyncio.run(serve())
    return 0
