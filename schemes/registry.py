"""Scheme names -> scheme objects. Adding a scheme family is one entry here."""
from __future__ import annotations

from dataclasses import dataclass

from core.paths import ProjectPaths
from core.runspec import RunSpec
from schemes.base import Scheme, SchemeUnavailable
from schemes.congestion_control import CongestionControlResolver
from schemes.grump import CONTROLLERS, TAKES_WINDOW, GrumpScheme
from schemes.sprout import MODELS as SPROUT_MODELS
from schemes.sprout import SproutScheme
from schemes.tcp import TcpScheme
from schemes.tcp_probe_recorder import TcpProbeSetup

TCP_VARIANTS = ("cubic", "reno", "bbr", "vegas", "bic", "hybla")


class UnknownScheme(ValueError):
    pass


@dataclass(frozen=True)
class SchemeInfo:
    name: str
    family: str
    description: str


def known_schemes() -> list[SchemeInfo]:
    infos = [SchemeInfo(v, "tcp", f"Linux TCP {v} via iperf3 -C (kernel, module or eBPF)")
             for v in TCP_VARIANTS]
    infos += [SchemeInfo(c, "grump", f"datagrump controller '{c}'") for c in CONTROLLERS]
    infos += [SchemeInfo("sprout", "sprout", "Sprout (stochastic forecasts), our implementation"),
              SchemeInfo("sprout-ewma", "sprout", "Sprout-EWMA, our implementation")]
    return infos


def make_scheme(spec: RunSpec, paths: ProjectPaths) -> Scheme:
    name = spec.scheme
    if name in TCP_VARIANTS:
        resolver = CongestionControlResolver(state_dir=paths.state_dir / "cc",
                                             bpf_dir=paths.build_dir / "bpf")
        return TcpScheme(name, resolver, impl=spec.param("cc_impl", "auto"),
                         probe=TcpProbeSetup(paths.state_dir / "tcp-probe"))
    if name in CONTROLLERS:
        window = spec.param("window")
        if name == "fixed-window" and window is None:
            raise SchemeUnavailable("fixed-window needs a window: pass --window N")
        if window is not None and name not in TAKES_WINDOW:
            raise SchemeUnavailable(f"{name} sets its own window; --window applies only to "
                                    + ", ".join(TAKES_WINDOW))
        return GrumpScheme(name, paths, window=window)
    if name in SPROUT_MODELS:
        confidence = spec.param("confidence")
        return SproutScheme(name, paths) if confidence is None else SproutScheme(
            name, paths, confidence=float(confidence))
    raise UnknownScheme(f"unknown scheme {name!r}; known: "
                        + ", ".join(i.name for i in known_schemes()))
