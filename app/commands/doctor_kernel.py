"""What this kernel can run of each experiment, for `repro doctor`.

Each experiment's matrices (quick and full) name the TCP variants and the fast
recoveries it asks for; this says, per experiment, which provider would serve
each variant here (built in, a module, netrepro's eBPF, or nothing, and why
not) and whether the eBPF recoveries can be registered: the shape of the
kernel's cong_control read from its BTF, struct_ops, bpftool and the objects
of that shape. It only reads: nothing is loaded or registered.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from core.runspec import RunSpec
from experiments.base import Experiment
from kernel.cong_control_shape import STRUCT_OPS_VALUE, BtfShapeError
from kernel.congestion_control import CongestionControlResolver
from kernel.recovery import RECOVERY_DESCRIPTIONS, RecoveryRequest
from schemes.registry import TCP_VARIANTS
from schemes.tcp_aqm import AQM_SCHEMES

PROVIDER_WORDS = {"builtin": "built in", "module": "kernel module", "ebpf": "eBPF struct_ops"}


@dataclass(frozen=True)
class Capability:
    """One experiment against this kernel: what it can run, and the missing pieces."""

    experiment: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass
class KernelNeeds:
    """The kernel-side pieces an experiment's runs ask for."""

    tcp: set[str] = field(default_factory=set)  # TCP variants, e.g. {"cubic", "vegas"}
    recoveries: set[tuple[str, str]] = field(default_factory=set)  # (base cc, recovery)


def kernel_needs(specs: Iterable[RunSpec]) -> KernelNeeds:
    needs = KernelNeeds()
    for spec in specs:
        cc = AQM_SCHEMES[spec.scheme].cc if spec.scheme in AQM_SCHEMES else spec.scheme
        if cc not in TCP_VARIANTS:
            continue  # UDP schemes: nothing of the kernel's congestion control
        needs.tcp.add(cc)
        recovery = spec.param("recovery") or spec.option("recovery")
        if recovery is not None:
            needs.recoveries.add((cc, str(recovery)))
    return needs


def experiment_capabilities(experiments: Iterable[Experiment],
                            resolver: CongestionControlResolver) -> list[Capability]:
    """One Capability per experiment, in the given order."""
    result = []
    for experiment in experiments:
        try:
            needs = kernel_needs([*experiment.matrix(quick=True),
                                  *experiment.matrix(quick=False)])
        except Exception as e:  # a matrix that cannot be planned must not hide the others
            result.append(Capability(experiment.name, False, f"cannot plan its runs: {e}"))
            continue
        result.append(_capability(experiment.name, needs, resolver))
    return result


def _capability(name: str, needs: KernelNeeds,
                resolver: CongestionControlResolver) -> Capability:
    if not needs.tcp:
        return Capability(name, True, "needs nothing of the kernel's TCP congestion control "
                          "(datagram schemes only)")
    parts, fixes, ok = [], [], True
    providers = resolver.available_variants(sorted(needs.tcp))
    served: dict[str, list[str]] = {}
    for variant in sorted(needs.tcp):
        provider = providers[variant]
        why = resolver.why_unavailable(variant) if provider is None else ""
        if provider == "ebpf" and _struct_ops(resolver) is False:
            provider, why = None, (f"eBPF: the kernel's BTF has no {STRUCT_OPS_VALUE}, so it "
                                   "cannot take a TCP congestion control from eBPF")
        if provider is None:
            ok = False
            parts.append(f"TCP {variant} unavailable ({why})")
            fixes.append(f"load the module tcp_{variant}, or build native/ and run as root so "
                         f"netrepro's eBPF {variant} can be registered")
        else:
            served.setdefault(PROVIDER_WORDS[provider], []).append(variant)
    parts[:0] = [f"TCP {', '.join(variants)}: {how}" for how, variants in served.items()]
    recovery_part, recovery_fix = _recoveries(needs.recoveries, resolver)
    if recovery_part:
        parts.append(recovery_part)
    if recovery_fix:
        ok = False
        fixes.append(recovery_fix)
    return Capability(name, ok, "; ".join(parts), "; ".join(fixes))


def _struct_ops(resolver: CongestionControlResolver) -> bool | None:
    """Whether the kernel's BTF offers struct_ops for TCP congestion controls (None: it
    cannot be read here; the eBPF variants' own checks then say why)."""
    try:
        return resolver.kernel_cc_btf().struct_ops
    except BtfShapeError:
        return None


def _recoveries(requested: set[tuple[str, str]], resolver: CongestionControlResolver
                ) -> tuple[str, str]:
    """(what the recoveries get here, the fix when the eBPF ones cannot be registered)."""
    ebpf = sorted({RecoveryRequest(cc, r).variant for cc, r in requested
                   if RecoveryRequest(cc, r).impl == "ebpf"})
    kernel = sorted({r for _, r in requested if RecoveryRequest("cubic", r).impl == "kernel"})
    words = [f"{r}: {RECOVERY_DESCRIPTIONS[r].split(',')[0]}" for r in kernel]
    if not ebpf:
        return ("recoveries " + "; ".join(words)) if words else "", ""
    names = sorted({r for _, r in requested} - set(kernel))
    try:
        kernel_btf = resolver.kernel_cc_btf()
    except BtfShapeError as e:
        return (f"recoveries {', '.join(names)} unavailable: {e}",
                "the eBPF recoveries need bpftool, the kernel's BTF (CONFIG_DEBUG_INFO_BTF) "
                "and a cong_control of 2 or 4 arguments")
    problems = sorted({p for variant in ebpf for p in resolver.recovery_problems(variant)})
    what = f"recoveries {', '.join(names)}: {kernel_btf.shape.label}, eBPF struct_ops"
    if problems:
        return (f"{what} unavailable: " + "; ".join(problems),
                "build native/ (both shapes are built) and run as root")
    return "; ".join([what, *words]), ""
