"""A real `./repro contest serve` for the tests: its own state folder, results and a short cut
of a trace, the web process as the service user, the scorer as root running real trials."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.paths import REPO_ROOT
from core.traces import TraceSet, load_trace

REPRO = str(REPO_ROOT / "repro")
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "contest"
START_S = 60.0  # the server answers within this after it is started
SCORE_S = 420.0  # one submission (build and one short trial) is scored within this
TRACE = "Serve8"
CUT_MS = 8_000


def cut_trace(folder: Path) -> None:
    """Serve8: the first 8 s of the training trace (both directions), so a trial is short."""
    traces = TraceSet.for_project(REPO_ROOT)
    for suffix in (".down", ".up"):
        times = [int(t) for t in load_trace(traces.resolve(f"Verizon-LTE-short{suffix}"))
                 if t <= CUT_MS]
        (folder / f"{TRACE}{suffix}").write_text("".join(f"{t}\n" for t in times))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    base: Path  # a folder of the test's own, readable by the service user
    port: int
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen[str] | None = None
    logs: list[Path] = field(default_factory=list)

    @property
    def state(self) -> Path:
        return self.base / "state"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, NETREPRO_RESULTS=str(self.base / "results"),
                    NETREPRO_TRACES=str(self.base / "traces"))

    @classmethod
    def make(cls, *extra: str) -> "Server":
        base = Path(tempfile.mkdtemp(prefix="netrepro-serve-test-"))
        base.chmod(0o755)  # the service user must reach the state folder inside
        (base / "traces").mkdir()
        cut_trace(base / "traces")
        return cls(base, free_port(), extra)

    def start(self) -> None:
        log = self.base / f"serve-{len(self.logs) + 1}.log"
        self.logs.append(log)
        self.proc = subprocess.Popen(
            [REPRO, "contest", "serve", "--port", str(self.port), "--trials", "1", "--trace",
             TRACE, "--state-dir", str(self.state), *self.extra],
            stdout=log.open("w"), stderr=subprocess.STDOUT, text=True, env=self.env,
            start_new_session=True)
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve ended ({self.proc.returncode}): {log.read_text()}")
            try:
                urllib.request.urlopen(self.url + "/api/leaderboard", timeout=2).read()
                return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"serve did not answer within {START_S:.0f} s: {log.read_text()}")

    def output(self) -> str:
        return "".join(p.read_text() for p in self.logs)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 180.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, sig)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            raise AssertionError(f"serve did not stop within {timeout:.0f} s") from None

    def cleanup(self) -> None:
        self.stop()
        if self.proc is not None:
            _wait_group_gone(self.proc.pid, 180.0)
        shutil.rmtree(self.base, ignore_errors=True)

    def team(self, name: str) -> str:
        done = subprocess.run([REPRO, "contest", "team", "add", name, "--state-dir",
                               str(self.state)], capture_output=True, text=True, env=self.env,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        token = done.stdout.strip().splitlines()[-1]
        assert name not in token and len(token) >= 40
        return token

    def request(self, path: str, token: str | None = None, data: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 30.0
                ) -> tuple[int, Any]:
        req = urllib.request.Request(self.url + path, data=data, headers=dict(headers or {}))
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def upload(self, token: str, folder: Path, timeout: float = 60.0) -> tuple[int, Any]:
        boundary = "netrepro-test-boundary"
        body = b""
        for name in ("controller.hh", "controller.cc"):
            body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; "
                     f"filename=\"{name}\"\r\nContent-Type: text/plain\r\n\r\n").encode()
            body += (folder / name).read_bytes() + b"\r\n"
        body += f"--{boundary}--\r\n".encode()
        return self.request("/api/submissions", token, body, {
            "Content-Type": f"multipart/form-data; boundary={boundary}"}, timeout)

    def wait_for(self, job: int, token: str, states: tuple[str, ...], timeout: float = SCORE_S
                 ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = None
        while time.monotonic() < deadline:
            status, seen = self.request(f"/api/submissions/{job}", token)
            assert status == 200, seen
            if seen["state"] in states:
                return dict(seen)
            time.sleep(0.5)
        raise AssertionError(f"submission {job} not {states} within {timeout:.0f} s: {seen}\n"
                             f"{self.output()[-3000:]}")


def _wait_group_gone(pgid: int, timeout: float) -> None:
    """Every process of the server's group (its submit tears its network down) has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    raise AssertionError(f"processes of the server's group {pgid} still run after {timeout} s")
