"""Mininet nodes whose shell cannot hang a run, and a deadline around a network's set-up.

Mininet starts each node's shell (`mnexec -cd[n] env PS1=... bash`) and reads the shell's
pty until its prompt with no time limit; every later `cmd()` waits the same way. When the
shell has exited, that wait lasts for ever: Mininet itself keeps the pty's other end open,
so no end of file ever comes. That is what a refused namespace looks like (`mnexec -n`
printing "remount: Invalid argument" where / is not a mount point: a chroot, or a container
whose root is not a mount point). The node classes here wait in short slices instead,
check that the shell is alive between them, and fail with the shell's own last words;
their first prompt has a deadline too.

`start_deadline()` bounds a whole network's set-up (a command that never returns, a
switch that never answers), and turns Mininet's `exit(1)` after an interface that never
moved into a node into an error naming Mininet's own words, so the run fails and the
pass goes on.
"""
from __future__ import annotations

import logging
import os
import re
import select
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from mininet.log import lg
from mininet.node import Host, Node, OVSSwitch

log = logging.getLogger(__name__)

SHELL_START_TIMEOUT_S = 30.0
SLICE_S = 0.2
PROMPT = chr(127)  # Mininet's PS1: the shell is ready when it prints this
HEARD_MAX = 600


class NetworkStartError(RuntimeError):
    """The network could not be set up: a node's shell, an interface, or the deadline."""


class ShellExited(NetworkStartError):
    """A node's shell is gone: whatever waits on it would wait for ever."""


def _printable(text: str) -> str:
    kept = "".join(c if c.isprintable() else " " for c in text.replace(PROMPT, ""))
    return " ".join(kept.split())


def entering_hint(said: str) -> str:
    """A hint for what a program started in a host said, when it names a path missing that
    exists here (what `mnexec -a` prints when the host's mount namespace has another root
    than this process: a chroot)."""
    for path in re.findall(r"(/[^\s:]*): No such file or directory", said):
        if Path(path).exists():
            return (f" ({path} exists here but not for a program started in a Mininet host: "
                    "this process's root is not its mount namespace's root, as in a chroot; "
                    "./repro doctor checks why)")
    return ""


class GuardedShell:
    """Put before a Mininet node class: `class GuardedHost(GuardedShell, Host)`.

    Uses Mininet's own attributes (`shell`, the Popen of mnexec; `stdout`, the pty's master;
    `readbuf`); only the waits change."""

    shell: Any
    stdout: Any
    readbuf: str
    name: str
    cleanup: Any  # Mininet's: closes the pty, waits for the shell
    shell_start_timeout_s = SHELL_START_TIMEOUT_S
    _start_deadline: float | None = None
    _heard = ""

    def startShell(self, mnopts: str | None = None) -> None:  # noqa: N802 (Mininet's name)
        self._start_deadline = time.monotonic() + self.shell_start_timeout_s
        self._heard = ""
        try:
            super().startShell(mnopts)  # type: ignore[misc]
        except BaseException:
            self._abandon_shell()
            raise
        finally:
            self._start_deadline = None

    def read(self, size: int = 1024) -> str:
        """Mininet's read, which blocks in os.read, after a wait that checks the shell.
        While the shell starts, reads on to its prompt: Mininet's own loop would otherwise
        wait on the pty with no limit between two reads."""
        if self._start_deadline is None:
            if not self.readbuf:
                self._wait_readable(None)
            return str(super().read(size))  # type: ignore[misc]
        data = ""
        while not data.endswith(PROMPT):
            if not self.readbuf:
                self._wait_readable(self._start_deadline)
            data += str(super().read(size))  # type: ignore[misc]
            self._heard = (self._heard + data)[-HEARD_MAX:]
        return data

    def waitReadable(self, timeoutms: float | None = None) -> Any:  # noqa: N802
        if timeoutms is not None or self.readbuf:
            return super().waitReadable(timeoutms)  # type: ignore[misc]
        return self._wait_readable(None)

    def _wait_readable(self, deadline: float | None) -> Any:
        # A poll of our own, for input only: Mininet's pollOut also reports the pty writable,
        # so it is "ready" at once, and the read after it blocks.
        readable = select.poll()
        readable.register(self.stdout.fileno(), select.POLLIN | select.POLLPRI)
        while True:
            ready = readable.poll(SLICE_S * 1000)
            if ready:
                return ready
            if self.shell is None or self.shell.poll() is not None:
                ready = readable.poll(0)  # what it said before it went
                if ready:
                    return ready
                raise ShellExited(self._exit_message())
            if deadline is not None and time.monotonic() > deadline:
                raise NetworkStartError(
                    f"{self.name}: its shell printed no prompt within "
                    f"{self.shell_start_timeout_s:g} s (mnexec/bash still running); it said: "
                    f"{_printable(self._heard) or '(nothing)'}")

    def _exit_message(self) -> str:
        status = self.shell.returncode if self.shell is not None else None
        said = _printable(self._heard + self.readbuf)
        text = (f"{self.name}: its shell (mnexec, then bash) exited with status {status}"
                + (" before its first prompt" if self._start_deadline is not None else ""))
        return f"{text}; it said: {said or '(nothing)'} (./repro doctor checks why)"

    def _abandon_shell(self) -> None:
        """After a failed start: end the shell if it still runs, close Mininet's pty ends."""
        shell = self.shell
        if shell is None:
            return
        if shell.poll() is None:
            try:
                os.killpg(shell.pid, signal.SIGKILL)  # mnexec -d made it a group leader
            except OSError:
                shell.kill()
        try:
            self.cleanup()
        except Exception as e:  # a start cut short may have left Mininet's pty half made
            log.debug("%s: closing a failed shell: %s", self.name, e)


class GuardedHost(GuardedShell, Host):
    """Mininet's Host, with the waits above."""


class GuardedNode(GuardedShell, Node):
    """Mininet's Node (a namespace with a shell), with the waits above."""


class GuardedOVSSwitch(GuardedShell, OVSSwitch):
    """Mininet's OVSSwitch, with the waits above."""


class _Collect(logging.Handler):
    """Mininet's own error lines while a network is set up."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(" ".join(record.getMessage().split()))


@contextmanager
def start_deadline(seconds: float, what: str) -> Iterator[None]:
    """Fail with NetworkStartError when the block takes longer than `seconds` (the main
    thread only: elsewhere the nodes' own checks still hold), or when Mininet gives up with
    exit(1), as it does after an interface that would not move into its node."""
    collect = _Collect()
    lg.addHandler(collect)
    armed = threading.current_thread() is threading.main_thread() and \
        signal.getitimer(signal.ITIMER_REAL)[0] == 0

    def expire(signum: int, frame: object) -> None:
        words = "; ".join(collect.lines[-3:])
        raise NetworkStartError(f"{what} did not come up within {seconds:g} s"
                                + (f"; Mininet said: {words}" if words else ""))

    previous: Any = None
    if armed:
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except SystemExit as e:
        words = "; ".join(collect.lines[-3:]) or f"exit({e.code})"
        raise NetworkStartError(f"{what}: Mininet gave up: {words}") from None
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        lg.removeHandler(collect)
