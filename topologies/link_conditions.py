"""What a run asks of its link beyond the rate, delay and queue: random loss and rate steps.

RunSpec options (part of the run's id), the same for any kind of run whose link is a
TraceLink, checked before anything is built (a refusal names the flag: `repro one` exits 2):

- `loss`: random loss of the data direction, a probability in [0, 1) per packet, drawn
  after the queue (as mahimahi's mm-loss), so the queue log still shows every packet the
  link served and marks the lost ones;
- `ack_loss`: the same for the ACK direction;
- `loss_seed`: the run's seed (default 1); the emulator is seeded with
  `loss_seed * 1_000_000 + trial`, so trials draw different losses and a rerun of the same
  spec draws the same ones (recorded in meta.json and in the emulator's stats);
- `rate_steps`: "20:20,40:10": the data direction's fixed rate becomes 20 Mbit/s 20 s after
  the link's start and 10 Mbit/s at 40 s (seconds, whole milliseconds; each step before the
  run's end; rates above 0). Each stretch is an exact fixed-rate schedule of its own
  (native/link/README.md, "Rate steps").

Kept apart from TraceLink so planning a run needs no Mininet.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import UsageError
from core.runspec import RunSpec
from core.settings import Setting, SettingError
from topologies.link_side import FIXED_RATE_PREFIX

SEED_STRIDE = 1_000_000  # trials per seed: the emulator's seed is loss_seed * this + trial
MAX_SEED = 10**12


def parse_rate_steps(text: str) -> tuple[tuple[int, float], ...]:
    """"20:20,40:10" as ((20000, 20.0), (40000, 10.0)): (ms after the start, Mbit/s); raises
    ValueError saying what is wrong."""
    steps: list[tuple[int, float]] = []
    for entry in text.split(","):
        at_s, sep, rate_text = entry.partition(":")
        try:
            at_ms_float = float(at_s) * 1000
            rate = float(rate_text)
        except ValueError:
            raise ValueError(f"{entry!r} is not SECONDS:MBPS (e.g. 20:20,40:10)") from None
        if not sep or not at_ms_float > 0 or abs(at_ms_float - round(at_ms_float)) > 1e-6:
            raise ValueError(f"{entry!r}: the time must be above 0 s, in whole milliseconds")
        if not rate > 0 or rate != rate or rate == float("inf"):
            raise ValueError(f"{entry!r}: the rate must be above 0 Mbit/s")
        at_ms = int(round(at_ms_float))
        if steps and at_ms <= steps[-1][0]:
            raise ValueError(f"{entry!r}: the steps' times must increase")
        steps.append((at_ms, rate))
    return tuple(steps)


LOSS = Setting("loss", float, "random loss of the data direction after the queue, a "
               "probability per packet (0.01 is 1%)", minimum=0.0, maximum=1.0,
               high_open=True)
ACK_LOSS = Setting("ack_loss", float, "random loss of the ACK direction after its queue",
                   minimum=0.0, maximum=1.0, high_open=True)
LOSS_SEED = Setting("loss_seed", int, "the random loss's seed (with the trial)", minimum=0,
                    maximum=MAX_SEED)
RATE_STEPS = Setting("rate_steps", str, "the data direction's fixed rate changes at given "
                     "times: SECONDS:MBPS[,SECONDS:MBPS...] after the start",
                     validate=parse_rate_steps)
SETTINGS = (LOSS, ACK_LOSS, LOSS_SEED, RATE_STEPS)
OPTIONS = tuple(s.name for s in SETTINGS)


@dataclass(frozen=True)
class LinkConditions:
    """The checked conditions of one run's link."""

    data_loss: float | None = None
    ack_loss: float | None = None
    loss_seed: int = 1
    trial: int = 1
    rate_steps: tuple[tuple[int, float], ...] = ()  # (ms after the start, Mbit/s)

    @property
    def emulator_seed(self) -> int:
        return self.loss_seed * SEED_STRIDE + self.trial

    @property
    def lossy(self) -> bool:
        return self.data_loss is not None or self.ack_loss is not None

    def link_words(self) -> dict[str, Any]:
        """TraceLink's keywords for the losses (the steps go into the data side)."""
        return {"data_loss": self.data_loss, "ack_loss": self.ack_loss,
                "loss_seed": self.emulator_seed}

    def describe(self) -> dict[str, Any]:
        """For meta.json."""
        return {"data_loss": self.data_loss, "ack_loss": self.ack_loss,
                "loss_where": "after the queue (as mahimahi's mm-loss)",
                "loss_seed": self.loss_seed, "trial": self.trial,
                "emulator_seed": self.emulator_seed if self.lossy else None,
                "rate_steps_ms_mbps": [list(s) for s in self.rate_steps]}


def link_conditions(spec: RunSpec, span_ms: int | None) -> LinkConditions:
    """The run's link conditions from its options, checked against its spec: a UsageError
    naming the flag for a loss outside [0, 1), steps on a trace, a step at or after the run's
    end (`span_ms`), a rate of 0."""
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        value = spec.option(setting.name)
        if value is not None:
            try:
                values[setting.name] = setting.check(value)
            except SettingError as e:
                raise UsageError(str(e)) from None
    steps = parse_rate_steps(values["rate_steps"]) if "rate_steps" in values else ()
    if steps and not spec.data_trace.startswith(FIXED_RATE_PREFIX):
        raise UsageError(f"{RATE_STEPS.flag}: rate steps change a fixed rate (a data trace "
                         f"rate:<Mbit/s>), not the trace {spec.data_trace!r}")
    if steps and span_ms is not None:
        late = [at for at, _ in steps if at >= span_ms]
        if late:
            raise UsageError(f"{RATE_STEPS.flag}: the step at {late[0] / 1000:g} s is not "
                             f"before the run's end ({span_ms / 1000:g} s)")
    return LinkConditions(data_loss=values.get("loss"), ack_loss=values.get("ack_loss"),
                          loss_seed=int(values.get("loss_seed", 1)), trial=spec.trial,
                          rate_steps=steps)
