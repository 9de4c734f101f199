"""A finished PRR run made by hand: both captures, a tcp_probe recording, meta.json.

The flow is `pcap_builder.loss_run({2, 3})`: IW10, originals 2 and 3 lost,
seven SACKed dupACKs, both retransmitted at 0.150 s, two new segments at
0.180 s, the final ACK at 0.250 s. The kernel's recording (on the monotonic
clock, MONO_AHEAD_S ahead of the captures' clock) enters Recovery at 0.1055 s
with cwnd 10 and ssthresh 7, and leaves at 0.2505 s; the receiver's reply
at 0.300 s is the sample after the exit.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.runspec import RunSpec
from core.tcp_probe_format import CONG_STATE_COLUMNS, PROBE_COLUMNS
from tests.unit.pcap_builder import MSS, loss_run

MONO_AHEAD_S = 1000.0
PLAN = (2, 3)
# (wall time, cwnd, ssthresh, state)
SAMPLES = [(0.100, 10, 2147483647, 0), (0.103, 10, 2147483647, 1),
           (0.104, 10, 2147483647, 1), (0.105, 10, 2147483647, 1),
           (0.106, 9, 7, 3), (0.107, 8, 7, 3), (0.108, 8, 7, 3), (0.109, 7, 7, 3),
           (0.250, 7, 7, 3), (0.300, 7, 7, 0)]
STATES = [(0.1025, 1), (0.1055, 3), (0.2505, 0)]


def write_fake_run(run_dir: Path, spec: RunSpec | None = None, receiver_loses: set[str] | None
                   = None, controller_log: list[int] | None = None) -> dict[str, Any]:
    """Write the artifacts into run_dir; return the meta dict (also written as meta.json)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    c = loss_run(set(PLAN))
    c.write(run_dir / "sender.pcap")
    lost = {f"o{n}" for n in PLAN} if receiver_loses is None else receiver_loses
    c.write(run_dir / "receiver.pcap", skip_tags=lost)
    with open(run_dir / "tcp-probe.csv", "w") as f:
        f.write(",".join(PROBE_COLUMNS) + "\n")
        for t, cwnd, ss, state in SAMPLES:
            f.write(f"{t + MONO_AHEAD_S:.6f},{cwnd},{ss},40000,0,0,65535,{state}\n")
    with open(run_dir / "tcp-cong-state.csv", "w") as f:
        f.write(",".join(CONG_STATE_COLUMNS) + "\n")
        for t, state in STATES:
            f.write(f"{t + MONO_AHEAD_S:.6f},{state}\n")
    meta: dict[str, Any] = {
        "drop_plan": {"name": "2-3", "segments": list(PLAN)},
        "clock": {"realtime_minus_monotonic_s": -MONO_AHEAD_S},
        "captures": {"sender": {"dropped_by_kernel": 0}, "receiver": {"dropped_by_kernel": 0}},
        "controller": {"name": "os-ken", "dropped_segments": list(PLAN) if controller_log is None
                       else controller_log, "plan_problems": [], "added_latency_ms": 0.4},
        "topology": {"datapath": "userspace (netdev)"},
        "provider": {"cc_provider": "builtin"},
        "sysctls": {"net.ipv4.tcp_recovery": "1"},
        "verification": {"server_port": 5001, "bytes_requested": 12 * MSS,
                         "tcp_info": {"total_retrans": 2, "snd_cwnd": 7,
                                      "snd_ssthresh": 7}}}
    if spec is not None:
        meta["spec"] = spec.to_dict()
        (run_dir / "spec.json").write_text(json.dumps(spec.to_dict()))
    (run_dir / "meta.json").write_text(json.dumps(meta))
    return meta
