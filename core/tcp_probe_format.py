"""The kernel's view of one TCP sender, as measured: tracefs lines of tcp:tcp_probe in, CSV out.

`tcp:tcp_probe` fires for every segment a TCP socket receives, before the
segment is processed, so on the sender it samples snd_cwnd, ssthresh, srtt,
snd_nxt and snd_una once per incoming ACK. Its ssthresh is
`tcp_current_ssthresh()`: outside a window reduction that is
max(ssthresh, 3/4 cwnd). `tcp:tcp_cong_state_set` brackets recovery episodes
(the congestion-avoidance state machine: 0 Open, 1 Disorder, 2 CWR,
3 Recovery, 4 Loss); each probe row carries the state in force when it fired.

Artifacts (times in seconds of CLOCK_MONOTONIC, the emulator's log clock):

    tcp-probe.csv        time_s,snd_cwnd,ssthresh,srtt_us,snd_nxt,snd_una,snd_wnd,ca_state
    tcp-cong-state.csv   time_s,ca_state

The functions here need nothing but text: the recorder that produces the lines
lives in kernel/tcp_probe_recorder.py; analysis/tcp_probe.py reads the CSVs back.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable

PROBE_FILE = "tcp-probe.csv"
CONG_STATE_FILE = "tcp-cong-state.csv"
PROBE_COLUMNS = ("time_s", "snd_cwnd", "ssthresh", "srtt_us", "snd_nxt", "snd_una",
                 "snd_wnd", "ca_state")
CONG_STATE_COLUMNS = ("time_s", "ca_state")

CA_OPEN, CA_DISORDER, CA_CWR, CA_RECOVERY, CA_LOSS = 0, 1, 2, 3, 4
CA_STATE_NAMES = {CA_OPEN: "Open", CA_DISORDER: "Disorder", CA_CWR: "CWR",
                  CA_RECOVERY: "Recovery", CA_LOSS: "Loss"}

# `<task>-<pid> [<cpu>] <flags> <seconds>.<micros>: <event>: <fields>`; the
# flags column depends on trace options, so only the tail is relied upon.
_EVENT_LINE = re.compile(r"\s(\d+\.\d+):\s+(tcp_probe|tcp_cong_state_set):\s+(.*)$")
_LOST_LINE = re.compile(r"\[LOST (\d+) EVENTS\]")


class ProbeFormatError(ValueError):
    """A tcp_probe line or CSV that does not have the expected fields."""


@dataclass(frozen=True)
class ProbeSample:
    time_s: float
    snd_cwnd: int
    ssthresh: int
    srtt_us: int
    snd_nxt: int
    snd_una: int
    snd_wnd: int
    ca_state: int

    def row(self) -> list[str]:
        return [f"{self.time_s:.6f}", str(self.snd_cwnd), str(self.ssthresh),
                str(self.srtt_us), str(self.snd_nxt), str(self.snd_una), str(self.snd_wnd),
                str(self.ca_state)]


@dataclass(frozen=True)
class CongStateChange:
    time_s: float
    ca_state: int


def _fields(body: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in body.split() if "=" in part)


def _number(fields: dict[str, str], key: str, line: str) -> int:
    try:
        return int(fields[key], 0)  # snd_nxt/snd_una are printed in hex (0x...)
    except (KeyError, ValueError):
        raise ProbeFormatError(f"no integer {key}= in trace line: {line.strip()!r}") from None


@dataclass
class TraceLineParser:
    """Turns trace_pipe lines into samples, keeping the congestion state between them."""

    ca_state: int = CA_OPEN  # a connection starts Open
    lost_events: int = 0
    unparsed_lines: int = 0
    first_unparsed: str = ""
    samples: int = 0
    state_changes: int = 0

    def feed(self, line: str) -> ProbeSample | CongStateChange | None:
        """One line of trace_pipe output; None for lines that carry no event."""
        if not line.strip() or line.lstrip().startswith("#"):
            return None
        lost = _LOST_LINE.search(line)
        if lost:
            self.lost_events += int(lost.group(1))
            return None
        match = _EVENT_LINE.search(line)
        if match is None:
            self._unparsed(line)
            return None
        time_s, event, body = float(match.group(1)), match.group(2), match.group(3)
        fields = _fields(body)
        try:
            if event == "tcp_cong_state_set":
                self.ca_state = _number(fields, "cong_state", line)
                self.state_changes += 1
                return CongStateChange(time_s, self.ca_state)
            sample = ProbeSample(time_s, _number(fields, "snd_cwnd", line),
                                 _number(fields, "ssthresh", line),
                                 _number(fields, "srtt", line), _number(fields, "snd_nxt", line),
                                 _number(fields, "snd_una", line),
                                 _number(fields, "snd_wnd", line), self.ca_state)
        except ProbeFormatError:
            self._unparsed(line)
            return None
        self.samples += 1
        return sample

    def _unparsed(self, line: str) -> None:
        self.unparsed_lines += 1
        if not self.first_unparsed:
            self.first_unparsed = line.strip()[:300]


class ProbeCsvWriter:
    """Writes tcp-probe.csv and tcp-cong-state.csv as lines arrive (nothing kept in memory)."""

    def __init__(self, out_dir: Path) -> None:
        self.parser = TraceLineParser()
        self._probe: IO[str] = open(out_dir / PROBE_FILE, "w", newline="")
        self._states: IO[str] = open(out_dir / CONG_STATE_FILE, "w", newline="")
        self._probe_csv = csv.writer(self._probe)
        self._states_csv = csv.writer(self._states)
        self._probe_csv.writerow(PROBE_COLUMNS)
        self._states_csv.writerow(CONG_STATE_COLUMNS)
        self._tail = ""

    def feed_text(self, text: str) -> None:
        """A chunk of trace_pipe output; a line split across chunks is joined."""
        lines = (self._tail + text).split("\n")
        self._tail = lines.pop()
        self.feed_lines(lines)

    def feed_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            event = self.parser.feed(line)
            if isinstance(event, ProbeSample):
                self._probe_csv.writerow(event.row())
            elif isinstance(event, CongStateChange):
                self._states_csv.writerow([f"{event.time_s:.6f}", str(event.ca_state)])

    def close(self) -> None:
        if self._tail:
            self.feed_lines([self._tail])
            self._tail = ""
        self._probe.close()
        self._states.close()
