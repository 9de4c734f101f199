"""The window check (analysis/window_sanity.py) on every flow of a TCP run over the trace path.

A TCP run records tcp_probe for its sender's data socket (tcp-probe.csv) and, when it loads
both directions (iperf3 --bidir), for the reverse flow's sender too (reverse/tcp-probe.csv;
schemes/tcp.py). Each recorded flow is checked on its own: its MSS, the initial window and
the congestion control's ceiling give its bound. One flow over the bound makes the whole run
invalid, with that flow's reason.

- MSS: the flow's socket as `ss -tin` sampled it (ss-sample.txt, ss-sample-reverse.txt:
  `mss:`), else iperf3's own (the client's `tcp_mss_default`, the forward flow only), else
  None (window_sanity's smallest MSS: a looser bound, never a tighter one).
- Initial window: the route's initcwnd when the run's topology records one (meta.json
  `topology.initcwnd`), else Linux's TCP_INIT_CWND, 10: the trace path sets no initcwnd.
- Ceiling: window_sanity.CC_CEILINGS for the requested variant (Hybla's cwnd clamp).

Metrics (metrics.json of a TCP run):

    window_valid    False: a flow's window was absurd; True: every flow the run had was
                    recorded and sane; None: some flow was not recorded (nothing to check)
    window_verdict  "ok", or the reasons of the flows over the bound
    window_flows    {"forward": "ok" | reason | "not recorded: ...", "reverse": ...}
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.tcp_probe import read_probe
from analysis.window_sanity import INITIAL_WINDOW, WindowVerdict, ceiling_of, check_windows
from core.run_span import both_directions
from core.runspec import RunSpec
from core.errors import RunInvalid
from core.artifacts import IPERF_PORT, REVERSE_DIR
from core.tcp_probe_format import PROBE_FILE
from core.ss_output import detail_lines

FORWARD, REVERSE = "forward", "reverse"
OK = "ok"
_MSS = re.compile(r"\bmss:(\d+)")


@dataclass(frozen=True)
class FlowCheck:
    flow: str  # FORWARD or REVERSE
    verdict: WindowVerdict | None  # None: the flow has no probe trace
    missing: str = ""  # why there is none

    def text(self) -> str:
        if self.verdict is None:
            return f"not recorded: {self.missing}"
        return self.verdict.reason(f"{self.flow} flow") or OK


def _probe_status(meta: dict[str, Any], key: str) -> str:
    facts = (meta.get("verification") or {}).get(key) or {}
    status = facts.get("status", "unknown")
    return f"{status} ({facts['reason']})" if facts.get("reason") else str(status)


def ss_mss(text: str, local_port: int | None, peer_port: int | None = None) -> int | None:
    """The `mss:` of the connection between these ports in `ss -tin` output (None: absent)."""
    if local_port is None:
        return None
    for local, peer, line in detail_lines(text):
        if local != local_port or (peer_port is not None and peer != peer_port):
            continue
        found = _MSS.search(line)
        if found and int(found.group(1)) > 0:
            return int(found.group(1))
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _iperf_mss(run_dir: Path) -> int | None:
    try:
        mss = int(json.loads(_read(run_dir / "iperf3-client.stdout"))["start"]["tcp_mss_default"])
    except (ValueError, KeyError, TypeError):
        return None
    return mss if mss > 0 else None


def flow_mss(run_dir: Path, meta: dict[str, Any], flow: str) -> int | None:
    """The MSS the flow's sender used (see the module's notes), None when unknown."""
    verification = meta.get("verification") or {}
    if flow == FORWARD:
        port = (verification.get("tcp_probe") or {}).get("client_port")
        return ss_mss(_read(run_dir / "ss-sample.txt"), port) or _iperf_mss(run_dir)
    peer = (verification.get("tcp_probe_reverse") or {}).get("client_port")
    if peer is None:
        return None
    return ss_mss(_read(run_dir / "ss-sample-reverse.txt"), IPERF_PORT, peer)


def check_flows(run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> list[FlowCheck]:
    """The verdict on each flow the run had (the reverse one only when it loaded both ways)."""
    verification = meta.get("verification") or {}
    initial = int((meta.get("topology") or {}).get("initcwnd") or INITIAL_WINDOW)
    ceiling = ceiling_of(verification.get("cc_requested"))
    flows = [(FORWARD, run_dir, "tcp_probe")]
    if both_directions(spec):
        flows.append((REVERSE, run_dir / REVERSE_DIR, "tcp_probe_reverse"))
    checks = []
    for flow, folder, key in flows:
        probe = read_probe(folder) if (folder / PROBE_FILE).is_file() else None
        if probe is None or len(probe) == 0:
            why = "empty trace" if probe is not None else "no " + PROBE_FILE
            checks.append(FlowCheck(flow, None, f"{why}; tcp_probe {_probe_status(meta, key)}"))
            continue
        checks.append(FlowCheck(flow, check_windows(probe, flow_mss(run_dir, meta, flow),
                                                    initial_window=initial, ceiling=ceiling)))
    return checks


def window_metrics(checks: list[FlowCheck]) -> dict[str, Any]:
    """window_valid, window_verdict and window_flows (see the module's notes)."""
    bad = [c for c in checks if c.verdict is not None and not c.verdict.valid]
    unchecked = any(c.verdict is None for c in checks)
    valid: bool | None = False if bad else (None if unchecked else True)
    return {"window_valid": valid,
            "window_verdict": "; ".join(c.text() for c in bad) if bad
            else (OK if valid else None),
            "window_flows": {c.flow: c.text() for c in checks}}


def tcp_window_metrics(run_dir: Path, spec: RunSpec, meta: dict[str, Any]) -> dict[str, Any]:
    return window_metrics(check_flows(run_dir, spec, meta))


def check_tcp_windows(metrics: dict[str, Any]) -> None:
    """RunInvalid when a run's metrics say a flow's kernel window was absurd (called once
    they are computed, as the run ends; metrics without the verdict pass)."""
    if metrics.get("window_valid") is False:
        raise RunInvalid(metrics["window_verdict"])
