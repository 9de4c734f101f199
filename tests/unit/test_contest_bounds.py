"""What a submission writes, bounded and escaped; the box's filter, keyring and limits on its
command line; the machine without cgroups; the builds kept."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.paths import ProjectPaths
from experiments.contest import leaderboard
from experiments.contest.board import contest_spec
from schemes.submission import box_seccomp, build, hosting
from schemes.submission.box import Bind, Box
from schemes.submission.box_cgroup import ONLY_ENV, detect
from schemes.submission.box_keys import keys_of
from schemes.submission.box_users import BoxUser, Lease
from schemes.submission.limits import QUEUE_BYTES, UNTRUSTED_QUEUE, WINDOW_CAP_DATAGRAMS, Limits
from schemes.submission.output_cap import CappedOutput
from schemes.submission.untrusted_text import REASON_CHARS, cut, printable, reason, tail_text

ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b[31m\r\u202e"
LIMITS = Limits(cpu_s=10, memory_bytes=1 << 30, file_bytes=1 << 20, processes=8, wall_s=20,
                disk_bytes=64 << 20)


def test_control_characters_are_written_out_and_one_line_stays_one_line() -> None:
    text = printable("a" + ESCAPES + "\nb\tc")
    assert not any(ch in text for ch in "\x1b\x07\r\n\t\u202e")
    assert text == "a\\x1b[2J\\x1b]0;owned\\x07\\x1b[31m\\x0d\\u202e\\x0ab\\x09c"
    assert printable("x\ny\tz\x1b", keep_newlines=True) == "x\ny\tz\\x1b"


def test_a_60_mib_reason_is_cut_to_its_head_and_tail() -> None:
    huge = '"' * (60 << 20) + ESCAPES + "the end"
    short = reason(huge)
    assert len(short) < REASON_CHARS + 100 and short.endswith("the end")
    assert "characters cut" in short and "\x1b" not in short
    assert cut("small", 100) == "small"


def test_the_tail_of_what_a_program_wrote_is_its_last_lines_escaped() -> None:
    data = b"first\n" + b"x" * 5000 + b"\n" + ESCAPES.encode() + b"\nlast line\n"
    tail = tail_text(data[-4096:], lines=3)
    assert tail.endswith("last line") and "\\x1b" in tail and "\x1b" not in tail


def test_a_programs_output_keeps_its_head_and_tail_and_never_blocks_it(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    with open(dest, "wb") as f:
        capped = CappedOutput(f, head=1000, tail=500)
    writer = subprocess.Popen([sys.executable, "-c",
                               "import sys; sys.stdout.write('H' * 1000 + 'x' * (8 << 20) + "
                               "'TAIL'); sys.stdout.flush()"], stdout=capped.write_fd)
    capped.handed_over()
    assert writer.wait(timeout=30) == 0  # 8 MiB through a pipe nobody keeps: never blocked
    assert capped.finish(10)
    kept = dest.read_bytes()
    assert kept.startswith(b"H" * 1000) and kept.endswith(b"TAIL")
    assert len(kept) < 1000 + 500 + 200 and b"bytes not kept" in kept
    assert capped.recent().endswith(b"TAIL") and capped.total == 1000 + (8 << 20) + 4


def test_the_filter_refuses_namespaces_keys_io_uring_and_memory_outside_the_rlimits() -> None:
    text = box_seccomp.readable()
    for name in ("unshare", "clone", "clone3", "setns", "keyctl", "add_key", "request_key",
                 "io_uring_setup", "memfd_create", "shmget", "msgget"):
        assert f'"{name}"' in text, name
    assert f"0x{box_seccomp.CLONE_NEW['CLONE_NEWUSER']:08x}" in text
    assert "ERRNO(38)" in text  # clone3: ENOSYS, so the C library falls back to clone


FILTERED = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
program = sys.stdin.buffer.read()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
buf = ctypes.create_string_buffer(program)
prog = Prog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, os.strerror(ctypes.get_errno())
out = []
for name, call in (("unshare-user", lambda: libc.unshare(0x10000000)),
                   ("unshare-nothing", lambda: libc.unshare(0)),
                   ("shmget", lambda: libc.shmget(0, 4096, 0o1600)),
                   ("getpid", lambda: libc.getpid())):
    r = call()
    out.append(f"{name}={'refused' if r < 0 and ctypes.get_errno() == 1 else 'ok'}")
print(" ".join(out))
"""


