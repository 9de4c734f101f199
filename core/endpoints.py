"""Where a run's programs run: a Mininet host as the measurement code sees it, and the two
ends of a run with the folder its programs write into. No Mininet here: anything that only
starts programs in hosts can be written and tested without it."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol


class MininetHost(Protocol):
    name: str

    def popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen[bytes]: ...

    def IP(self) -> str: ...


@dataclass
class Endpoints:
    """Where a scheme runs, and where it writes."""

    sender: MininetHost
    receiver: MininetHost
    receiver_ip: str
    out_dir: Path
    on_process: Callable[[int, str], None] = field(default=lambda pid, marker: None)
    run_tag: str = ""  # the run's prefix, for names outside its namespaces (tracefs)
