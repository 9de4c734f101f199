"""Whether a run's end hosts kept time: the senders' and receivers' own lateness.

The emulator's lateness says whether the link delivered on time (analysis/fidelity.py); it
says nothing of the ends. A window-limited sender that answers ACKs late loses throughput
while the link stays punctual. Each run's meta.json carries what the ends recorded:

- our datagram programs (grump, Sprout, the contest's student sender): the stats JSON of each
  (`verification.sender` / `.receiver`) holds `host_timing`, from native/util/host_timing.hh:
  `arrival_to_send_us`, from a datagram's kernel receive stamp to the send it allowed (ACK to
  data at a sender, data to ACK at the grump receiver, forecast to data at Sprout's sending
  ends), and `wakeup_lateness_us`, poll wake-ups against the timeouts they asked for;
- TCP runs: the kernel reacts, not the process, so `verification.tcp_probe.stack_delay`
  holds, per host, the time from a segment entering the host's stack to its processing
  (kernel/stack_delay.py), which is where a TCP sender's reaction can wait.

The verdict, fixed before any run was measured with it: the end hosts were late when any of
these measures has a p99 above 2 ms over at least 100 samples.

- 2 ms is the emulator's own limit (MAX_LATENESS_P99_US): an end host that lets a packet out
  2 ms late delays it exactly as a link that delivers it 2 ms late does, so the same bound
  keeps the two verdicts comparable. It is a tenth of the paths' 20-ms one-way delay.
- 100 samples: the p99 of fewer is the largest of a handful of values (a fixed-window
  sender's few timeouts in a whole run), one stall, not a habit.

A run whose ends were late is kept, like one whose emulator was late; `./repro verify`, the
report and each claim's run count say how many there were.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from analysis.fidelity import MAX_LATENESS_P99_US

MAX_HOST_P99_US = MAX_LATENESS_P99_US
MIN_SAMPLES = 100

REACTION, WAKEUP = "reaction", "wakeup"


@dataclass(frozen=True)
class HostMeasure:
    """One measure of one end: its percentiles in microseconds."""

    role: str  # sender, receiver
    kind: str  # REACTION or WAKEUP
    what: str  # "ACK -> data", "stack delay", ...
    p50_us: int
    p99_us: int
    max_us: int
    count: int

    @property
    def judged(self) -> bool:
        return self.count >= MIN_SAMPLES

    @property
    def late(self) -> bool:
        return self.judged and self.p99_us > MAX_HOST_P99_US

    def label(self) -> str:
        return f"{self.role} {self.what}"


def _measure(role: str, kind: str, what: str, figures: Any) -> HostMeasure | None:
    if not isinstance(figures, Mapping) or figures.get("count") is None:
        return None
    return HostMeasure(role, kind, what, int(figures.get("p50") or 0),
                       int(figures.get("p99") or 0), int(figures.get("max") or 0),
                       int(figures["count"]))


def host_measures(meta: Mapping[str, Any]) -> list[HostMeasure]:
    """Every end-host measure a run's meta.json holds (none for runs from before they were
    recorded, and for runs whose hosts record none)."""
    return list(_measures(meta.get("verification") or {}))


def _measures(verification: Mapping[str, Any]) -> Iterator[HostMeasure]:
    for role in ("sender", "receiver"):
        timing = (verification.get(role) or {}).get("host_timing") \
            if isinstance(verification.get(role), Mapping) else None
        if isinstance(timing, Mapping):
            pair = str(timing.get("arrival_to_send") or "arrival -> send")
            reaction = _measure(role, REACTION, pair, timing.get("arrival_to_send_us"))
            wakeup = _measure(role, WAKEUP, "wake-up", timing.get("wakeup_lateness_us"))
            yield from (m for m in (reaction, wakeup) if m is not None)
    stack = (verification.get("tcp_probe") or {}).get("stack_delay") or {}
    if stack.get("status") == "recorded":
        for role in ("sender", "receiver"):
            m = _measure(role, REACTION, "stack delay",
                         (stack.get(role) or {}).get("stack_delay_us"))
            if m is not None:
                yield m


def _worst(measures: list[HostMeasure], kind: str) -> HostMeasure | None:
    judged = [m for m in measures if m.kind == kind and m.judged]
    if not judged:
        return None
    return max(judged, key=lambda m: m.p99_us)


def host_timing_ok(measures: list[HostMeasure]) -> bool | None:
    """False when any judged measure's p99 is over the limit; None when none is judged."""
    if not any(m.judged for m in measures):
        return None
    return not any(m.late for m in measures)


def host_timing_metrics(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The run's end-host timing as metrics: the worst judged reaction and wake-up p99 (with
    which end and measure they are), and the verdict."""
    measures = host_measures(meta)
    reaction, wakeup = _worst(measures, REACTION), _worst(measures, WAKEUP)
    late = [m.label() for m in measures if m.late]
    return {"host_reaction_p99_us": reaction.p99_us if reaction else None,
            "host_reaction_what": reaction.label() if reaction else None,
            "host_wakeup_p99_us": wakeup.p99_us if wakeup else None,
            "host_wakeup_what": wakeup.label() if wakeup else None,
            "host_timing_ok": host_timing_ok(measures),
            "host_late": ", ".join(late) if late else None}


def hosts_late(metrics: Mapping[str, Any]) -> bool:
    """Whether a run's metrics say its end hosts were late (unknown is not late)."""
    return metrics.get("host_timing_ok") is False


def worst_host_p99_us(metrics: Mapping[str, Any]) -> int | None:
    """The larger of a run's judged reaction and wake-up p99, None when neither is known."""
    values = [metrics.get(k) for k in ("host_reaction_p99_us", "host_wakeup_p99_us")]
    known = [int(v) for v in values if v is not None]
    return max(known) if known else None
