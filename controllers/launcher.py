"""Choose, start, watch and stop the OpenFlow controller that carries out a drop plan.

    choice = choose_controller("auto")          # POX if installed, else os-ken
    ctl = ControllerProcess(choice, config, run_dir, on_process=active.add)
    ctl.start()                                 # listening on 127.0.0.1:ctl.port
    ...switch connects...
    ctl.wait_ready(timeout_s=10)                # the switch connected, flows are in
    ctl.check_alive()                           # raises ControllerError if it died
    ctl.stop()
    DropLog.read(ctl.log_path)

Never a silent switch: `pox` without POX installed fails naming the fix; the
choice and why it was made are recorded (`ControllerChoice.to_dict`).
"""
from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from controllers import pox_install
from controllers.drop_log import DropLog
from controllers.plan_logic import CONFIG_ENV, ControllerConfig
from core.errors import Unavailable
from core.paths import REPO_ROOT
from core.processes import stop_child

CONTROLLERS = ("pox", "os-ken", "auto")
LISTEN_HOST = "127.0.0.1"
LISTEN_TIMEOUT_S = 15.0
START_ATTEMPTS = 3
OSKEN_MANAGER = "/usr/bin/osken-manager"
PYTHON = "/usr/bin/python3"


class ControllerError(RuntimeError):
    """The controller would not start, never saw the switch, or died."""


class ControllerUnavailable(ControllerError, Unavailable):
    """The controller asked for is not installed here."""


@dataclass(frozen=True)
class ControllerChoice:
    kind: str           # "pox" or "os-ken"
    requested: str      # what the user asked for: pox, os-ken or auto
    version: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "requested": self.requested, "version": self.version,
                "why": self.why}


def osken_available() -> str | None:
    """Why os-ken cannot run here, or None when it can."""
    if not Path(OSKEN_MANAGER).is_file():
        return f"{OSKEN_MANAGER} is missing: apt-get install python3-os-ken"
    if importlib.util.find_spec("os_ken") is None:
        return "the os_ken module is missing: apt-get install python3-os-ken"
    return None


def _osken_version() -> str:
    import importlib.metadata
    try:
        return importlib.metadata.version("os-ken")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def choose_controller(requested: str, root: Path = REPO_ROOT) -> ControllerChoice:
    if requested not in CONTROLLERS:
        raise ValueError(f"unknown controller {requested!r}: use one of {', '.join(CONTROLLERS)}")
    pox = pox_install.installed(root)
    if requested == "pox" or (requested == "auto" and pox is not None):
        if pox is None:
            raise ControllerUnavailable(
                f"POX was asked for but is not installed in {pox_install.pox_dir(root)}: run "
                "./setup/install.sh --pox-dir DIR (DIR holding "
                f"{pox_install.POX_TARBALL} or a POX checkout), or "
                "`/usr/bin/python3 -m controllers.pox_install --dir DIR`; or use "
                "--controller os-ken")
        why = "asked for" if requested == "pox" else "auto: POX is installed"
        return ControllerChoice("pox", requested, pox.version, f"{why} ({pox.source})")
    missing = osken_available()
    if missing is not None:
        raise ControllerUnavailable(
            f"os-ken was asked for but cannot run: {missing}" if requested == "os-ken" else
            f"no controller: POX is not installed in {pox_install.pox_dir(root)} and {missing}")
    why = "asked for" if requested == "os-ken" else "auto: POX is not installed"
    return ControllerChoice("os-ken", requested, _osken_version(), why)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LISTEN_HOST, 0))
        return int(s.getsockname()[1])


def listener_inodes(port: int, host: str = LISTEN_HOST) -> set[str]:
    """Socket inodes listening on host:port in this network namespace (from /proc)."""
    want = f"{socket.inet_aton(host)[::-1].hex().upper()}:{port:04X}"
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {f[9] for f in (line.split() for line in lines) if f[1] == want and f[3] == "0A"}


def listening(port: int, pid: int, host: str = LISTEN_HOST) -> bool:
    """Process `pid` itself listens on host:port (not another run's controller that took
    the same port first)."""
    inodes = listener_inodes(port, host)
    if not inodes:
        return False
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False


