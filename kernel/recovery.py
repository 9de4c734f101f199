"""Which code runs a TCP sender's fast recovery: a (cc, recovery) request onto a congestion control.

The kernel's own recovery is PRR (RFC 6937, Linux >= 3.2); it runs with the
plain congestion control (`reno`, `cubic`). The older recoveries, and PRR
again as an independent check of the kernel's, come from netrepro's eBPF
struct_ops (native/bpf/recovery.bpf.c), each registered under its own name:

    recovery        cc=reno          cc=cubic          served by
    prr-kernel      reno             cubic             the kernel (tcp_cwnd_reduction)
    rate-halving    bpf_rh_reno      bpf_rh_cubic      eBPF: Linux <= 3.1 rate halving
    rfc3517         bpf_3517_reno    bpf_3517_cubic    eBPF: RFC 3517 conservative recovery
    prr-bpf         bpf_prr_reno     bpf_prr_cubic     eBPF: PRR as Linux does it, rewritten

Use:

    resolver = CongestionControlResolver.for_project(paths)
    with provide_recovery(resolver, RecoveryRequest("cubic", "rate-halving")) as served:
        sock.setsockopt(IPPROTO_TCP, TCP_CONGESTION, served.kernel_name.encode())
        ...
        served.check_socket(getsockopt_value, "getsockopt(TCP_CONGESTION)")
        meta.update(served.facts())

`check_socket` raises `RecoveryMismatch` when a socket runs anything but the
provided congestion control, so a run can never be plotted under the wrong
recovery. Nothing falls back: an unknown recovery or base CC raises
`ValueError`, an unavailable implementation `CcUnavailable` with the reason.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from kernel.congestion_control import (EBPF_PREFIX, RECOVERY_SOURCE, CcResolution,
                                       CongestionControlResolver)

# recovery name -> prefix of its eBPF variant (None: the kernel's own PRR).
RECOVERIES: dict[str, str | None] = {
    "prr-kernel": None,
    "rate-halving": "rh",
    "rfc3517": "3517",
    "prr-bpf": "prr",
}
RECOVERY_BASES = ("reno", "cubic")
RECOVERY_DESCRIPTIONS = {
    "prr-kernel": "the kernel's own PRR (tcp_cwnd_reduction), with the plain congestion control",
    "rate-halving": "Linux <= 3.1 rate halving (tcp_cwnd_down / tcp_complete_cwr), eBPF",
    "rfc3517": ("RFC 3517 conservative SACK recovery (cwnd = ssthresh, send while pipe < cwnd), "
                "eBPF"),
    "prr-bpf": "PRR (RFC 6937, Linux's variant) rewritten in eBPF, to check the kernel's",
}


class RecoveryMismatch(RuntimeError):
    """A socket ran another congestion control than the one that provides the recovery."""


@dataclass(frozen=True)
class RecoveryRequest:
    cc: str  # the base congestion control: its ssthresh and its growth outside recovery
    recovery: str  # a key of RECOVERIES

    def __post_init__(self) -> None:
        if self.cc not in RECOVERY_BASES:
            raise ValueError(f"recoveries run on {' or '.join(RECOVERY_BASES)}, not {self.cc!r}")
        if self.recovery not in RECOVERIES:
            raise ValueError(f"unknown recovery {self.recovery!r}; known: "
                             + ", ".join(RECOVERIES))

    @property
    def variant(self) -> str:
        """What the resolver is asked for: `cubic`, or an eBPF variant such as `rh_cubic`."""
        prefix = RECOVERIES[self.recovery]
        return self.cc if prefix is None else f"{prefix}_{self.cc}"

    @property
    def kernel_name(self) -> str:
        """The name sockets must use (TCP_CONGESTION)."""
        prefix = RECOVERIES[self.recovery]
        return self.cc if prefix is None else EBPF_PREFIX + self.variant

    @property
    def impl(self) -> str:
        """The resolver's impl: the kernel for its own PRR, eBPF for everything else."""
        return "kernel" if RECOVERIES[self.recovery] is None else "ebpf"


@dataclass(frozen=True)
class ServedRecovery:
    request: RecoveryRequest
    resolution: CcResolution

    @property
    def kernel_name(self) -> str:
        return self.resolution.kernel_name

    def facts(self) -> dict[str, Any]:
        """What a run records: the request, the implementation, its source hash and, for
        eBPF, the shape of cong_control it was built for (None for the kernel's PRR)."""
        r = self.resolution
        shape = r.shape
        return {"recovery": self.request.recovery, "recovery_cc": self.request.cc,
                "recovery_impl": ("kernel" if self.request.impl == "kernel"
                                  else f"ebpf native/bpf/{RECOVERY_SOURCE}"),
                "recovery_detail": RECOVERY_DESCRIPTIONS[self.request.recovery],
                "recovery_cong_control": shape.label if shape else None,
                "recovery_cong_control_args": shape.args if shape else None,
                "recovery_cong_control_signature": shape.signature if shape else None,
                "recovery_cwnd_stamp_written": shape.cwnd_stamp_writable if shape else None,
                "cc_requested": r.requested, "cc_kernel_name": r.kernel_name,
                "cc_provider": r.provider, "cc_source_sha256": r.source_sha256,
                "cc_detail": r.detail}

    def check_socket(self, reported: str | None, where: str) -> None:
        """Raise RecoveryMismatch unless the socket reported the provided congestion control."""
        if reported != self.kernel_name:
            raise RecoveryMismatch(
                f"recovery {self.request.recovery} on {self.request.cc} needs the socket to "
                f"run {self.kernel_name}, but {where} reported {reported!r}")


@contextmanager
def provide_recovery(resolver: CongestionControlResolver,
                     request: RecoveryRequest) -> Iterator[ServedRecovery]:
    """Provide the congestion control that implements `request` for the with-block."""
    with resolver.resolve(request.variant, request.impl) as resolution:
        if resolution.kernel_name != request.kernel_name:
            raise RecoveryMismatch(f"asked for {request.kernel_name}, the resolver provided "
                                   f"{resolution.kernel_name}")
        if (resolution.shape is None) != (request.impl == "kernel"):
            raise RecoveryMismatch(f"{request.kernel_name} was provided without the shape of "
                                   "cong_control it was built for")
        yield ServedRecovery(request, resolution)