def test_the_filter_loaded_into_a_process_refuses_a_user_namespace_and_allows_the_rest(
        ) -> None:
    done = subprocess.run([sys.executable, "-c", FILTERED], input=box_seccomp.program(),
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split() == ["unshare-user=refused", "unshare-nothing=ok",
                                            "shmget=refused", "getpid=ok"]


def test_the_box_command_line_loads_the_filter_and_closes_what_rlimits_left_open(
        tmp_path: Path) -> None:
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    box = Box("run", Lease(BoxUser("netrepro-box-07", 990, 980), fd, 0.0), LIMITS, {})
    argv = box.command(["/box/prog"], LIMITS, [Bind(Path("/x"), "/box/prog")], seccomp_fd=9)
    assert argv[argv.index("--seccomp") + 1] == "9"
    assert argv.index("--seccomp") < argv.index("prlimit")
    for flag in ("--nofile=256:256", "--memlock=0:0", "--msgqueue=0:0"):
        assert flag in argv


def test_no_key_of_a_user_is_counted_when_the_kernel_lists_none(tmp_path: Path) -> None:
    listing = tmp_path / "key-users"
    listing.write_text("    0:     9 8/8 3/1000000 52/25000000\n  999:     5 5/5 5/200 9/20000\n")
    assert keys_of(999, listing) == 5 and keys_of(998, listing) == 0


MOUNTS = """\
30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
31 25 0:27 / /sys/fs/cgroup/pids rw,relatime shared:10 - cgroup cgroup rw,pids
32 25 0:28 / /sys/fs/cgroup/cpu rw,relatime shared:11 - cgroup cgroup rw,cpu
"""
OWN = "8:pids:/\n4:memory:/\n1:cpu:/\n0::/\n"


def test_the_box_can_be_made_to_believe_controllers_are_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(detect(MOUNTS, OWN).served) == {"pids", "memory", "cpu"}
    monkeypatch.setenv(ONLY_ENV, "pids")
    assert set(detect(MOUNTS, OWN).served) == {"pids"}
    monkeypatch.setenv(ONLY_ENV, "none")
    plan = detect(MOUNTS, OWN)
    assert plan.served == {} and hosting.missing(plan) == ["pids", "memory", "cpu"]


def test_hosting_without_cgroups_is_refused_saying_what_is_unbounded_unless_allowed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ONLY_ENV, "none")
    monkeypatch.delenv(hosting.ALLOW_ENV, raising=False)
    plan = detect(MOUNTS, OWN)
    why = hosting.refusal(plan)
    assert why is not None and "no cgroup controller for pids, memory, cpu" in why
    assert "--allow-without-cgroups" in why and "65536 MiB for the box, not 1152 MiB" in why
    assert "not one CPU for the whole box" in why
    assert hosting.refusal(detect(MOUNTS.replace("rw,cpu", "rw,cpuacct"), OWN)) is not None
    hosting.allow_without_cgroups()
    assert os.environ[hosting.ALLOW_ENV] == "1"  # what the processes it starts inherit
    assert hosting.refusal(plan) is None


def test_a_submissions_link_has_the_bounded_queue_and_the_baselines_the_infinite_one() -> None:
    assert contest_spec("contest", "submission", "T", 1, {"submission": "ab"}).queue == \
        UNTRUSTED_QUEUE == f"untrusted:bytes={QUEUE_BYTES}"
    assert contest_spec("contest", "sprout", "T").queue == "infinite"
    # Above what the window cap (10,000 datagrams of 1504 bytes) can put in flight, 4 times.
    assert QUEUE_BYTES > 4 * WINDOW_CAP_DATAGRAMS * 1504


def test_a_board_shows_a_huge_escaped_reason_cut_and_escaped(tmp_path: Path) -> None:
    from core.results import write_json
    folder = tmp_path / "submissions" / "evil" / "x"
    folder.mkdir(parents=True)
    write_json(folder / "submission.json", {
        "team": "evil", "trace": "T", "trials": [], "trials_requested": 1,
        "reason": "no trial scored: " + '"' * (4 << 20) + ESCAPES + "<script>"})
    files = leaderboard.write_leaderboards(tmp_path, [leaderboard.BoardTrace("T")])
    for f in files:
        text = f.read_text()
        assert f.stat().st_size < 20_000, f
        assert "\x1b" not in text and "\u202e" not in text, f
        assert f.suffix != ".html" or "<script>" not in text, f


def test_builds_beyond_the_newest_are_pruned_except_those_in_use(tmp_path: Path) -> None:
    paths = ProjectPaths(root=tmp_path)
    now = time.time()
    for k in range(6):
        binary = build.binary_path(paths, f"d{k}")
        binary.parent.mkdir(parents=True)
        binary.write_bytes(b"x" * 1000)
        os.utime(binary.parent, (now - 100 * (6 - k), now - 100 * (6 - k)))
    (build.builds_dir(paths) / ".gone.lock").write_text("")
    held = build.hold_build(paths, "d0")  # the oldest, in use by a trial
    try:
        removed = build.prune_builds(paths, keep=3, keep_bytes=1 << 20)
    finally:
        os.close(held)
    assert sorted(removed) == ["d1", "d2"]
    assert sorted(p.name for p in build.builds_dir(paths).iterdir()) == ["d0", "d3", "d4", "d5"]
    # By size: two of 1000 bytes fit in 2500, the older ones go (the newest first kept).
    assert sorted(build.prune_builds(paths, keep=3, keep_bytes=2500)) == ["d0", "d3"]


def test_a_keyring_the_runner_has_is_not_the_boxes() -> None:
    """What a box's spawner thread starts has a new session keyring of its own; the
    runner's threads keep theirs, and the spawner starts children with vfork (no preexec
    hook)."""
    from schemes.submission import box_keys
    script = ("import ctypes,sys; libc=ctypes.CDLL(None); "
              f"print(libc.syscall({box_seccomp.syscall_number('keyctl')}, 0, -3, 0))")

    def session_of_a_child() -> str:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True).stdout
    mine = session_of_a_child()
    spawner = box_keys.Spawner("test")
    try:
        first = spawner.call(session_of_a_child)
        again = spawner.call(session_of_a_child)
    finally:
        spawner.close()
    other = box_keys.Spawner("test2")
    try:
        second_box = other.call(session_of_a_child)
    finally:
        other.close()
    assert int(first) > 0 and first != mine and first == again and second_box != first
    assert session_of_a_child() == mine  # the runner's own is untouched
    with pytest.raises(ValueError, match="raised in the thread"):
        spawner2 = box_keys.Spawner("test3")
        try:
            spawner2.call(lambda: (_ for _ in ()).throw(ValueError("raised in the thread")))
        finally:
            spawner2.close()
