"""Each recovery through the real kernel, per ACK, against the model of the RFC's single loss.

RFC 9937's single-loss example on a real path (tests/integration/helpers/
loss_path.py): Reno, IW10, the first window of 10 segments delivered and
acknowledged (slow start takes cwnd to 20), then the first segment of the
second window (original segment 11) dropped by the tc dropper. So cwnd =
FlightSize = 20 when the dupACKs start, ssthresh = 10 (Reno's cwnd / 2),
RecoverFS = prior_cwnd = 20: the scenario of experiments/prr/recovery_model.py with
one segment lost in a window of 20.

The kernel's snd_cwnd comes from tcp:tcp_probe, which fires for every
incoming ACK *before* it is processed, so the cwnd after ACK k is the sample
of ACK k+1; recovery entry and exit come from tcp:tcp_cong_state_set. The
model's row for ACK k gives the window the sender needs on that ACK
(max(cwnd, pipe + sent): RFC 3517 sends its first retransmission whatever
pipe is, which the eBPF version does by raising cwnd to pipe + 1 for that
ACK). Every ACK from the first dupACK to ten after recovery ends must agree
within one segment; the recovery must end on the same ACK as in the model;
and the eBPF PRR must equal the kernel's own PRR ACK for ACK.

The same runs on Cubic (ssthresh = 717/1024 of cwnd: 14) are compared through
the ACK that ends recovery; after it Cubic's own growth function takes over,
which the model does not have.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from runkinds.switched_path.recovery_episodes import RecoveryEpisode, recovery_episodes
from experiments.prr.recovery_model import (AckRow, PrrVariant, Recovery, Scenario, SsthreshRule,
                                            simulate)
from analysis.tcp_probe import read_probe
from analysis.window_sanity import INFINITE_SSTHRESH
from core.tcp_probe_format import CA_OPEN, CA_RECOVERY
from core.paths import ProjectPaths
from kernel.congestion_control import CongestionControlResolver
from kernel.recovery import RecoveryRequest, provide_recovery
from kernel.tcp_probe_recorder import TcpProbeSetup
from tests.integration.helpers.loss_path import SERVER_PORT, loss_path

DROPPED_ORIGINAL = 11  # the first segment of the second window (IW10)
TRANSFER_BYTES = 300_000
ACKS_AFTER_EXIT = 10
CUBIC_BETA = 717 / 1024
MODEL = {
    "prr-kernel": (Recovery.PRR, PrrVariant.LINUX),
    "prr-bpf": (Recovery.PRR, PrrVariant.LINUX),
    "rate-halving": (Recovery.RATE_HALVING, PrrVariant.LINUX),
    "rfc3517": (Recovery.RFC6675, PrrVariant.LINUX),
}


@dataclass(frozen=True)
class KernelEpisode:
    cwnd_after: list[int]  # cwnd after ACK k (k = 1 is the first dupACK), from tcp_probe
    exit_ack: int  # the ACK (same numbering) on which the state went back to Open
    cwnd_before_loss: int
    cc_used: str
    episodes: list[RecoveryEpisode]  # from tcp_cong_state_set and tcp_probe
    max_cwnd: int  # over the whole trace
    max_ssthresh: int  # over the whole trace, TCP_INFINITE_SSTHRESH left out


def _paths() -> ProjectPaths:
    paths = ProjectPaths()
    for name in ["segment_dropper"] + [f"{r}_{b}.args{n}" for r in ("rh", "3517", "prr")
                                       for b in ("reno", "cubic") for n in (2, 4)]:
        obj = paths.build_dir / "bpf" / f"{name}.bpf.o"
        if not obj.is_file():
            pytest.fail(f"{obj} is not built: build native/ (cmake -S native -B build/native "
                        "&& make -C build/native)")
    for tool in ("tc", "bpftool", "ethtool"):
        if shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin") is None:
            pytest.fail(f"{tool} is not installed")
    return paths


# The scenario needs cwnd 20 at the loss: one ACK per segment of the first window. On a
# loaded machine the receiver can now and then acknowledge two segments at once, so slow
# start ends at 19; that run does not set up the scenario and is redone (the tests below
# still fail when no attempt reaches it).
SCENARIO_ATTEMPTS = 3


def _run_kernel(recovery: str, base: str, tmp_path: Path) -> KernelEpisode:
    for attempt in range(1, SCENARIO_ATTEMPTS + 1):
        episode = _run_kernel_once(recovery, base, tmp_path / f"attempt{attempt}")
        if episode.cwnd_before_loss == 20:
            break
    return episode


def _run_kernel_once(recovery: str, base: str, tmp_path: Path) -> KernelEpisode:
    paths = _paths()
    out = tmp_path / f"{recovery}-{base}"
    out.mkdir(parents=True)
    resolver = CongestionControlResolver.for_project(paths)
    with provide_recovery(resolver, RecoveryRequest(base, recovery)) as served:
        with loss_path(paths.build_dir / "bpf" / "segment_dropper.bpf.o") as path:
            path.dropper.attach(SERVER_PORT, [DROPPED_ORIGINAL])
            recorder = TcpProbeSetup(tmp_path / "probe-state").start(out, SERVER_PORT)
            try:
                used = path.run_transfer(served.kernel_name, recorder.client_port,
                                         TRANSFER_BYTES)
            finally:
                facts = recorder.finish()
            stats = path.dropper.stats()
        served.check_socket(used, "getsockopt(TCP_CONGESTION)")
    assert facts["status"] == "recorded" and facts["lost_events"] == 0, facts
    # Exactly the planned segment was dropped, and it was retransmitted once.
    assert stats.dropped == 1 and stats.dropped_rel_seq[0] == (DROPPED_ORIGINAL - 1) * 1448, \
        stats
    assert stats.retransmissions == 1, stats
    probe = read_probe(out)
    assert probe is not None
    states = probe.ca_state
    in_recovery = np.flatnonzero(states == CA_RECOVERY)
    assert in_recovery.size, f"{recovery}: the kernel never entered Recovery"
    # Samples fire before the ACK is processed: the first sample in Recovery belongs to the
    # ACK after the one that entered it (the third dupACK, ACK 3).
    entering = int(in_recovery[0]) - 1
    first_dupack = entering - 2
    una = probe.snd_una
    assert una[first_dupack] == una[entering + 1], \
        f"{recovery}: ACKs {first_dupack}..{entering} were not the dupACKs of one hole"
    reopened = np.flatnonzero((states == CA_OPEN) & (np.arange(len(states)) > entering))
    assert reopened.size, f"{recovery}: recovery never ended"
    exit_sample = int(reopened[0]) - 1  # the ACK whose processing left Recovery
    cwnd_after = [int(c) for c in probe.snd_cwnd[first_dupack + 1:]]
    finite = probe.ssthresh[probe.ssthresh != INFINITE_SSTHRESH]
    return KernelEpisode(cwnd_after, exit_sample - first_dupack + 1,
                         int(probe.snd_cwnd[first_dupack]), used, recovery_episodes(probe),
                         int(probe.snd_cwnd.max()), int(finite.max()) if finite.size else 0)


def _model(recovery: str, base: str, acks: int) -> list[AckRow]:
    kind, variant = MODEL[recovery]
    scenario = Scenario(window=20, lost=frozenset({0}), acks=acks,
                        ssthresh_rule=SsthreshRule.CWND,
                        cubic_beta=CUBIC_BETA if base == "cubic" else None)
    return simulate(kind, scenario, variant, base=base)


@pytest.fixture(scope="module")
def all_episodes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, KernelEpisode]]:
    tmp = tmp_path_factory.mktemp("recoveries")
    return {base: {recovery: _run_kernel(recovery, base, tmp) for recovery in MODEL}
            for base in ("reno", "cubic")}


@pytest.fixture
def episodes(all_episodes: dict[str, dict[str, KernelEpisode]]) -> dict[str, KernelEpisode]:
    return all_episodes["reno"]


@pytest.mark.parametrize("base", ["reno", "cubic"])
@pytest.mark.parametrize("recovery", list(MODEL))
def test_kernel_cwnd_follows_the_model_per_ack(
        all_episodes: dict[str, dict[str, KernelEpisode]], recovery: str, base: str) -> None:
    kernel = all_episodes[base][recovery]
    assert kernel.cwnd_before_loss == 20, \
        f"the scenario needs cwnd 20 at the loss; the kernel had {kernel.cwnd_before_loss}"
    after_exit = ACKS_AFTER_EXIT if base == "reno" else 0
    rows = _model(recovery, base, kernel.exit_ack + after_exit)
    model_exit = next(r.index for r in rows if r.index > 3 and not r.in_recovery)
    assert kernel.exit_ack == model_exit, \
        f"{recovery}: recovery ended on ACK {kernel.exit_ack}, the model on {model_exit}"
    compared = [(r.index, r.window_used, kernel.cwnd_after[r.index - 1]) for r in rows]
    report = " ".join(f"{k}:{m}/{c}" for k, m, c in compared)
    print(f"{recovery} on {base}, ACK:model/kernel cwnd: {report}")
    far = [(k, m, c) for k, m, c in compared if abs(m - c) > 1]
    assert not far, f"{recovery}: ACK:model/kernel beyond one segment at {far}; all: {report}"


@pytest.mark.parametrize("base", ["reno", "cubic"])
@pytest.mark.parametrize("recovery", list(MODEL))
def test_window_stays_within_ten_times_the_pre_loss_window(
        all_episodes: dict[str, dict[str, KernelEpisode]], recovery: str, base: str) -> None:
    # Regression: one eBPF RFC 3517 run entered recovery with ssthresh = cwnd = 2183148773
    # (docs/prr-recoveries.md, "An absurd window").
    kernel = all_episodes[base][recovery]
    bound = 10 * kernel.cwnd_before_loss
    assert kernel.max_cwnd < bound and kernel.max_ssthresh < bound, \
        (f"{recovery} on {base}: cwnd up to {kernel.max_cwnd}, ssthresh up to "
         f"{kernel.max_ssthresh}, pre-loss window {kernel.cwnd_before_loss}")


def test_bpf_prr_equals_the_kernels_prr(episodes: dict[str, KernelEpisode]) -> None:
    ours, kernels = episodes["prr-bpf"], episodes["prr-kernel"]
    assert ours.exit_ack == kernels.exit_ack
    span = ours.exit_ack + ACKS_AFTER_EXIT
    assert ours.cwnd_after[:span] == kernels.cwnd_after[:span]


def test_bpf_prr_equals_the_kernels_prr_on_cubic(
        all_episodes: dict[str, dict[str, KernelEpisode]]) -> None:
    ours, kernels = all_episodes["cubic"]["prr-bpf"], all_episodes["cubic"]["prr-kernel"]
    assert ours.exit_ack == kernels.exit_ack
    assert ours.cwnd_after[:ours.exit_ack] == kernels.cwnd_after[:ours.exit_ack]


def test_each_recovery_ran_under_its_own_name(episodes: dict[str, KernelEpisode]) -> None:
    assert {r: e.cc_used for r, e in episodes.items()} == {
        "prr-kernel": "reno", "prr-bpf": "bpf_prr_reno", "rate-halving": "bpf_rh_reno",
        "rfc3517": "bpf_3517_reno"}


def test_the_recoveries_differ_where_the_rfc_says(episodes: dict[str, KernelEpisode]) -> None:
    """Not a tautology of the per-ACK test: the three shapes must be told apart."""
    prr, rh, r3517 = (episodes[r].cwnd_after for r in ("prr-kernel", "rate-halving", "rfc3517"))
    # RFC 3517 drops to ssthresh on the ACK after the retransmission; PRR and rate halving
    # come down one segment per two ACKs.
    assert r3517[3] == 10 and prr[3] > 15 and rh[3] > 15


@pytest.mark.parametrize("base, ssthresh", [("reno", 10), ("cubic", 14)])
def test_one_recovery_episode_from_20_to_ssthresh(
        all_episodes: dict[str, dict[str, KernelEpisode]], base: str, ssthresh: int) -> None:
    """The kernel's own view: one Recovery episode, entered at cwnd 20, left at ssthresh."""
    for recovery, kernel in all_episodes[base].items():
        [episode] = kernel.episodes
        assert episode.end_state == CA_OPEN, recovery
        assert (episode.cwnd_before, episode.ssthresh) == (20, ssthresh), recovery
        assert episode.cwnd_at_exit == ssthresh, recovery
        assert episode.acks == kernel.exit_ack - 3, recovery  # ACKs 4 .. exit
