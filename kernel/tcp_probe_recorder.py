"""Record tcp:tcp_probe for one run's TCP sender, in a tracefs instance of its own.

Tracepoints are global (not per network namespace) and every run uses the same
addresses and iperf3 port in its own namespaces, so a run's sender is told
apart by its source port: each run reserves a client port that no other live
recording uses (under a lock, checking every tracefs instance's filter), binds
iperf3's data connection to it (`--cport`), and filters its private instance
(`instances/netrepro-<run prefix>`) on `sport == <client port> && dport ==
<server port>`. That keeps the receiver's socket (ports the other way round)
and iperf3's control connection (an ephemeral port) out as well.

The instance's clock is CLOCK_MONOTONIC, the emulator's log clock, so probe
times line up with data.log. A reader thread drains `trace_pipe` into
tcp-probe.csv while the run goes on. Each instance has a record
(<state>/<instance>.json, with the owner's PID and start time): teardown
removes the instance and its record, and `repro clean` removes instances whose
owner died. Nothing this module did not create is ever removed.

When tracefs or the tracepoint is missing the run goes on without the probe,
and its meta.json says why (`ProbeUnavailable`).

Given the end hosts' interfaces, the same instance also records `net:netif_rx` and
`net:netif_receive_skb` on them: how late each host's kernel processed what arrived
(kernel/stack_delay.py), reported beside the probe's facts (`stack_delay`).
"""
from __future__ import annotations

import errno
import json
import logging
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ContextManager, Mapping

from core.errors import Unavailable
from core.file_lock import exclusive_lock
from core.processes import process_state
from core.tcp_probe_format import CONG_STATE_FILE, PROBE_FILE, ProbeCsvWriter
from kernel import stack_delay
from kernel.stack_delay import StackDelayMeter

log = logging.getLogger(__name__)

TRACEFS_MOUNTS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
EVENTS = ("tcp/tcp_probe", "tcp/tcp_cong_state_set")
INSTANCE_PREFIX = "netrepro-"
# Client ports below Linux's default ephemeral range (32768-60999), so the
# control connection's port never equals the data connection's.
CLIENT_PORTS = range(20000, 32000)
BUFFER_KB_PER_CPU = 4096
POLL_S = 0.2
READ_CHUNK = 1 << 16
_FILTER_SPORT = re.compile(r"\b[sd]port\s*==\s*(\d+)")


class ProbeUnavailable(Unavailable):
    """tcp_probe cannot be recorded here; the message says what is missing and the fix."""


def find_tracefs() -> Path | None:
    """Where tracefs is mounted (the instances folder proves it is tracefs), or None."""
    for root in TRACEFS_MOUNTS:
        if (root / "instances").is_dir() and (root / "trace_pipe").exists():
            return root
    return None


def _process_start_time(pid: int) -> str | None:
    """The process's start time (clock ticks after boot), None if it is gone."""
    state = process_state(pid)
    return state.start_time if state else None


@dataclass(frozen=True)
class _Record:
    instance: str
    owner: int
    owner_start: str | None
    client_port: int
    server_port: int
    # The flow from the server's port to this client port (iperf3 --bidir's reverse stream,
    # sent by the server), instead of the one from the client port to the server's.
    reverse: bool = False

    def alive(self) -> bool:
        now = _process_start_time(self.owner)
        return now is not None and (self.owner_start is None or now == self.owner_start)


