"""Scheme names -> scheme objects. Adding a scheme family is one entry here."""
from __future__ import annotations

from dataclasses import dataclass

from core.paths import ProjectPaths
from core.run_span import both_directions
from core.runspec import RunSpec
from schemes.base import Scheme, SchemeUnavailable
from schemes.congestion_control import CongestionControlResolver
from schemes.grump import CONTROLLERS, TAKES_WINDOW, GrumpScheme
from schemes.sprout import MODELS as SPROUT_MODELS
from schemes.sprout import SproutScheme
from schemes.tcp import TcpScheme
from schemes.tcp_aqm import AQM_SCHEMES, AqmTcpScheme
from schemes.tcp_probe_recorder import TcpProbeSetup

TCP_VARIANTS = ("cubic", "reno", "bbr", "vegas", "bic", "hybla")


class UnknownScheme(ValueError):
    pass


class SchemeParameterError(ValueError):
    """A parameter the scheme does not take: refused, never silently ignored."""


@dataclass(frozen=True)
class SchemeInfo:
    name: str
    family: str
    description: str


def known_schemes() -> list[SchemeInfo]:
    infos = [SchemeInfo(v, "tcp", f"Linux TCP {v} via iperf3 -C (kernel, module or eBPF)")
             for v in TCP_VARIANTS]
    infos += [SchemeInfo(n, "tcp", a.description) for n, a in AQM_SCHEMES.items()]
    infos += [SchemeInfo(c, "grump", f"datagrump controller '{c}'") for c in CONTROLLERS]
    infos += [SchemeInfo("sprout", "sprout", "Sprout (stochastic forecasts), our implementation"),
              SchemeInfo("sprout-ewma", "sprout", "Sprout-EWMA, our implementation")]
    return infos


def accepted_params(name: str) -> frozenset[str]:
    """The RunSpec parameters scheme `name` reads."""
    if name in TCP_VARIANTS or name in AQM_SCHEMES:
        return frozenset({"cc_impl"})
    if name in CONTROLLERS:
        return frozenset({"window"}) if name in TAKES_WINDOW else frozenset()
    if name in SPROUT_MODELS:
        return frozenset({"confidence"})
    raise UnknownScheme(f"unknown scheme {name!r}; known: "
                        + ", ".join(i.name for i in known_schemes()))


# How each parameter is given on the command line, for the error message.
PARAM_FLAGS = {"cc_impl": "--cc-impl", "window": "--window", "confidence": "--confidence"}


def check_params(spec: RunSpec) -> None:
    """Refuse parameters the scheme would ignore (they would also change the run's id)."""
    accepted = accepted_params(spec.scheme)
    extra = sorted(k for k, _ in spec.params if k not in accepted)
    if extra:
        takes = ", ".join(PARAM_FLAGS.get(k, k) for k in sorted(accepted)) or "no parameters"
        raise SchemeParameterError(
            f"{spec.scheme} does not take {', '.join(PARAM_FLAGS.get(k, k) for k in extra)}; "
            f"it takes {takes}")


def make_scheme(spec: RunSpec, paths: ProjectPaths) -> Scheme:
    name = spec.scheme
    check_params(spec)
    if name in TCP_VARIANTS:
        resolver = CongestionControlResolver.for_project(paths)
        return TcpScheme(name, resolver, impl=spec.param("cc_impl", "auto"),
                         probe=TcpProbeSetup(paths.state_dir / "tcp-probe"),
                         both_directions=both_directions(spec))
    if name in AQM_SCHEMES:
        return AqmTcpScheme(AQM_SCHEMES[name], name, spec, paths,
                            CongestionControlResolver.for_project(paths),
                            probe=TcpProbeSetup(paths.state_dir / "tcp-probe"))
    if name in CONTROLLERS:
        window = spec.param("window")
        if name == "fixed-window" and window is None:
            raise SchemeParameterError("fixed-window needs a window: pass --window N")
        return GrumpScheme(name, paths, window=window)
    if name in SPROUT_MODELS:
        confidence = spec.param("confidence")
        return SproutScheme(name, paths, both_directions=both_directions(spec)) \
            if confidence is None else SproutScheme(name, paths, confidence=float(confidence),
                                                    both_directions=both_directions(spec))
    raise UnknownScheme(f"unknown scheme {name!r}; known: "
                        + ", ".join(i.name for i in known_schemes()))
