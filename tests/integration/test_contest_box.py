"""Adversarial submissions: each attack is a real controller.hh/controller.cc pair
(tests/fixtures/contest/attacks/<attack>/), submitted with `repro contest submit` beside an
honest team's trial (tests/fixtures/contest/honest-window-12: a fixed window of 12 and a
marker string in a comment), all started at once so that the attacks run while the honest
trial does. Each test names what its attack attempts and checks what the attack itself
reported (its `ATTACK ...` lines in its sender's error output), what the box recorded, and
the machine afterwards: no process of any box user, no box mount, record, cgroup or file
left.

The honest trial must score beside the attackers as it does alone, within its own
run-to-run noise. Declared before any of these runs was looked at: the noise is the spread
|a1 - a2| of two trials alone; a trial beside attackers passes when its score is within
max(3 x that spread, 0.05) of their mean (0.05 in score is 5% in throughput/delay), and the
emulator's p99 lateness in its run stays under 2 ms.

One exception, added after a CI run whose honest emulator was late (p99 2.6 ms) beside the
1-GiB writer, while three reruns of that test on the same kind of machine were on time:
when the CPU probe saw a CPU withheld from its real-time thread over at least half of the
emulator's worst stall (analysis/cpu_probe.py), the batch runs again, once, and the second
must hold. A box's processes cannot run above the probe, so such a stall is the machine's
or the kernel's; a leak that an attacker causes comes back in the rerun and fails it.

Attacks share a batch only when what each achieves stays its own to tell: the ones that
reach for other teams, files or the network run together (each reports what it reached;
only the daemon can kill), the three compile-time ones together, and each attack on
resources (fork bomb, memory, space, UDP flood) alone beside its honest trial, so that an
honest trial that moved would name its cause. A 20-second cut of Verizon-LTE-short
("Tiny20") keeps each trial short and lasts past every attacker's start.

The later attacks (issue 29) are handed in the way a hostile student would: a controller.cc
that is a link to /etc/shadow, /proc/self/environ or /proc/kmsg, or a file whose size says 0
and whose reading gives 5 MiB (/proc/kallsyms bound on it, as a FUSE file would be), all
refused at intake beside one honest trial; a 60-MiB stderr line of terminal escapes; a flood
at the box's full speed; a user namespace; SysV shared memory and memfds; the keyrings,
under a session keyring of the runner's own holding a root key; and, with the box made to
believe no cgroup controller exists, the refusal to host and the memory attacks again with
--allow-without-cgroups. Beside each of these the honest trial must score as alone and be
on time at its emulator and its end hosts (analysis/host_timing.py), and the machine must
hold nothing of the attacker afterwards, keys included. In one run of this file on a 2-core
machine other work shared at the time, the honest end hosts were late (reaction p99 2.05 to
2.4 ms) beside the intake batch, whose attackers were all refused within 2 s and so ran
nothing beside it, as beside two of the older attacks, which do not check it: so a batch
whose honest end hosts were late runs again, once, and the second must hold. An attack that
makes them late does so again.

A CI machine shared with other work was late beside attacks that ran nothing heavy (the
user namespace, twice, with and without cgroups), in both runs of their batches, while the
same tests held on an idle machine. So a batch whose honest emulator or end hosts were late
runs again, once, whatever the CPU probe saw, and one late again is followed by a
control: the honest trial beside an honest neighbour, started right after. When that is
late as well, the machine was late without the attack, and the honest trial's timing is not
judged (printed with both measurements; its score still is). An attack that makes its
neighbour late while an honest neighbour does not is still caught: the box's flood at 1
Gbit/s was, every time (reaction p99 1.8 to 2.3 ms against 0.35 to 0.9 ms beside an honest
neighbour), and led to the 200-Mbit/s bucket (schemes/submission/box_egress.py).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from analysis.cpu_probe import cpus_were_missing
from core.paths import REPO_ROOT, ProjectPaths
from core.traces import TraceSet, load_trace
from schemes.submission.box_cgroup import ONLY_ENV, detect
from schemes.submission.box_egress import BURST_BYTES as EGRESS_BURST_BYTES, RATE_MBPS, RATE_SHOWN
from schemes.submission.box_keys import keys_of
from schemes.submission.box_procs import processes_of
from schemes.submission.box_users import BOXES_DIR, pool
from schemes.submission.intake import MAX_SOURCE_BYTES
from schemes.submission.limits import QUEUE_BYTES
from schemes.submission.output_cap import HEAD_BYTES, TAIL_BYTES
from schemes.submission.untrusted_text import REASON_CHARS

REPRO = str(REPO_ROOT / "repro")
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "contest"
ATTACKS = FIXTURES / "attacks"
HONEST = FIXTURES / "honest-window-12"
MARKER = "NETREPRO-HONEST-MARKER-5d41402a"
TRACE = "Tiny20"
CUT_MS = 20_000
NOISE_FACTOR, NOISE_FLOOR = 3.0, 0.05
LATENESS_P99_US = 2000
RUN_DISK_MIB = 128  # schemes/submission/limits.py run_limits: the box's writable space
BATCH_TIMEOUT_S = 600
KEY_GC_S = 5.0
BOARD_BYTES = 1 << 20  # "a board under 1 MB" (the 60-MiB line made it 377 MB)
# What no stored or shown text may hold: escape, bell, carriage return, right-to-left override.
ESCAPE_CHARACTERS = set("\x1b\x07\r\u202e")


@dataclass
class Env:
    traces: Path
    results: Path
    work: Path  # where the teams' folders are, outside the checkout
    honest: Path
    listener: socket.socket
    unix_listener: socket.socket
    flood_mbps: float
    root_ports: list[int]
    root_addresses: list[str]
    tmp_before: set[str] = field(default_factory=set)


@dataclass
class Outcome:
    team: str
    code: int
    result: dict[str, Any]
    stdout: str
    stderr: str
    took_s: float
    run_dir: Path | None
    attack: list[str]
    box: dict[str, Any]
    build_log: str
    # Why its timing is not judged: an honest trial beside an honest neighbour, started right
    # after, was late too (see _batch).
    timing_unjudged: str = ""

    @property
    def reason(self) -> str:
        return str(self.result.get("reason", ""))

    def line(self, prefix: str) -> str:
        found = [a for a in self.attack if a.startswith(prefix)]
        assert found, f"{self.team} reported no {prefix!r} line: {self.attack} {self.stderr}"
        return found[-1]


def _cut(traces: TraceSet, folder: Path) -> float:
    """Tiny20 (.down and .up); returns the .down's average rate in Mbit/s."""
    rate = 0.0
    for suffix in (".down", ".up"):
        times = [int(t) for t in load_trace(traces.resolve(f"Verizon-LTE-short{suffix}"))
                 if t <= CUT_MS]
        (folder / f"{TRACE}{suffix}").write_text("".join(f"{t}\n" for t in times))
        if suffix == ".down":
            rate = len(times) * 1500 * 8 / (CUT_MS / 1000) / 1e6
    return rate