class TcpProbeSetup:
    """Starts recordings; holds where tracefs is and where our records live."""

    def __init__(self, state_dir: Path, tracefs: Path | None = None) -> None:
        self.state_dir = state_dir
        self._tracefs = tracefs

    def tracefs(self) -> Path:
        """The tracefs root, or ProbeUnavailable naming what is missing."""
        if os.geteuid() != 0:
            raise ProbeUnavailable(f"tcp_probe needs root to use tracefs (effective uid is "
                                   f"{os.geteuid()})")
        root = self._tracefs or find_tracefs()
        if root is None:
            raise ProbeUnavailable(
                "tracefs is not mounted (looked in "
                + ", ".join(str(p) for p in TRACEFS_MOUNTS)
                + "): mount it with `mount -t tracefs nodev /sys/kernel/tracing` "
                "(setup/install.sh does this)")
        for event in EVENTS:
            if not (root / "events" / event / "filter").exists():
                raise ProbeUnavailable(
                    f"this kernel has no {event.replace('/', ':')} tracepoint "
                    f"({root / 'events' / event} is missing; tcp_probe needs Linux >= 4.16, "
                    "tcp_cong_state_set >= 5.19, built with CONFIG_FTRACE event tracing)")
        return root

    def start(self, out_dir: Path, server_port: int, tag: str = "",
              reverse_of: "TcpProbeRecorder | None" = None,
              interfaces: Mapping[str, str] | None = None) -> "TcpProbeRecorder":
        """Reserve a client port, create and arm the run's instance, start reading.

        With `interfaces` (role -> the end host's interface name), also record how late
        each host's stack processed what arrived (kernel/stack_delay.py).

        With `reverse_of` (a recording started for the same run), record instead the reverse
        stream of iperf3 --bidir: sent by the server from `server_port` to the next client
        port (iperf3 binds its second stream to --cport + 1, which _free_port keeps free).
        """
        root = self.tracefs()
        name = INSTANCE_PREFIX + (tag or secrets.token_hex(4)) + ("-rev" if reverse_of else "")
        out_dir.mkdir(parents=True, exist_ok=True)
        with self._locked():
            self._cleanup_stale_locked(root)
            port = reverse_of.client_port + 1 if reverse_of else self._free_port(root)
            instance = root / "instances" / name
            try:
                instance.mkdir()
            except OSError as e:
                reason = "it already exists" if e.errno == errno.EEXIST else e.strerror
                raise ProbeUnavailable(f"cannot create tracefs instance {instance}: "
                                       f"{reason}") from e
            record = _Record(name, os.getpid(), _process_start_time(os.getpid()), port,
                             server_port, reverse=reverse_of is not None)
            self._write_record(record)
        recorder = TcpProbeRecorder(self, instance, record, out_dir, interfaces)
        try:
            recorder.arm()
        except BaseException:
            recorder.abort()
            raise
        return recorder

    def cleanup_stale(self) -> list[str]:
        """Remove instances of ours whose owning process died; say what was removed."""
        try:
            root = self.tracefs()
        except ProbeUnavailable:
            return []
        with self._locked():
            return self._cleanup_stale_locked(root)

    # ------------------------------------------------------------ internals

    def _records(self) -> list[tuple[Path, _Record | None]]:
        if not self.state_dir.is_dir():
            return []
        out: list[tuple[Path, _Record | None]] = []
        for path in sorted(self.state_dir.glob(INSTANCE_PREFIX + "*.json")):
            try:
                out.append((path, _Record(**json.loads(path.read_text()))))
            except (OSError, ValueError, TypeError):
                out.append((path, None))
        return out

    def _write_record(self, record: _Record) -> None:
        path = self.state_dir / f"{record.instance}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record.__dict__))
        tmp.replace(path)

    def remove(self, record: _Record) -> None:
        """Remove one of our instances and its record (idempotent)."""
        root = self._tracefs or find_tracefs()
        with self._locked():
            if root is not None:
                _remove_instance(root / "instances" / record.instance)
            (self.state_dir / f"{record.instance}.json").unlink(missing_ok=True)

    def _cleanup_stale_locked(self, root: Path) -> list[str]:
        report = []
        for path, record in self._records():
            if record is not None and record.alive():
                continue
            if record is not None and record.instance.startswith(INSTANCE_PREFIX):
                _remove_instance(root / "instances" / record.instance)
                report.append(f"removed tracefs instance {record.instance} of a run that "
                              f"exited (pid {record.owner})")
            path.unlink(missing_ok=True)
        return report

    def _free_port(self, root: Path) -> int:
        """A client port that no live recording (ours or any instance's filter) uses."""
        used = {r.client_port for _, r in self._records() if r is not None}
        for filt in (root / "instances").glob("*/events/tcp/tcp_probe/filter"):
            try:
                used.update(int(p) for p in _FILTER_SPORT.findall(filt.read_text()))
            except OSError:
                continue
        # A run may use its port and the next (iperf3 --bidir's second stream): keep both free.
        free = [p for p in CLIENT_PORTS if not {p - 1, p, p + 1} & used]
        if not free:
            raise ProbeUnavailable(f"every client port in {CLIENT_PORTS.start}-"
                                   f"{CLIENT_PORTS.stop - 1} is taken by a live tcp_probe "
                                   "recording; run `./repro clean`")
        return free[secrets.randbelow(len(free))]

    def _locked(self) -> ContextManager[None]:
        return exclusive_lock(self.state_dir / "lock")


