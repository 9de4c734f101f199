"""TCP over an active queue in the emulator: Cubic-over-CoDel, as the Sprout paper ran it
("We added the CoDel AQM algorithm to Cellsim's uplink and downlink queue").

The scheme is the TCP variant; the queue belongs to the link, so the run's spec names it
(`queue`, used in both directions). A run whose spec asks for another queue, or whose link
emulator has no such queue, fails naming it: it never runs as plain TCP over a FIFO.
"""
from __future__ import annotations

import logging
import subprocess
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.paths import ProjectPaths
from core.run_span import both_directions
from core.runspec import RunSpec
from schemes.base import SchemeUnavailable
from kernel.congestion_control import CongestionControlResolver
from schemes.table import SchemeEntry
from schemes.tcp import CC_IMPL, TcpScheme
from kernel.tcp_probe_recorder import TcpProbeSetup

log = logging.getLogger(__name__)

# The native programs this module starts (the emulator, for its AQM): hashed into the
# id of every run that imports it (core/code_identity.py).
NATIVE = ("link",)


@dataclass(frozen=True)
class AqmScheme:
    cc: str     # the TCP variant
    queue: str  # the queue kind the link must use in both directions
    description: str


AQM_SCHEMES = {
    "cubic-codel": AqmScheme("cubic", "codel", "Linux TCP cubic over a CoDel queue in the "
                             "link emulator, both directions (target 5 ms, interval 100 ms)"),
}


def emulator_queue_kinds_text(emulator: Path) -> str:
    """The emulator's own usage text (it lists the queue kinds it offers)."""
    try:
        proc = subprocess.run([str(emulator), "--help"], capture_output=True, text=True,
                              timeout=10)
    except OSError as e:
        raise SchemeUnavailable(f"cannot run the link emulator {emulator}: {e}; build it "
                                "(./setup/install.sh)") from e
    return proc.stdout + proc.stderr


class AqmTcpScheme(TcpScheme):
    def __init__(self, aqm: AqmScheme, name: str, spec: RunSpec, paths: ProjectPaths,
                 resolver: CongestionControlResolver, probe: TcpProbeSetup | None = None
                 ) -> None:
        super().__init__(aqm.cc, resolver, impl=spec.param("cc_impl", "auto"), probe=probe,
                         both_directions=both_directions(spec), name=name)
        self.aqm = aqm
        self.queue = spec.queue
        self.emulator = paths.native_binary("link", "netrepro-link")

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        kind = self.queue.split(":", 1)[0]
        if kind != self.aqm.queue:
            raise SchemeUnavailable(f"{self.name} needs the link's queue to be "
                                    f"{self.aqm.queue!r} in both directions; this run asks for "
                                    f"{self.queue!r}")
        if self.aqm.queue not in emulator_queue_kinds_text(self.emulator).lower():
            raise SchemeUnavailable(
                f"{self.name} needs a {self.aqm.queue!r} queue in the link emulator, and "
                f"{self.emulator.name} ({self.emulator}) has none (its --help lists no "
                f"{self.aqm.queue!r} queue): build netrepro-link with its CoDel queue "
                "(native/link); the run is refused rather than run as plain "
                f"{self.aqm.cc} over a FIFO")
        facts = super().prepare(stack)
        facts["queue"] = self.queue
        return facts

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "queue": self.queue}


def _build(entry: SchemeEntry, spec: RunSpec, paths: ProjectPaths) -> AqmTcpScheme:
    return AqmTcpScheme(AQM_SCHEMES[entry.name], entry.name, spec, paths,
                        CongestionControlResolver.for_project(paths),
                        probe=TcpProbeSetup(paths.state_dir / "tcp-probe"))


TABLE: tuple[SchemeEntry, ...] = (
    SchemeEntry("cubic-codel", "tcp", AQM_SCHEMES["cubic-codel"].description, _build,
                params=(CC_IMPL,), label="Cubic-CoDel", colour="tab:cyan", marker="d"),
)
