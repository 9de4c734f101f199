"""A shared-bottleneck run's options, checked against its spec; planning, measuring and the
metrics read them alike (no Mininet here)."""
from __future__ import annotations

from typing import Any

from core.errors import UsageError
from core.queue_spec import QueueSpecError, parse_queue
from core.runspec import RunSpec
from topologies.link_side import FIXED_RATE_PREFIX

NAME = "shared-bottleneck"
MARKINGS = ("emulator", "red")
OPTIONS = ("flows", "rtt_ms", "marking", "warmup_s")
MAX_FLOWS = 99
# The link serves this much longer than each flow runs: the clients start one after the
# other (tens of ms each with an ECN route's set-up), and each must end on its own, not be cut off.
SERVE_MARGIN_S = 3.0
SERVE_MARGIN_PER_FLOW_S = 0.1
# After the margin, a client still running is stopped (the link serves nothing more).
STOP_AFTER_S = 1.0
# Set-up and teardown per sender (namespaces, veth pairs, static ARP, iperf3 pairs:
# measured 6 s to build 40 senders on the 2-core VM under load), beyond the runner's
# per-run overhead.
SETUP_PER_FLOW_S = 0.25
# More slots than any pool has: the run takes the whole pool and goes alone.
WHOLE_POOL = 1 << 16


def serve_margin_s(flows: int) -> float:
    return SERVE_MARGIN_S + SERVE_MARGIN_PER_FLOW_S * flows


def bottleneck_options(spec: RunSpec) -> dict[str, Any]:
    """The run's options, checked against its spec (UsageError naming the disagreement)."""
    o = dict(spec.options)
    missing = [k for k in OPTIONS if k not in o]
    if missing:
        raise UsageError(f"a {NAME} run needs the options {', '.join(missing)}")
    flows, rtt = o["flows"], o["rtt_ms"]
    if not isinstance(flows, int) or not 1 <= flows <= MAX_FLOWS:
        raise UsageError(f"{NAME}: flows={flows!r} must be 1..{MAX_FLOWS}")
    if not isinstance(rtt, int) or rtt < 0:
        raise UsageError(f"{NAME}: rtt_ms={rtt!r} must be a whole number of ms >= 0")
    if spec.delay_ms != rtt // 2:
        raise UsageError(f"{NAME}: the spec's delay ({spec.delay_ms} ms) is not rtt_ms // 2 "
                         f"({rtt // 2} ms; the ACKs carry the rest of the {rtt} ms)")
    if o["marking"] not in MARKINGS:
        raise UsageError(f"{NAME}: marking={o['marking']!r} is not one of "
                         f"{', '.join(MARKINGS)}")
    rates = {spec.data_trace, spec.ack_trace}
    if len(rates) != 1 or not spec.data_trace.startswith(FIXED_RATE_PREFIX):
        raise UsageError(f"{NAME}: both directions must be the same fixed rate "
                         f"(rate:<Mbit/s>), not {spec.data_trace} / {spec.ack_trace}")
    try:
        rate = float(spec.data_trace[len(FIXED_RATE_PREFIX):])
    except ValueError:
        rate = -1.0
    if not rate > 0:
        raise UsageError(f"{NAME}: bad rate {spec.data_trace!r}")
    if spec.duration_s is None or spec.duration_s <= o["warmup_s"]:
        raise UsageError(f"{NAME}: the flows need a duration longer than the warm-up "
                         f"({o['warmup_s']} s), not {spec.duration_s}")
    try:
        queue = parse_queue(spec.queue)
    except QueueSpecError as e:
        raise UsageError(str(e)) from e
    if o["marking"] == "red" and not queue.marks_ecn:
        raise UsageError(f"{NAME}: marking=red takes its threshold and buffer from an "
                         f"ecn:k=K,packets=N queue, not {spec.queue!r}")
    if queue.packets is None:
        raise UsageError(f"{NAME}: the port's buffer must be counted in packets "
                         f"(droptail:packets=N or ecn:k=K,packets=N), not {spec.queue!r}")
    if "k" in o and o["k"] != queue.mark_threshold:
        raise UsageError(f"{NAME}: the option k={o['k']!r} disagrees with the queue "
                         f"{spec.queue!r}")
    return dict(o, rate_mbps=rate)