def _root_addresses() -> list[str]:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                         check=True).stdout
    return sorted({m for m in re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out)
                   if not m.startswith("127.")})


def _listening_tcp_ports() -> list[int]:
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def _netrepro_tmp() -> set[str]:
    """What a box or a contest run could leave in the machine's /tmp: anything a box user
    owns, a link's own folder (netrepro-link-*), an attack's fill-*. Not every netrepro-*:
    other netrepro commands on a shared machine make theirs (a report's netrepro-compare-*
    appeared there during one run of this file)."""
    box_uids = {u.uid for u in pool()}
    found = set()
    for p in Path("/tmp").iterdir():
        try:
            owner = p.lstat().st_uid
        except FileNotFoundError:
            continue
        if owner in box_uids or p.name.startswith(("netrepro-link-", "fill-")):
            found.add(p.name)
    return found


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("box")
    (folder / "traces").mkdir()
    rate = _cut(TraceSet.for_project(REPO_ROOT), folder / "traces")
    honest = folder / "teams" / "honest"
    shutil.copytree(HONEST, honest)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("0.0.0.0", 8786))  # the Dask scheduler's port, when free
    except OSError:
        listener.bind(("0.0.0.0", 0))
    listener.listen(16)
    listener.setblocking(False)
    unix_listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix_path = folder / "listener.sock"
    unix_listener.bind(str(unix_path))
    unix_path.chmod(0o777)
    unix_listener.listen(16)
    unix_listener.setblocking(False)
    e = Env(folder / "traces", folder / "results", folder / "teams", honest, listener,
            unix_listener, 10 * rate, _listening_tcp_ports(), _root_addresses(),
            _netrepro_tmp())
    yield e
    listener.close()
    unix_listener.close()


@dataclass
class Team:
    """A team as it is handed in: its folder, and how its submit is started."""
    folder: Path
    environ: dict[str, str] = field(default_factory=dict)
    extra: tuple[str, ...] = ()
    preexec: Callable[[], None] | None = None


def _team(env: Env, attack: str) -> Path:
    """The attack's folder as a student would submit it, the test's paths written in."""
    folder = env.work / attack
    if not folder.exists():
        shutil.copytree(ATTACKS / attack, folder)
        paths = ProjectPaths()
        values = {"@RESULTS_DIR@": str(env.results), "@STATE_DIR@": str(paths.state_dir),
                  "@REPO_ROOT@": str(REPO_ROOT), "@HONEST_ORIGIN@": str(env.honest),
                  "@ROOT_ADDRESSES@": ",".join(env.root_addresses),
                  "@ROOT_PORTS@": ",".join(map(str, env.root_ports)),
                  "@FLOOD_MBPS@": f"{env.flood_mbps:.3f}"}
        body = (folder / "controller.cc").read_text()
        for key, value in values.items():
            body = body.replace(key, value)
        (folder / "controller.cc").write_text(body)
    return folder