def _remove_instance(instance: Path) -> None:
    if not instance.exists():
        return
    try:
        instance.rmdir()  # tracefs removes the whole instance with its files
    except OSError as e:
        log.error("could not remove tracefs instance %s: %s", instance, e.strerror)


class TcpProbeRecorder:
    """One run's recording: armed by TcpProbeSetup.start, ended by finish()."""

    def __init__(self, setup: TcpProbeSetup, instance: Path, record: _Record,
                 out_dir: Path, interfaces: Mapping[str, str] | None = None) -> None:
        self.setup = setup
        self.instance = instance
        self.record = record
        self.out_dir = out_dir
        self.filter = (f"sport == {record.server_port} && dport == {record.client_port}"
                       if record.reverse else
                       f"sport == {record.client_port} && dport == {record.server_port}")
        self._writer: ProbeCsvWriter | None = None
        self.interfaces = dict(interfaces or {})
        self._meter: StackDelayMeter | None = None
        self._stack_facts: dict[str, Any] = {"status": "not requested"}
        self._tail = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: str = ""
        self._facts: dict[str, Any] | None = None
        self._closed = False

    @property
    def client_port(self) -> int:
        return self.record.client_port

    def arm(self) -> None:
        """Clock, buffer, filters, events on; the reader thread starts draining trace_pipe."""
        try:
            _write(self.instance / "tracing_on", "0")
            _write(self.instance / "trace_clock", "mono")
            _write(self.instance / "buffer_size_kb", str(BUFFER_KB_PER_CPU))
            for event in EVENTS:
                _write(self.instance / "events" / event / "filter", self.filter)
                _write(self.instance / "events" / event / "enable", "1")
        except OSError as e:
            raise ProbeUnavailable(f"cannot set up tracefs instance {self.instance}: "
                                   f"{e.filename}: {e.strerror}") from e
        self._arm_stack_delay()
        self._writer = ProbeCsvWriter(self.out_dir)
        try:
            fd = os.open(self.instance / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            raise ProbeUnavailable(f"cannot open {self.instance / 'trace_pipe'}: "
                                   f"{e.strerror}") from e
        self._thread = threading.Thread(target=self._read_loop, args=(fd,),
                                        name=f"tcp-probe-{self.record.instance}", daemon=True)
        try:
            _write(self.instance / "tracing_on", "1")
        except OSError as e:
            os.close(fd)
            raise ProbeUnavailable(f"cannot turn tracing on in {self.instance}: "
                                   f"{e.strerror}") from e
        self._thread.start()

    def _arm_stack_delay(self) -> None:
        """The netif events on the hosts' interfaces; without them the probe still runs and
        the facts say why the stack delay is missing."""
        if not self.interfaces:
            return
        try:
            for event in stack_delay.EVENTS:
                _write(self.instance / "events" / event / "filter",
                       stack_delay.interface_filter(self.interfaces))
                _write(self.instance / "events" / event / "enable", "1")
        except OSError as e:
            log.warning("end hosts' stack delay not recorded: %s: %s", e.filename, e.strerror)
            self._stack_facts = {"status": "unavailable",
                                 "reason": f"cannot enable {e.filename}: {e.strerror} (the "
                                           "kernel needs the net:netif_rx and "
                                           "net:netif_receive_skb tracepoints)"}
            return
        self._meter = StackDelayMeter(self.interfaces)

    def _read_loop(self, fd: int) -> None:
        assert self._writer is not None
        try:
            while True:
                self._drain(fd)
                if self._stop.is_set():
                    self._drain(fd)  # what arrived before the events were switched off
                    break
                self._stop.wait(POLL_S)
        except OSError as e:
            self._error = f"reading {self.instance / 'trace_pipe'} failed: {e.strerror}"
        finally:
            os.close(fd)

    def _drain(self, fd: int) -> None:
        assert self._writer is not None
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                return
            self._feed(chunk.decode(errors="replace"))

    def _feed(self, text: str) -> None:
        """A chunk of trace_pipe: netif lines to the stack-delay meter, the rest to the CSVs
        (a line split across chunks is joined first)."""
        assert self._writer is not None
        lines = (self._tail + text).split("\n")
        self._tail = lines.pop()
        meter = self._meter
        if meter is None:
            self._writer.feed_lines(lines)
        else:
            self._writer.feed_lines(line for line in lines if not meter.feed(line))

    def finish(self) -> dict[str, Any]:
        """Stop recording, write the CSVs, remove the instance; facts for meta (idempotent)."""
        if self._facts is not None:
            return self._facts
        for event in EVENTS + (stack_delay.EVENTS if self._meter is not None else ()):
            try:
                _write(self.instance / "events" / event / "enable", "0")
            except OSError:
                pass
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        stuck = self._thread is not None and self._thread.is_alive()
        parser = self._writer.parser if self._writer is not None else None
        if self._writer is not None and not stuck:
            if self._tail:
                self._feed("\n")
            self._writer.close()
        self.close()
        facts: dict[str, Any] = {
            "file": PROBE_FILE, "cong_state_file": CONG_STATE_FILE,
            "instance": self.record.instance, "filter": self.filter,
            "client_port": self.record.client_port, "server_port": self.record.server_port,
            "clock": "CLOCK_MONOTONIC (the clock of data.log's base timestamp)",
            "samples": parser.samples if parser else 0,
            "cong_state_changes": parser.state_changes if parser else 0,
            "lost_events": parser.lost_events if parser else 0,
            "unparsed_lines": parser.unparsed_lines if parser else 0}
        if parser and parser.first_unparsed:
            facts["first_unparsed_line"] = parser.first_unparsed
        if stuck:
            facts.update(status="failed", reason="the trace_pipe reader did not stop in 30 s")
        elif self._error:
            facts.update(status="failed", reason=self._error)
        elif not facts["samples"]:
            facts.update(status="empty", reason=f"no tcp_probe event matched {self.filter!r}")
        else:
            facts["status"] = "recorded"
        facts["stack_delay"] = self._stack_delay_facts(stuck)
        self._facts = facts
        return facts

    def _stack_delay_facts(self, stuck: bool) -> dict[str, Any]:
        if self._meter is None:
            return self._stack_facts
        facts = self._meter.facts()
        if stuck or self._error:
            facts.update(status="failed", reason="the trace_pipe reader failed (above)")
        elif not any(facts[role]["stack_delay_us"]["count"] for role in self.interfaces):
            wanted = stack_delay.interface_filter(self.interfaces)
            facts.update(status="empty", reason=f"no netif event matched {wanted!r}")
        else:
            facts["status"] = "recorded"
        return facts

    def abort(self) -> None:
        """Undo a failed arm(): no artifacts, no instance."""
        if self._writer is not None:
            self._writer.close()
            for name in (PROBE_FILE, CONG_STATE_FILE):
                (self.out_dir / name).unlink(missing_ok=True)
        self.close()

    def close(self) -> None:
        """Remove the instance and its record (idempotent; the reader must be done)."""
        if self._closed:
            return
        self._closed = True
        self.setup.remove(self.record)


def _write(path: Path, text: str) -> None:
    """Write a tracefs control file; never creates one (a missing file is an error)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
