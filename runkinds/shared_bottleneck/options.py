"""A shared-bottleneck run's options, checked against its spec; planning, measuring and the
metrics read them alike (no Mininet here).

Required: flows (N), rtt_ms (the round trip: the spec's delay_ms is rtt_ms // 2), marking
(emulator or red), warmup_s. Optional:

- `k`, `buffer`: the queue's marking threshold or its size in packets again, so the run's
  label names it (checked against the queue);
- `host_rtts`: "80,93,107,120": that many sender hosts, each with its own round trip (the
  emulator's delay for its packets), the flows spread over them in turn (flow i on host
  (i - 1) mod H + 1); rtt_ms is then their mean, rounded. Without it every flow has a
  sender host of its own and the path's rtt_ms;
- `start_spread_s`: each flow starts at its own moment, drawn uniformly in [0, spread]
  from a generator seeded by `seed` (default 1) and the trial, and recorded; without it
  the flows start one after the other as fast as they can;
- `start_interval_s`: flow i starts (i - 1) x interval after the first, in order (staggered
  starts, as a paper's figure of flows joining one by one; not with start_spread_s);
- `socket_sample_ms`: each flow's sender samples its sockets every that many ms
  (kernel/socket_samples.py: tcp_info and the congestion control's own state);
- `cpu_placement`: True gives the bottleneck's emulator a CPU of its own and steers the
  hosts' received frames off it (topologies/cpu_placement.py), never under an eBPF
  congestion control (its ssthresh then came back as a stale kernel word). Off by default:
  it is a measured choice per experiment (docs/benchmarks.md, "The emulator's CPU");
- `one_segment_packets`: True makes TCP at every sender build one-segment packets
  (kernel/segments.py), so a sender sends what each ACK opens at once instead of waiting to
  send a TSO-sized burst. Off by default: measured, it removes most of the senders' quiet
  milliseconds but costs the emulator's precision under loss-based flows (docs/dctcp.md,
  "The senders' bursts").
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from core.errors import UsageError
from core.queue_spec import QueueSpecError, parse_queue
from core.runspec import RunSpec
from kernel.socket_samples import check_interval
from topologies.link_side import FIXED_RATE_PREFIX

NAME = "shared-bottleneck"
MARKINGS = ("emulator", "red")
OPTIONS = ("flows", "rtt_ms", "marking", "warmup_s")
OPTIONAL = ("k", "buffer", "host_rtts", "start_spread_s", "seed", "start_interval_s",
            "socket_sample_ms", "cpu_placement", "one_segment_packets")
MAX_FLOWS = 200  # iperf3 pairs on one receiver, ports FIRST_PORT.. (schemes/tcp_flows.py)
MAX_HOSTS = 99  # two digits in the senders' names keep interface names within 15 bytes
MAX_SPREAD_S = 60.0
# The link serves this much longer than each flow runs: the clients start one after the
# other (tens of ms each with an ECN route's set-up), and each must end on its own, not be cut off.
SERVE_MARGIN_S = 3.0
SERVE_MARGIN_PER_FLOW_S = 0.1
# After the margin, a client still running is stopped (the link serves nothing more).
STOP_AFTER_S = 1.0
# Set-up and teardown per sender (namespaces, veth pairs, static ARP, iperf3 pairs:
# measured 6 s to build 40 senders on the 2-core VM under load), beyond the runner's
# per-run overhead.
SETUP_PER_HOST_S = 0.25
SETUP_PER_FLOW_S = 0.05  # an iperf3 pair


def serve_margin_s(flows: int, spread_s: float = 0.0) -> float:
    return SERVE_MARGIN_S + SERVE_MARGIN_PER_FLOW_S * flows + spread_s


@dataclass(frozen=True)
class Layout:
    """Which sender host each flow leaves from, and each host's round trip (ms)."""

    host_of_flow: tuple[int, ...]  # 1-based, one per flow
    host_rtts_ms: tuple[int, ...]  # one per host

    @property
    def hosts(self) -> int:
        return len(self.host_rtts_ms)


def layout(options: dict[str, Any]) -> Layout:
    flows, rtt = int(options["flows"]), int(options["rtt_ms"])
    text = options.get("host_rtts")
    if text is None:
        return Layout(tuple(range(1, flows + 1)), (rtt,) * flows)
    rtts = parse_host_rtts(str(text))
    return Layout(tuple((i % len(rtts)) + 1 for i in range(flows)), rtts)


