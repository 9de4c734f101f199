"""prr-heavy-loss's run options through the real executor: sender settings applied in the
sender's namespace only, and the receiver's window held by the tc/BPF cap."""
from __future__ import annotations

import json

from app.executor import execute
from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.traces import TraceSet
from experiments.prr.heavy_loss import PrrHeavyLoss, variant_of


def _spec(variant: str, recovery: str):
    return next(s for s in PrrHeavyLoss(None).matrix(quick=False)
                if s.option("variant") == variant and s.option("recovery") == recovery
                and s.trial == 1 and variant_of(s) is not None)


def test_sender_settings_reach_the_sender_only(paths: ProjectPaths, traces: TraceSet,
                                               store: ExperimentStore) -> None:
    outcome = execute(_spec("reordering-1", "prr-kernel"), store, paths, traces)
    assert outcome.ok, outcome.reason
    sysctls = json.loads((outcome.path / "sysctls.json").read_text())
    assert sysctls["sender"]["net.ipv4.tcp_reordering"] == "1"
    assert sysctls["receiver"]["net.ipv4.tcp_reordering"] == "3"
    m = outcome.metrics
    assert m is not None and m["drops_as_planned"] is True
    # One SACKed segment is enough: recovery begins on the first ACK after the handshake.
    assert m["recovery_trigger"] == "ack" and m["entry_ack"] == 1


def test_the_receivers_window_is_held(paths: ProjectPaths, traces: TraceSet,
                                      store: ExperimentStore) -> None:
    outcome = execute(_spec("rwnd-10", "rate-halving"), store, paths, traces)
    assert outcome.ok, outcome.reason
    meta = json.loads((outcome.path / "meta.json").read_text())
    cap = meta["window_cap"]
    assert cap["failed"] == 0 and cap["capped"] > 0 and cap["largest"] > 10 * 1448
    sysctls = json.loads((outcome.path / "sysctls.json").read_text())
    assert sysctls["receiver"]["net.ipv4.tcp_window_scaling"] == "0"
    m = outcome.metrics
    assert m is not None and m["drops_as_planned"] is True
    assert m["rwnd_segments_before_recovery"] == 10  # what the sender was offered
    assert m["cwnd_min_recovery"] == 1  # nothing but retransmissions to send: the collapse
