"""The `submission` scheme: a built submission's sender, in a box of its own, against our
grump-receiver."""
from __future__ import annotations

import json
import os
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.checks import INSTALL, Check
from core.endpoints import Endpoints
from core.errors import RunInvalid
from core.paths import ProjectPaths
from core.settings import Setting
from schemes.base import SchemeUnavailable, StillRunning
from schemes.grump import PORT, GrumpScheme
from schemes.submission.box import RO, WORK, Bind, Box, BoxedProcess, exit_status
from schemes.submission.box_egress import limit_egress
from schemes.submission.build import BINARY, binary_path, hold_build
from schemes.submission.limits import Limits, run_limits, signal_name
from schemes.submission.untrusted_text import reason
from schemes.table import SchemeEntry

if TYPE_CHECKING:
    from core.runspec import RunSpec

WINDOW_CAP = 10000  # student_adapter.cc's kWindowCap
# The exit status grump-sender gives when no ACK arrived during the whole run.
NO_ACKS_STATUS = 3


class SubmissionScheme(GrumpScheme):
    """A built submission's sender, in a box of its own, against our grump-receiver."""

    STATS_MAX_BYTES = 1 << 20

    def __init__(self, digest: str, paths: ProjectPaths) -> None:
        super().__init__("student", paths)
        self.name = "submission"
        self.digest = digest
        binary = binary_path(paths, digest)
        if not binary.is_file():
            raise SchemeUnavailable(f"submission {digest} is not built ({binary}): submit it "
                                    "with ./repro contest submit")
        self.sender_bin = binary
        self.paths = paths
        self.box: Box | None = None
        self.box_facts: dict[str, Any] = {}
        self.limits: Limits | None = None
        self._out_dir: Path | None = None
        self._stats_problem = "the sender wrote no statistics"

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        """The sender's box, made before the network and the trace's clock start (so its
        making is not inside the run's span); its facts, completed when it is closed, go
        into the run's meta.json."""
        # The build is not pruned while its trial runs (build.py hold_build).
        in_use = hold_build(self.paths, self.digest)
        stack.callback(os.close, in_use)
        self.box = Box.open("run", run_limits(0), self.box_facts)
        stack.callback(self._close_box)
        return {"box": self.box_facts}

    def _close_box(self) -> None:
        if self.box is not None:
            self.box.close()
            self.box = None
            if isinstance(self.sender, BoxedProcess):
                # The box's processes are gone: its output pipes end, the files are complete.
                self.box_facts["output_not_ended"] = self.sender.finish_outputs()

    def start_receiver(self, ends: Endpoints) -> None:
        """Also what the box may send (box_egress.py): set on the sender's host here, before
        the trace's clock starts and before anything of the box runs."""
        self.box_facts["egress"] = limit_egress(ends.sender)
        super().start_receiver(ends)

    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]:
        """As the box sees them: the binary under /box, the statistics in /work."""
        return [f"{RO}/{BINARY}", "--host", ends.receiver_ip, "--port", str(PORT),
                "--controller", "student", "--duration-s", f"{duration_s:g}",
                "--stats", f"{WORK}/{self.sender_label}.json"]

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        if self.box is None:
            raise RuntimeError("the sender's box was not made (prepare() makes it)")
        self.limits = run_limits(duration_s)
        self.box_facts["limits"] = self.limits.describe()
        self._out_dir = ends.out_dir
        self.sender = BoxedProcess(
            self.box, ends.sender, self.sender_args(ends, duration_s), self.limits,
            [Bind(self.sender_bin, f"{RO}/{BINARY}")], ends.out_dir, self.sender_label,
            ends.on_process)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.sender is not None
        try:
            code = self.sender.wait(timeout_s)
        except StillRunning:
            raise
        if code == 0:
            return
        why = signal_name(code)
        # The tail is the submission's own text: escaped and cut (untrusted_text.py).
        tail = self.sender.stderr_tail()
        if why is not None:
            limit = {"SIGXCPU": " (its CPU-time limit)", "SIGXFSZ": " (its file-size limit)",
                     "SIGKILL": " (killed: a limit, or stopped)"}.get(why, "")
            raise RuntimeError(reason(f"the controller crashed: the sender was killed by {why}"
                                      f"{limit}; its last output: {tail}"))
        if code == NO_ACKS_STATUS:
            raise RuntimeError(reason(f"the controller never got an ACK: it sent nothing the "
                                      f"link delivered during the whole run; its last output: "
                                      f"{tail}"))
        raise RuntimeError(reason(f"the sender exited with status {code}: {tail}"))

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.sender is not None
        stats = ends.out_dir / f"{self.sender_label}.json"
        try:
            complete = isinstance(json.loads(stats.read_text()), dict)
        except (OSError, ValueError):
            complete = False  # missing, or left empty (the sender creates it at start)
        if not complete:
            code = exit_status(self.sender.proc.returncode)
            if code is not None and code < 0:
                raise RunInvalid(f"the controller did not finish: the sender was still running "
                                 f"at the end of the trace and was stopped ({signal_name(code)}) "
                                 "before writing its statistics; a callback that never returns?")
            raise RunInvalid(self._stats_problem if not stats.exists() else
                             "the sender's statistics are incomplete (not one JSON object)")
        facts = super().verify(ends)
        params = facts["sender"].get("parameters", {})
        facts["window_capped"] = bool(params.get("windows_above_cap"))
        facts["limits"] = self.limits.describe() if self.limits else None
        facts["box_user"] = self.box_facts.get("user")
        return facts

    def stop(self) -> None:
        """Stop both programs; bring the sender's statistics out of its box; close the box
        (what outlived the sender is killed and recorded)."""
        super().stop()
        if self.box is None:
            return
        try:
            stats = self.box.read_file(f"{self.sender_label}.json", self.STATS_MAX_BYTES)
        except ValueError:
            self._stats_problem = "the sender's statistics file is over 1 MiB"
            stats = None
        if stats is not None and self._out_dir is not None:
            (self._out_dir / f"{self.sender_label}.json").write_bytes(stats)
        self._close_box()

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "submission", "submission": self.digest,
                "binary": str(self.sender_bin), "boxed": True}