class ControllerProcess:
    """One controller process for one run, on a port of its own."""

    def __init__(self, choice: ControllerChoice, config: ControllerConfig, run_dir: Path,
                 on_process: Callable[[int, str], None] | None = None,
                 root: Path = REPO_ROOT) -> None:
        self.choice = choice
        self.config = config
        self.run_dir = run_dir
        self.root = root
        self._on_process = on_process or (lambda pid, marker: None)
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    @property
    def log_path(self) -> Path:
        return self.config.log_path

    @property
    def stderr_path(self) -> Path:
        return self.run_dir / "controller-stderr.txt"

    @property
    def config_path(self) -> Path:
        return self.run_dir / "controller-config.json"

    def command(self, port: int) -> list[str]:
        if self.choice.kind == "pox":
            pox = pox_install.pox_dir(self.root) / "pox.py"
            return [PYTHON, str(pox), "log.level", "--WARNING", "openflow.of_01",
                    f"--address={LISTEN_HOST}", f"--port={port}",
                    "controllers.pox_component", f"--config={self.config_path}"]
        return [PYTHON, OSKEN_MANAGER, "--ofp-listen-host", LISTEN_HOST,
                "--ofp-tcp-listen-port", str(port),
                str(self.root / "controllers" / "osken_app.py")]

    def start(self) -> None:
        """Start on a free port (another if a run side by side took it first)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.config.write(self.config_path)
        env = {**os.environ, CONFIG_ENV: str(self.config_path),
               "PYTHONPATH": str(self.root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        failures: list[str] = []
        for _ in range(START_ATTEMPTS):
            port = free_port()
            stderr = open(self.stderr_path, "ab")
            self.process = subprocess.Popen(self.command(port), stdout=stderr, stderr=stderr,
                                            env=env, cwd=self.run_dir, start_new_session=True)
            stderr.close()
            self._on_process(self.process.pid, self.command(port)[1])
            deadline = time.monotonic() + LISTEN_TIMEOUT_S
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    break
                if listening(port, self.process.pid):
                    self.port = port
                    return
                time.sleep(0.05)
            code = self.process.poll()
            if code is None:
                self.stop()
                raise ControllerError(f"the {self.choice.kind} controller was not listening on "
                                      f"{LISTEN_HOST}:{port} after {LISTEN_TIMEOUT_S:.0f} s: "
                                      f"{self.stderr_tail()}")
            failures.append(f"port {port}: exit status {code}: {self.stderr_tail()}")
        raise ControllerError(f"the {self.choice.kind} controller would not start: "
                              + "; ".join(failures))

    @property
    def target(self) -> str:
        return f"tcp:{LISTEN_HOST}:{self.port}"

    def stderr_tail(self, lines: int = 4) -> str:
        if not self.stderr_path.exists():
            return "(no output)"
        text = self.stderr_path.read_text(errors="replace").strip().splitlines()[-lines:]
        return " | ".join(text) or "(no output)"

    def check_alive(self) -> None:
        if self.process is None:
            raise ControllerError("the controller was never started")
        code = self.process.poll()
        if code is not None:
            raise ControllerError(f"the {self.choice.kind} controller died (exit status {code}) "
                                  f"during the run: {self.stderr_tail()}")

    def wait_ready(self, timeout_s: float = 10.0, dpid: str | None = None) -> None:
        """The switch (datapath id `dpid`, 16 hex digits, if given) connected and the initial
        flows are installed (or ControllerError)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_alive()
            log = DropLog.read(self.log_path)
            seen = {str(e.get("dpid")) for e in log.of("connected")}
            if dpid is not None and seen - {dpid}:
                raise ControllerError(f"the {self.choice.kind} controller at {self.target} was "
                                      f"reached by another switch ({sorted(seen - {dpid})}), "
                                      f"not this run's {dpid}")
            if log.ready:
                return
            time.sleep(0.05)
        log = DropLog.read(self.log_path)
        state = "connected but never acknowledged its flows" if log.of("connected") else \
            "never connected"
        raise ControllerError(f"the switch {state} to the {self.choice.kind} controller at "
                              f"{self.target} within {timeout_s:.0f} s")

    def drop_log(self) -> DropLog:
        return DropLog.read(self.log_path)

    def stop(self) -> None:
        if self.process is not None:
            stop_child(self.process, grace_s=5, group=True)

    def describe(self) -> dict[str, Any]:
        return {**self.choice.to_dict(), "listen": self.target,
                "command": " ".join(self.command(self.port or 0))}
