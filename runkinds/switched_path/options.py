"""A switched-path run's options, checked against its spec; planning, measuring and the
metrics read them alike (no Mininet here)."""
from __future__ import annotations

from typing import Any

from core.errors import UsageError
from core.runspec import RunSpec
from runkinds.switched_path.config import parse_sender_sysctls

TRANSFER_TIMEOUT_S = 60.0  # a transfer of 64 KB takes well under a second without timeouts
POLL_S = 0.2
PINGS = 3
# The plan's expectation of one run. Alone a run takes ~2.7 s (pings, controller,
# transfer), but it is set-up work on the CPU, not waiting: side by side runs share the two
# cores. Set so the runner's plan (sum / jobs) matches what was measured: the 12 quick runs
# took 31-48 s at --jobs 10 on the 2-core VM.
RUN_EXPECTED_S = 25.0
OPTIONS = ("pattern", "size", "recovery", "controller", "bottleneck", "rtt")
# Options a run may add (absent: the path as it always was): `sysctls`, the sender's own
# loss-detection settings ("tcp_recovery=5,tcp_reordering=1"), and `rwnd`, the most segments
# of the path's MSS the receiver ever advertises (a cap: kernel/window_cap.py).
OPTIONAL = ("sysctls", "rwnd")
PATH_MSS = 1448  # 1500-byte MTU, IPv4, TCP with timestamps
# The captures on both hosts (measure.py writes them, transfer_run.py reads them).
SENDER_PCAP = "sender.pcap"
RECEIVER_PCAP = "receiver.pcap"


def switched_path_options(spec: RunSpec) -> dict[str, Any]:
    """A switched-path run's options, checked against the spec's path fields derived from
    them."""
    o = dict(spec.options)
    missing = [k for k in OPTIONS if k not in o]
    if missing:
        raise UsageError(f"a switched-path run needs the options {', '.join(missing)}")
    try:
        path_extras(o)
    except ValueError as e:
        raise UsageError(f"a switched-path run's options: {e}") from e
    rate = f"rate:{float(o['bottleneck']):g}"
    if spec.data_trace != rate or spec.ack_trace != rate or spec.delay_ms * 2 != int(o["rtt"]):
        raise UsageError(f"the spec's path ({spec.data_trace}, {spec.ack_trace}, "
                         f"{spec.delay_ms} ms each way) disagrees with its options "
                         f"(bottleneck {o['bottleneck']}, rtt {o['rtt']})")
    return o


def path_extras(options: dict[str, Any]) -> dict[str, Any]:
    """SwitchedPathConfig's sender_sysctls and receiver_window from a run's optional options."""
    rwnd = options.get("rwnd")
    if rwnd is not None and (not isinstance(rwnd, int) or not 1 <= rwnd <= 45):
        raise ValueError(f"rwnd {rwnd!r}: a whole number of segments from 1 to 45")
    return {"sender_sysctls": parse_sender_sysctls(str(options.get("sysctls") or "")),
            "receiver_window": None if rwnd is None else rwnd * PATH_MSS}
