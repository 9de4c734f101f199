"""Where the project's pieces live, relative to the repository root."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import Unavailable

REPO_ROOT = Path(__file__).resolve().parent.parent
# Kernel state we register (eBPF congestion controls) is global to the machine and gone at
# reboot, as /run is: every checkout on the machine must see the same records of it.
MACHINE_STATE_DIR = Path("/run/netrepro")


class MissingBinary(Unavailable):
    """A native program the run needs has not been built."""


@dataclass(frozen=True)
class ProjectPaths:
    root: Path = REPO_ROOT
    # NETREPRO_RESULTS moves the results tree (tests use a temporary one).
    results_override: Path | None = field(
        default_factory=lambda: Path(os.environ["NETREPRO_RESULTS"])
        if os.environ.get("NETREPRO_RESULTS") else None)
    # NETREPRO_MACHINE_STATE moves the machine-wide records (tests use a temporary one).
    machine_state_override: Path | None = field(
        default_factory=lambda: Path(os.environ["NETREPRO_MACHINE_STATE"])
        if os.environ.get("NETREPRO_MACHINE_STATE") else None)

    @property
    def build_dir(self) -> Path:
        return self.root / "build" / "native"

    @property
    def results_dir(self) -> Path:
        return self.results_override or self.root / "results"

    @property
    def state_dir(self) -> Path:
        """This checkout's state: trace cache, active-run records, tcp_probe records."""
        return self.root / "var"

    @property
    def cc_state_dir(self) -> Path:
        """Records of eBPF congestion-control registrations, shared by every checkout: a
        registration made by one checkout's run is used, and cleaned, by any other's."""
        return (self.machine_state_override or MACHINE_STATE_DIR) / "cc"

    @property
    def legacy_cc_state_dir(self) -> Path:
        """Where versions before the machine-wide records kept them (cleaned, never used)."""
        return self.state_dir / "cc"

    def native_binary(self, component: str, name: str) -> Path:
        path = self.build_dir / component / name
        if not path.is_file():
            raise MissingBinary(
                f"{name} is not built (expected {path.relative_to(self.root)}); "
                "run `./setup/install.sh` (or `cmake -S native -B build/native && "
                "make -C build/native`)"
            )
        return path


def display(path: Path) -> str:
    """A path relative to the repository when it is inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