# A cluster worker that builds and runs submissions in boxes offers this (schemes/submission/
# box_check.py probes it); a submission's run asks for it.
BUILDS = "contest-build"


def prepare_on_worker(spec: "RunSpec", attachment: Any, paths: ProjectPaths,
                      host: str | None = None) -> Any:
    """A trial's shipped sources built on the worker that runs it (shipped.py)."""
    from schemes.submission.shipped import ShippedSubmission, WorkerBuild, build_on_worker
    if not isinstance(attachment, ShippedSubmission):
        return WorkerBuild(False, f"a submission's trial carries its sources, not "
                           f"{type(attachment).__name__}: not built", "")
    return build_on_worker(attachment, spec, paths, host=host)


def worker_offers(paths: ProjectPaths) -> list[str]:
    """A cluster worker that can build and run submissions in boxes offers their builds (a
    probe box is made to see)."""
    from schemes.submission.box_check import cannot_build
    return [BUILDS] if cannot_build(paths) is None else []


def explain_need(resource: str) -> str | None:
    """What a worker lacking this family's resource lacks, and the fix."""
    if resource == BUILDS:
        return ("contest builds in boxes (bubblewrap, the box users and our native "
                "libraries: ./setup/install.sh there, then restart its `repro worker`)")
    return None


def doctor_checks(paths: ProjectPaths) -> list[Check]:
    """Submitted code is built and run in boxes: one is made and probed."""
    from schemes.submission.box_check import box_probe
    probe = box_probe(paths)
    return [Check("contest box", probe.ok, probe.detail, INSTALL, required=False)]


def _build(entry: SchemeEntry, spec: "RunSpec", paths: ProjectPaths) -> SubmissionScheme:
    return SubmissionScheme(str(entry.value(spec, "submission")), paths)


TABLE: tuple[SchemeEntry, ...] = (
    SchemeEntry("submission", "submission", "a controller submitted with ./repro contest submit",
                _build, params=(Setting("submission", str, "the submitted sources' hash",
                                        required=True),),
                label="submission", colour="black", marker="x", listed=False,
                needs=lambda spec: {BUILDS: 1.0}),
)