def _start(env: Env, folder: Path, team: str, *extra: str, environ: dict[str, str] | None = None,
           preexec: Callable[[], None] | None = None) -> subprocess.Popen[str]:
    environment = dict(os.environ, NETREPRO_RESULTS=str(env.results),
                       NETREPRO_TRACES=str(env.traces), **(environ or {}))
    return subprocess.Popen([REPRO, "contest", "submit", str(folder), "--name", team,
                             "--trace", TRACE, "--json", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment,
                            preexec_fn=preexec)


def _outcome(env: Env, team: str, proc: subprocess.Popen[str], started: float) -> Outcome:
    out, err = proc.communicate(timeout=BATCH_TIMEOUT_S)
    took = time.monotonic() - started
    lines = out.strip().splitlines()
    result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    run_dir, attack, box = None, [], {}
    trials = result.get("trials") or []
    if trials and trials[0].get("run"):
        run_dir = env.results / "contest" / trials[0]["run"]
        stderr = run_dir / "grump-sender.stderr"
        if stderr.is_file():
            attack = [line[len("ATTACK "):] for line in stderr.read_text(errors="replace")
                      .splitlines() if line.startswith("ATTACK ")]
        meta = run_dir / "meta.json"
        if meta.is_file():
            box = (json.loads(meta.read_text()).get("provider") or {}).get("box", {})
    build_log = ""
    if result.get("submission_dir"):
        log = Path(result["submission_dir"]) / "build.log"
        build_log = log.read_text(errors="replace") if log.is_file() else ""
    return Outcome(team, proc.returncode, result, out, err, took, run_dir, attack, box,
                   build_log)


def _batch(env: Env, attacks: list[str] | dict[str, Team], honest: Team | None = None,
           hosts: bool = False) -> dict[str, Outcome]:
    """The attacks and one honest trial, all started at once; again, once, when the honest
    trial's emulator (or, with `hosts`, its end hosts) was late; and when it still was, a
    control: the honest trial beside an honest neighbour, right after. When the control is
    late too, the machine was, not the attack: the honest trial's timing is not judged (see
    the top). Attacks by name are their fixture's folders."""
    teams = attacks if isinstance(attacks, dict) else {a: Team(_team(env, a)) for a in attacks}
    honest = honest or Team(env.honest)
    batch = _started_together(env, teams, honest)
    why = _late(batch["honest"], hosts)
    if not why:
        return batch
    print(f"honest beside {sorted(teams)}: {why}; the batch runs again")
    _machine_clean(env)
    batch = _started_together(env, teams, honest)
    why = _late(batch["honest"], hosts)
    if not why:
        return batch
    _machine_clean(env)
    neighbour = Team(env.honest, environ=honest.environ, extra=honest.extra)
    control = _started_together(env, {"neighbour": neighbour}, honest)
    _machine_clean(env)
    control_why = _late(control["honest"], hosts)
    print(f"honest beside {sorted(teams)} late again ({why}); beside an honest neighbour "
          f"right after: {control_why or 'on time'}")
    if control_why:
        batch["honest"].timing_unjudged = (
            f"beside the attack: {why}; beside an honest neighbour right after: {control_why}")
    return batch


def _late(honest: Outcome, hosts: bool) -> str:
    """What was late in the honest trial: its emulator, or (`hosts`) its end hosts."""
    m = _metrics(honest)
    late = m.get("lateness_p99_us")
    if late is not None and late >= LATENESS_P99_US:
        return _cpu_withheld(honest) or f"emulator p99 lateness {late} us"
    return _hosts_late(honest) if hosts else ""


def _hosts_late(honest: Outcome) -> str:
    """What was late at the honest trial's end hosts, '' when nothing was."""
    m = _metrics(honest)
    if m.get("host_timing_ok") is not False:
        return ""
    return (f"end hosts late ({m.get('host_late')}: reaction p99 "
            f"{m.get('host_reaction_p99_us')} us, wake-up p99 {m.get('host_wakeup_p99_us')} us)")


def _started_together(env: Env, teams: dict[str, Team], honest: Team) -> dict[str, Outcome]:
    started = time.monotonic()
    procs = {name: _start(env, t.folder, name, "--trials", "1", "--force", *t.extra,
                          environ=t.environ, preexec=t.preexec) for name, t in teams.items()}
    procs["honest"] = _start(env, honest.folder, "honest", "--trials", "1", "--force",
                             *honest.extra, environ=honest.environ)
    return {team: _outcome(env, team, proc, started) for team, proc in procs.items()}


def _metrics(outcome: Outcome) -> dict[str, Any]:
    if outcome.run_dir is None or not (outcome.run_dir / "metrics.json").is_file():
        return {}
    return json.loads((outcome.run_dir / "metrics.json").read_text())


def _cpu_withheld(honest: Outcome) -> str:
    """Why the honest trial's late emulator was the machine's, '' when it was on time or
    the probe cannot say so."""
    m = _metrics(honest)
    late = m.get("lateness_p99_us")
    if late is None or late < LATENESS_P99_US:
        return ""
    if not cpus_were_missing(m.get("emulator_worst_stall_us"), m.get("cpu_held_during_it_us")):
        return ""
    return (f"emulator p99 lateness {late} us; its worst stall "
            f"{m['emulator_worst_stall_us']} us, a CPU withheld from the probe "
            f"{m['cpu_held_during_it_us']} us of it")


@pytest.fixture(scope="module")
def alone(env: Env) -> list[float]:
    started = time.monotonic()
    done = _outcome(env, "honest", _start(env, env.honest, "honest", "--trials", "2"), started)
    assert done.code == 0, done.stdout + done.stderr
    scores = [t["score"] for t in done.result["trials"]]
    assert len(scores) == 2 and all(isinstance(s, float) for s in scores), scores
    print(f"honest alone: scores {scores}, {done.took_s:.0f} s for both")
    return scores


def _honest_as_alone(batch: dict[str, Outcome], alone: list[float], hosts: bool = False) -> None:
    """The honest trial scored as alone and its emulator was on time; with `hosts`, its end
    hosts too (analysis/host_timing.py: no reaction or wake-up p99 over 2 ms)."""
    honest = batch["honest"]
    assert honest.code == 0, honest.stdout + honest.stderr
    mean = sum(alone) / len(alone)
    tolerance = max(NOISE_FACTOR * abs(alone[0] - alone[1]), NOISE_FLOOR)
    score = honest.result["score"]
    metrics = _metrics(honest)
    print(f"honest beside {sorted(set(batch) - {'honest'})}: score {score:.4f}, alone "
          f"{alone} (tolerance {tolerance:.4f}); emulator p99 lateness "
          f"{metrics.get('lateness_p99_us')} us; host reaction p99 "
          f"{metrics.get('host_reaction_p99_us')} us; {honest.took_s:.0f} s")
    assert abs(score - mean) <= tolerance, (score, alone, tolerance)
    assert metrics, honest.run_dir
    if honest.timing_unjudged:
        print(f"honest beside {sorted(set(batch) - {'honest'})}: timing not judged, the "
              f"machine was late without the attack ({honest.timing_unjudged})")
        return
    assert metrics["lateness_p99_us"] < LATENESS_P99_US, (
        metrics["lateness_p99_us"], {k: metrics.get(k) for k in (
            "emulator_worst_stall_us", "cpu_held_during_it_us", "cpu_stall_max_us")})
    if hosts:
        assert metrics.get("host_timing_ok") is not False, (
            metrics.get("host_late"), metrics.get("host_reaction_p99_us"),
            metrics.get("host_wakeup_p99_us"))


def _machine_clean(env: Env) -> None:
    """No process of any box user, no box mount, record, folder or cgroup, nothing left in
    the machine's /tmp, and the root namespace's listeners never reached."""
    for user in pool():
        assert processes_of(user.uid) == [], user.name
        deadline = time.monotonic() + KEY_GC_S  # invalidated keys go at the kernel's next pass
        while keys_of(user.uid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert keys_of(user.uid) == 0, f"{user.name} holds keys after its boxes closed"
    if BOXES_DIR.is_dir():
        left = [p.name for p in BOXES_DIR.iterdir() if not p.name.endswith(".lock")]
        assert left == [], left
    mountinfo = Path("/proc/self/mountinfo").read_text()
    assert str(BOXES_DIR) + "/" not in mountinfo
    for h in detect().hierarchies():
        assert list(h.parent().glob("netrepro-box-*")) == [], h.parent()
    assert _netrepro_tmp() - env.tmp_before == set()
    for listener in (env.listener, env.unix_listener):
        with pytest.raises(BlockingIOError):
            listener.accept()


def _number(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, (pattern, text)
    return int(found.group(1))


REACH = ["reads-other-teams-sources", "setsid-daemon-kills-everything",
         "connects-to-root-namespace-ports", "writes-to-results-var-and-checkout",
         "reads-etc-shadow-and-root", "raises-its-own-priority"]
COMPILE = ["includes-etc-shadow", "includes-proc-self-environ", "template-instantiation-bomb"]


@pytest.fixture(scope="module")
def reach(env: Env, alone: list[float]) -> dict[str, Outcome]:
    batch = _batch(env, REACH)
    _machine_clean(env)
    return batch


@pytest.fixture(scope="module")
def compile_time(env: Env, alone: list[float]) -> dict[str, Outcome]:
    batch = _batch(env, COMPILE)
    _machine_clean(env)
    return batch


def _alone_beside(env: Env, attack: str, hosts: bool = False) -> dict[str, Outcome]:
    batch = _batch(env, [attack], hosts=hosts)
    _machine_clean(env)
    return batch


def test_reading_another_teams_sources_by_path_and_by_searching_finds_nothing(
        reach: dict[str, Outcome], alone: list[float]) -> None:
    line = reach["reads-other-teams-sources"].line("reads-sources:")
    assert "by path 0 file(s)" in line and "by search 0 file(s)" in line, line
    assert "marker not seen" in line, line
    _honest_as_alone(reach, alone)
    # Stored root-only: nobody but root may even list a submission's folder.
    honest = reach["honest"]
    folder = Path(honest.result["submission_dir"])
    for f in (folder.parent.parent, folder.parent, folder):
        assert f.stat().st_mode & 0o777 == 0o700, f
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in folder.iterdir())


def test_a_setsid_daemon_calling_kill_minus_one_kills_only_its_own_box(
        reach: dict[str, Outcome], alone: list[float]) -> None:
    attacker = reach["setsid-daemon-kills-everything"]
    assert "calls kill(-1, SIGKILL)" in attacker.line("kill-daemon:")
    # It killed its own sender (its box's), and the box's end took the daemon with it.
    assert attacker.code == 1 and "SIGKILL" in attacker.reason, attacker.reason
    assert attacker.box["leftover_processes"] == [], attacker.box
    _honest_as_alone(reach, alone)


def test_connecting_to_every_port_listening_in_the_root_namespace_reaches_none(
        reach: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    line = reach["connects-to-root-namespace-ports"].line("connect:")
    tcp, _, unix = line.partition(";")
    assert tcp.strip() == "connect: tcp", line  # no port answered
    assert unix.strip().endswith("connected:"), line  # no unix socket either
    assert env.listener.getsockname()[1] in env.root_ports
    _honest_as_alone(reach, alone)


def test_writing_to_results_var_and_the_checkout_fails(
        reach: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    line = reach["writes-to-results-var-and-checkout"].line("write-outside:")
    assert "WRITTEN" not in line and "OVERWRITTEN" not in line, line
    for top in (env.results, ProjectPaths().state_dir, REPO_ROOT):
        found = subprocess.run(["find", str(top), "-name", "ATTACK-WAS-HERE"],
                               capture_output=True, text=True).stdout
        assert found == "", found
    _honest_as_alone(reach, alone)


def test_reading_etc_shadow_and_root_fails(reach: dict[str, Outcome],
                                           alone: list[float]) -> None:
    line = reach["reads-etc-shadow-and-root"].line("read-secrets:")
    for secret in ("/etc/shadow:READ", "/root:LISTED", "/root/.bash_history:READ",
                   "/home:LISTED", "/proc/1/environ:READ", "/proc/1/root:LISTED"):
        assert secret not in line, line
    visible = _number(r"processes-visible:(\d+)", line)
    assert visible <= 8, line  # its box's own, not the machine's
    _honest_as_alone(reach, alone)


def test_asking_for_a_real_time_policy_or_a_lower_nice_value_is_refused(
        reach: dict[str, Outcome], alone: list[float]) -> None:
    line = reach["raises-its-own-priority"].line("priority:")
    assert "GRANTED" not in line, line
    # Refused by the limits the box sets, not by whatever the machine's root was given.
    assert "rlimit-rtprio:0/0" in line and "rlimit-nice:0/0" in line, line
    assert line.endswith("policy-now:0"), line  # still SCHED_OTHER
    _honest_as_alone(reach, alone)


def test_including_etc_shadow_at_compile_time_finds_no_such_file(
        compile_time: dict[str, Outcome], alone: list[float]) -> None:
    attacker = compile_time["includes-etc-shadow"]
    assert attacker.code == 1 and "does not compile" in attacker.reason
    assert "/etc/shadow: No such file or directory" in attacker.build_log, attacker.build_log
    first = Path("/etc/shadow").read_text().splitlines()[0]
    assert first not in attacker.build_log and first not in attacker.stderr
    _honest_as_alone(compile_time, alone)


def test_including_proc_self_environ_at_compile_time_shows_nothing_of_the_machine(
        compile_time: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    attacker = compile_time["includes-proc-self-environ"]
    # What the compiler printed (a student sees it): nothing of the environment `repro`
    # ran in (procfs files read as empty; the box's own has four variables anyway).
    for value in (str(env.results), str(env.traces), "SUDO_", "HOME=/root",
                  "NETREPRO_RESULTS", "NETREPRO_TRACES"):
        assert value not in attacker.build_log, value
    _honest_as_alone(compile_time, alone)


def test_a_template_instantiation_bomb_is_stopped_by_the_builds_limits(
        compile_time: dict[str, Outcome], alone: list[float]) -> None:
    attacker = compile_time["template-instantiation-bomb"]
    assert attacker.code == 1 and "does not compile" in attacker.reason, attacker.reason
    # GCC's two words for an allocation its address-space limit refused, or the time-out.
    assert ("virtual memory exhausted" in attacker.build_log
            or "out of memory allocating" in attacker.build_log
            or "still running after" in attacker.reason), attacker.build_log[-2000:]
    assert attacker.took_s < 180 + 60, attacker.took_s  # the build's wall-clock limit, and some
    _honest_as_alone(compile_time, alone)


def test_a_fork_bomb_is_refused_inside_its_box(env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "fork-bomb")
    attacker = batch["fork-bomb"]
    assert "fork refused (Resource temporarily unavailable)" in attacker.line("fork-bomb:")
    if attacker.box["cgroup"]["pids"] != "none":
        assert attacker.box["limit_events"]["forks_refused"] > 0, attacker.box
    _honest_as_alone(batch, alone)


def test_allocating_2_gib_fails_inside_the_box(env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "allocates-2-gib")
    attacker = batch["allocates-2-gib"]
    assert "malloc(2 GiB) failed" in attacker.line("alloc: malloc")
    held = attacker.line("alloc: 900 MiB")
    if attacker.box["cgroup"]["memory"] != "none":
        # The box's memory (1 GiB and its 128 MiB of space) holds one 900 MiB process; the
        # kernel kills the others inside the box.
        assert _number(r"(\d+) MiB held at once", held) < 1800, held
        assert "killed-by-signal-9" in held, held
    _honest_as_alone(batch, alone)


def test_writing_1_gib_to_tmp_and_the_working_folder_stops_at_the_boxs_space(
        env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "writes-1-gib-to-tmp-and-work")
    attacker = batch["writes-1-gib-to-tmp-and-work"]
    written = [_number(r": (\d+) MiB written", attacker.line(f"fill {d}"))
               for d in ("/tmp", "/work")]
    assert sum(written) <= RUN_DISK_MIB, attacker.attack
    assert "No space left on device" in attacker.line("fill /tmp")
    _honest_as_alone(batch, alone)


def test_a_udp_flood_at_ten_times_the_link_rate_stays_on_its_own_link(
        env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "floods-udp-at-10x-link-rate")
    attacker = batch["floods-udp-at-10x-link-rate"]
    counts = [int(n) for n in re.findall(r"udp-flood: (\d+) sent", "\n".join(attacker.attack))]
    assert counts and max(counts) > 0, attacker.attack  # it did flood
    _honest_as_alone(batch, alone)


# ------------------------------------------------------------------ handed in hostile

def _handed_in(env: Env, name: str, make: Callable[[Path], None]) -> Team:
    """A team's folder with the honest header and a controller.cc made by `make`."""
    folder = env.work / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copy(env.honest / "controller.hh", folder / "controller.hh")
    make(folder / "controller.cc")
    return Team(folder)


def _linked_to(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _bound_to(source: str) -> Callable[[Path], None]:
    """A file whose size says 0 and whose reading gives more than the limit, as /proc and
    FUSE files do (a student's FUSE mount would hand one in): /proc/kallsyms bound on it."""
    def make(path: Path) -> None:
        path.write_text("")
        subprocess.run(["mount", "--bind", source, str(path)], check=True, timeout=30)
    return make


KALLSYMS = "/proc/kallsyms"
INTAKE = {"links-to-etc-shadow": _linked_to("/etc/shadow"),
          "links-to-proc-self-environ": _linked_to("/proc/self/environ"),
          "links-to-proc-kmsg": _linked_to("/proc/kmsg"),
          "grows-after-its-stat": _bound_to(KALLSYMS)}
INTAKE_S = 30  # a refusal at intake is at once; /proc/kmsg would block for ever


@pytest.fixture(scope="module")
def intake(env: Env, alone: list[float]) -> Any:
    with open(KALLSYMS, "rb") as f:  # the attack needs more than the limit behind size 0
        assert len(f.read(MAX_SOURCE_BYTES + 1)) > MAX_SOURCE_BYTES, KALLSYMS
    assert os.stat(KALLSYMS).st_size == 0
    teams = {name: _handed_in(env, name, make) for name, make in INTAKE.items()}
    try:
        batch = _batch(env, teams, hosts=True)
    finally:
        subprocess.run(["umount", str(teams["grows-after-its-stat"].folder / "controller.cc")],
                       capture_output=True, timeout=30)
    _machine_clean(env)
    yield batch


def _refused_at_intake(outcome: Outcome, env: Env, says: str, secret: str) -> None:
    assert outcome.code == 2, outcome.stdout + outcome.stderr  # refused: nothing was built
    assert says in outcome.stderr, outcome.stderr
    assert outcome.took_s < INTAKE_S, outcome.took_s
    assert secret and secret not in outcome.stdout + outcome.stderr
    # Nothing of it was stored: no submission folder, so no copy of what it pointed at.
    assert not (env.results / "contest" / "submissions" / outcome.team).exists()


def test_a_controller_cc_linked_to_etc_shadow_is_refused_at_intake(
        intake: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    shadow = Path("/etc/shadow").read_text().splitlines()[0]
    _refused_at_intake(intake["links-to-etc-shadow"], env, "is a symbolic link", shadow)
    _honest_as_alone(intake, alone, hosts=True)


def test_a_link_to_proc_self_environ_is_refused_and_shows_no_environment(
        intake: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    _refused_at_intake(intake["links-to-proc-self-environ"], env, "is a symbolic link",
                       str(env.results))
    _honest_as_alone(intake, alone, hosts=True)


def test_a_link_to_proc_kmsg_is_refused_at_once_not_read_for_ever(
        intake: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    _refused_at_intake(intake["links-to-proc-kmsg"], env, "is a symbolic link", "kmsg:")
    _honest_as_alone(intake, alone, hosts=True)


def test_a_file_that_says_0_bytes_and_reads_5_mib_is_read_to_the_limit_and_refused(
        intake: dict[str, Outcome], env: Env, alone: list[float]) -> None:
    with open(KALLSYMS) as f:
        first = f.readline().strip()
    _refused_at_intake(intake["grows-after-its-stat"], env,
                       f"more than {MAX_SOURCE_BYTES} bytes", first)
    _honest_as_alone(intake, alone, hosts=True)


# ------------------------------------------------------------------ what it writes

def test_a_60_mib_line_of_escapes_on_stderr_is_cut_and_escaped_everywhere_it_is_kept(
        env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "writes-60-mib-of-stderr-with-escapes", hosts=True)
    attacker = batch["writes-60-mib-of-stderr-with-escapes"]
    assert "one line of 60 MiB" in attacker.line("stderr-flood:")  # it ran
    assert attacker.code == 1 and "status 7" in attacker.reason, attacker.reason
    assert len(attacker.reason) <= 2 * REASON_CHARS, len(attacker.reason)
    for text in (attacker.reason, attacker.stdout, attacker.stderr):
        assert not ESCAPE_CHARACTERS & set(text), repr(text[:300])
    assert "\\x1b[2J" in attacker.reason  # shown, written out
    contest = env.results / "contest"
    assert attacker.run_dir is not None
    kept = [contest / "leaderboard.html", contest / "leaderboard.csv",
            contest / f"leaderboard-{TRACE}.csv",
            Path(attacker.result["submission_dir"]) / "submission.json",
            attacker.run_dir / "FAILED.json"]
    for path in kept:
        assert path.stat().st_size < BOARD_BYTES, (path, path.stat().st_size)
        assert not ESCAPE_CHARACTERS & set(path.read_text(errors="replace")), path
    # The full output is kept in the run's folder only, capped: its head and its tail.
    stderr = attacker.run_dir / "grump-sender.stderr"
    assert stderr.stat().st_size <= HEAD_BYTES + TAIL_BYTES + 200, stderr.stat().st_size
    _honest_as_alone(batch, alone, hosts=True)


# ------------------------------------------------------------------ outside the box's limits

def test_a_flood_at_the_boxs_full_speed_fills_only_its_own_bounded_queue(
        env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "floods-at-the-boxs-full-speed", hosts=True)
    attacker, honest = batch["floods-at-the-boxs-full-speed"], batch["honest"]
    sent = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"process (\d): \d+ sent \((\d+) MiB\)", "\n".join(attacker.attack))}
    assert len(sent) == 2 and sum(sent.values()) << 20 > 2 * QUEUE_BYTES, attacker.attack
    assert attacker.run_dir is not None and honest.run_dir is not None
    link = json.loads((attacker.run_dir / "link-stats.json").read_text())
    data = link["a2b"]
    # The queue held at most its bound (and what is left of the packet in transit); while
    # full its sender was not read, and the kernel dropped what overflowed the socket: the
    # emulator took in at most the bound and what the link carried (and one batch over).
    assert data["queue_bytes_max"] <= QUEUE_BYTES + 1504, data
    assert data["unread_while_full"]["spells"] > 0 and data["socket_drops"] > 0, data
    assert data["arrival_bytes"] + data["arrival_bytes_after_service"] <= (
        QUEUE_BYTES + data["departure_bytes"] + 64 * 1518), data
    # What reached the link at all (read, or dropped at the emulator's full socket) came
    # through the host's token bucket: its burst and its rate over the run, no more (every
    # frame let through costs the machine a softirq outside the box: box_egress.py).
    assert attacker.box["egress"]["qdisc"].startswith("qdisc tbf"), attacker.box
    assert RATE_SHOWN in attacker.box["egress"]["qdisc"], attacker.box
    frame = data["arrival_bytes"] / data["arrivals"]
    passed = (data["arrivals"] + data["socket_drops"]) * frame
    span_s = (link["end_ms"] - link["init_ms"]) / 1000
    assert passed <= EGRESS_BURST_BYTES + RATE_MBPS * 1e6 / 8 * span_s * 1.02, (
        passed, span_s, data)
    # The emulator's memory: its honest neighbour's, plus at most twice the queue's bound
    # (a frame and its bookkeeping per queued byte's worth).
    neighbour = json.loads((honest.run_dir / "link-stats.json").read_text())
    assert link["peak_rss_kib"] <= neighbour["peak_rss_kib"] + 2 * (QUEUE_BYTES >> 10), (
        link["peak_rss_kib"], neighbour["peak_rss_kib"])
    _honest_as_alone(batch, alone, hosts=True)


def test_a_user_namespace_of_its_own_is_refused(env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "user-namespace-memory", hosts=True)
    line = batch["user-namespace-memory"].line("userns:")
    assert "refused: Operation not permitted" in line and "SUCCEEDED" not in line, line
    _honest_as_alone(batch, alone, hosts=True)


def _memory_outside_rlimits_refused(attacker: Outcome) -> None:
    assert "shmget refused: Operation not permitted" in attacker.line("sysv:")
    assert attacker.line("sysv:").startswith("sysv: 0 MiB held")
    assert "memfd_create refused: Operation not permitted" in attacker.line("memfd:")
    assert attacker.line("memfd:").startswith("memfd: 0 MiB held")
    assert attacker.line("limits:") == "limits: nofile 256, memlock 0, msgqueue 0"


def test_sysv_shared_memory_and_memfds_are_refused(env: Env, alone: list[float]) -> None:
    batch = _alone_beside(env, "sysv-and-memfd-memory", hosts=True)
    _memory_outside_rlimits_refused(batch["sysv-and-memfd-memory"])
    _honest_as_alone(batch, alone, hosts=True)


ROOT_SECRET = "netrepro-root-secret"


def _session_with_a_root_secret(token: str) -> Callable[[], None]:
    """What a service's repro would have: a session keyring of its own holding root's key."""
    import ctypes
    from schemes.submission.box_seccomp import syscall_number
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl, add_key = syscall_number("keyctl"), syscall_number("add_key")

    def join() -> None:
        if libc.syscall(keyctl, 1, b"netrepro-test-service") < 0:  # join a new named one
            raise OSError(ctypes.get_errno(), "KEYCTL_JOIN_SESSION_KEYRING")
        if libc.syscall(add_key, b"user", ROOT_SECRET.encode(), token.encode(),
                        len(token), -3) < 0:  # KEY_SPEC_SESSION_KEYRING
            raise OSError(ctypes.get_errno(), "add_key")
    return join


def test_keyrings_are_neither_read_nor_written_under_a_session_keyring_of_the_runners(
        env: Env, alone: list[float]) -> None:
    token = "root-secret-" + os.urandom(8).hex()
    team = Team(_team(env, "reads-and-writes-keyrings"),
                preexec=_session_with_a_root_secret(token))
    batch = _batch(env, {"reads-and-writes-keyrings": team}, hosts=True)
    _machine_clean(env)  # no box user holds a key
    attacker = batch["reads-and-writes-keyrings"]
    text = "\n".join(attacker.attack)
    assert token not in text and "READ" not in text and "PLANTED" not in text, text
    assert "session keyring refused (Operation not permitted)" in attacker.line(
        "keys: session keyring"), text
    assert attacker.box["session_keyring"].startswith("a new empty one"), attacker.box
    _honest_as_alone(batch, alone, hosts=True)


# ------------------------------------------------------------------ without cgroups

def test_without_cgroups_hosting_is_refused_unless_the_teacher_allows_it(env: Env) -> None:
    started = time.monotonic()
    done = _outcome(env, "honest", _start(env, env.honest, "honest", environ={
        ONLY_ENV: "none"}), started)
    assert done.code == 3, done.stdout + done.stderr
    assert "no cgroup controller for pids, memory, cpu" in done.stderr, done.stderr
    assert "--allow-without-cgroups" in done.stderr and "MiB for the box" in done.stderr
    assert done.took_s < INTAKE_S


def test_without_cgroups_memory_outside_the_rlimits_is_still_refused(
        env: Env, alone: list[float]) -> None:
    without = {ONLY_ENV: "none"}
    allowed = ("--allow-without-cgroups",)
    teams = {a: Team(_team(env, a), environ=without, extra=allowed)
             for a in ("user-namespace-memory", "sysv-and-memfd-memory")}
    batch = _batch(env, teams, honest=Team(env.honest, environ=without, extra=allowed),
                   hosts=True)
    _machine_clean(env)
    for outcome in batch.values():
        assert set(outcome.box["cgroup"].values()) == {"none"}, outcome.box["cgroup"]
    line = batch["user-namespace-memory"].line("userns:")
    assert "refused: Operation not permitted" in line, line
    _memory_outside_rlimits_refused(batch["sysv-and-memfd-memory"])
    _honest_as_alone(batch, alone, hosts=True)


HOLDER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from schemes.submission.box import Box
from schemes.submission.limits import run_limits
box = Box.open("run", run_limits(10))
box.popen(["/bin/sh", "-c", "setsid sleep 300 & sleep 300"], run_limits(10),
          network_of=os.getpid())
print(box.user.name, flush=True)
time.sleep(300)
"""


def test_a_box_whose_holder_is_killed_dies_with_it_and_repro_clean_removes_the_rest(
        env: Env) -> None:
    holder = subprocess.Popen(["/usr/bin/python3", "-c", HOLDER, str(REPO_ROOT)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    name = holder.stdout.readline().strip()
    user = next(u for u in pool() if u.name == name)
    deadline = time.monotonic() + 10
    while len(processes_of(user.uid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(processes_of(user.uid)) == 3  # the shell, its sleep and its setsid sleep
    holder.kill()
    holder.wait()
    deadline = time.monotonic() + 5
    while processes_of(user.uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_of(user.uid) == []  # bwrap died with its holder, and the box with it
    assert (BOXES_DIR / f"{name}.json").is_file()  # its record, cgroup and tmpfs are left
    done = subprocess.run([REPRO, "clean"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"box {name}: removed what a dead holder left" in done.stdout, done.stdout
    _machine_clean(env)