def parse_host_rtts(text: str) -> tuple[int, ...]:
    """"80,93,107,120" as whole milliseconds (UsageError naming what is wrong)."""
    try:
        rtts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"{NAME}: host_rtts={text!r}: whole milliseconds separated by "
                         "commas, e.g. 80,93,107,120") from None
    if not 1 <= len(rtts) <= MAX_HOSTS or any(r < 2 for r in rtts):
        raise UsageError(f"{NAME}: host_rtts={text!r}: 1 to {MAX_HOSTS} round trips of at "
                         "least 2 ms")
    return rtts


def start_offsets_s(options: dict[str, Any], trial: int) -> tuple[float, ...]:
    """Each flow's start after the first moment (s), drawn once per (seed, trial); all 0
    without a spread."""
    flows = int(options["flows"])
    interval = float(options.get("start_interval_s") or 0.0)
    if interval:
        return tuple(round(i * interval, 3) for i in range(flows))
    spread = float(options.get("start_spread_s") or 0.0)
    if spread == 0:
        return (0.0,) * flows
    rng = random.Random(f"shared-bottleneck-starts:{options.get('seed', 1)}:{trial}")
    return tuple(round(rng.uniform(0.0, spread), 3) for _ in range(flows))


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
    if "host_rtts" in o:
        rtts = parse_host_rtts(str(o["host_rtts"]))
        if len(rtts) > flows:
            raise UsageError(f"{NAME}: host_rtts={o['host_rtts']!r} names {len(rtts)} hosts "
                             f"for {flows} flow(s): at most one host per flow")
        if round(sum(rtts) / len(rtts)) != rtt:
            raise UsageError(f"{NAME}: rtt_ms={rtt} is not the hosts' mean round trip "
                             f"({sum(rtts) / len(rtts):g} ms from host_rtts)")
    elif flows > MAX_HOSTS:
        raise UsageError(f"{NAME}: flows={flows}: more than {MAX_HOSTS} flows need host_rtts "
                         "(each flow has a host of its own without it)")
    spread = o.get("start_spread_s", 0.0)
    if not isinstance(spread, (int, float)) or not 0 <= spread <= MAX_SPREAD_S:
        raise UsageError(f"{NAME}: start_spread_s={spread!r} must be 0..{MAX_SPREAD_S:g} s")
    interval = o.get("start_interval_s", 0.0)
    if not isinstance(interval, (int, float)) or isinstance(interval, bool) or \
            interval < 0 or not interval * (flows - 1) <= MAX_SPREAD_S:
        raise UsageError(f"{NAME}: start_interval_s={interval!r} must be >= 0 with the last "
                         f"flow starting within {MAX_SPREAD_S:g} s")
    if interval and spread:
        raise UsageError(f"{NAME}: give start_interval_s (staggered) or start_spread_s "
                         "(random), not both")
    spread = max(spread, interval * (flows - 1))
    if "socket_sample_ms" in o:
        try:
            check_interval(o["socket_sample_ms"])
        except ValueError as e:
            raise UsageError(f"{NAME}: {e}") from None
    if not isinstance(o.get("cpu_placement", False), bool):
        raise UsageError(f"{NAME}: cpu_placement={o['cpu_placement']!r} must be true or false")
    if not isinstance(o.get("one_segment_packets", False), bool):
        raise UsageError(f"{NAME}: one_segment_packets={o['one_segment_packets']!r} must be "
                         "true or false")
    if not isinstance(o.get("seed", 1), int):
        raise UsageError(f"{NAME}: seed={o.get('seed')!r} must be a whole number")
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
    if spec.duration_s is None or spec.duration_s <= o["warmup_s"] + spread:
        raise UsageError(f"{NAME}: the flows need a duration longer than the warm-up "
                         f"({o['warmup_s']} s) and the spread of their starts ({spread} s), "
                         f"not {spec.duration_s}")
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
    if "buffer" in o and o["buffer"] != queue.packets:
        raise UsageError(f"{NAME}: the option buffer={o['buffer']!r} disagrees with the "
                         f"queue {spec.queue!r}")
    if "k" in o and o["k"] != queue.mark_threshold:
        raise UsageError(f"{NAME}: the option k={o['k']!r} disagrees with the queue "
                         f"{spec.queue!r}")
    return dict(o, rate_mbps=rate)
