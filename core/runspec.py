"""RunSpec: the frozen description of one run, and its id."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from core.code_identity import run_code


@dataclass(frozen=True)
class RunSpec:
    # The experiment that asked for the run: recorded, but not part of what is measured, so
    # it is left out of equality and of the id (two experiments asking alike share one run).
    experiment: str = field(compare=False)
    scheme: str
    data_trace: str
    ack_trace: str
    delay_ms: int = 20
    queue: str = "infinite"
    duration_s: float | None = None  # None means the whole data trace once (`--once`)
    trial: int = 1
    # Scheme parameters as sorted (key, value) pairs so the spec stays hashable.
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    # Run options beyond the scheme's (a one-way mode, a warm-up skip, a controller, a drop
    # pattern...), sorted pairs like params: part of the run's id, so a change is a new run.
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    @property
    def once(self) -> bool:
        return self.duration_s is None

    def param(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["params"] = dict(self.params)
        d["options"] = dict(self.options)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RunSpec":
        values = dict(d)
        values["params"] = tuple(sorted(dict(values.get("params", {})).items()))
        values["options"] = tuple(sorted(dict(values.get("options", {})).items()))
        return cls(**values)

    def run_id(self) -> str:
        """Hash of what is measured and of the code that measures it: the code this run
        executes, found from its imports (core/code_identity.py), and no other.

        The experiment that asked for the run is left out: two experiments asking for the
        same run get the same id, so the run can be done once and shared.
        """
        measured = {k: v for k, v in self.to_dict().items() if k != "experiment"}
        blob = json.dumps({"spec": measured, "code": run_code(self).version}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]

    def label(self) -> str:
        """A human-readable name: scheme, parameters, options, traces, trial."""
        parts = [self.scheme]
        parts += [f"{k}{v}" for k, v in self.params]
        parts += [f"{k}{v}" for k, v in self.options]
        parts.append(_short_trace(self.data_trace))
        parts.append(f"t{self.trial}")
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", "-".join(str(p) for p in parts))

    def dirname(self) -> str:
        return f"{self.label()}-{self.run_id()}"


def make_params(**kwargs: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in kwargs.items() if v is not None))


def _short_trace(trace: str) -> str:
    return trace.rsplit("/", 1)[-1]
