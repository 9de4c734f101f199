"""The contest box without root: its command line, cgroup plan and files, its users, its
process scan, what it reads back, and where sources may be seen."""
from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path

import pytest

from experiments.contest.commands import _new_folder
from experiments.contest.published_sources import FOLDER, is_published, publish, set_published
from schemes.submission import box_users
from schemes.submission.box import SYSTEM_LINKS, Bind, Box, exit_status
from schemes.submission.box_cgroup import BoxCgroup, CgroupLimits, detect
from schemes.submission.box_procs import processes_of
from schemes.submission.box_users import BoxUnavailable, BoxUser, Lease, lease
from schemes.submission.limits import Limits
from schemes.submission.sources import Sources

LIMITS = Limits(cpu_s=10, memory_bytes=1 << 30, file_bytes=1 << 20, processes=8, wall_s=20,
                disk_bytes=64 << 20)
USER = BoxUser("netrepro-box-07", 990, 980)


def a_box(tmp_path: Path) -> Box:
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    return Box("run", Lease(USER, fd, 0.0), LIMITS, {})


def test_the_box_is_an_argument_list_bwrap_then_limits_then_the_user(tmp_path: Path) -> None:
    box = a_box(tmp_path)
    argv = box.command(["/box/prog", "a b;c"], LIMITS, [Bind(Path("/x/bin"), "/box/prog")],
                       network_of=None, block_fd=5, info_fd=8)
    assert argv[0] == "bwrap" and argv[-2:] == ["/box/prog", "a b;c"]  # never a shell string
    for flag in ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
                 "--die-with-parent", "--new-session", "--clearenv", "--proc", "--dev"):
        assert flag in argv

    def after(flag: str, value: str) -> list[str]:
        i = argv.index(value)
        return argv[i - 1:i + 2] if argv[i - 1] == flag else []
    assert after("--ro-bind", "/usr") == ["--ro-bind", "/usr", "/usr"]
    assert after("--ro-bind", "/x/bin") == ["--ro-bind", "/x/bin", "/box/prog"]
    assert after("--bind", str(box.work)) == ["--bind", str(box.work), "/work"]
    assert after("--bind", str(box.tmp)) == ["--bind", str(box.tmp), "/tmp"]
    assert argv[argv.index("--block-fd") + 1] == "5" and argv[argv.index("--info-fd") + 1] == "8"
    for flag in ("--cpu=10:10", f"--as={1 << 30}:{1 << 30}", f"--fsize={1 << 20}:{1 << 20}",
                 "--nproc=8:8", "--core=0:0", "--rtprio=0:0", "--nice=0:0", f"--reuid={USER.uid}",
                 f"--regid={USER.gid}",
                 "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"):
        assert flag in argv
    assert argv.index("bwrap") < argv.index("prlimit") < argv.index("setpriv") < len(argv) - 2
    # Nothing of the machine but /usr (and the links into it), ld.so.cache and what is bound.
    sources = {argv[i + 1] for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")}
    allowed = {"/usr", "/x/bin", str(box.work), str(box.tmp)} | {f"/{n}" for n in SYSTEM_LINKS}
    assert sources <= allowed, sources - allowed
    assert after("--ro-bind-try", "/etc/ld.so.cache") == [
        "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
    assert env == {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/work", "TMPDIR": "/tmp",
                   "LC_ALL": "C"}


def test_a_run_box_enters_the_senders_network_and_a_build_box_has_none(tmp_path: Path) -> None:
    box = a_box(tmp_path)
    run = box.command(["/box/prog"], LIMITS, network_of=4242)
    assert run[:4] == ["nsenter", "--target=4242", "--net", "--"] and "--unshare-net" not in run
    assert "--unshare-net" in box.command(["/box/prog"], LIMITS)


@pytest.mark.parametrize("code,status", [(0, 0), (3, 3), (139, -11), (137, -9), (143, -15),
                                         (None, None), (-9, -9), (128, 128), (255, 255)])
def test_bwraps_128_plus_n_is_a_signal(code: int | None, status: int | None) -> None:
    assert exit_status(code) == status


MOUNTS_V1 = """\
24 27 0:6 / /dev rw - devtmpfs devtmpfs rw
30 29 0:26 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
31 29 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
32 29 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
33 29 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
"""
SELF_V1 = "8:pids:/\n4:memory:/outer/me\n1:cpu,cpuacct:/\n0::/\n"


def fake_v2(tmp_path: Path, controllers: str) -> tuple[str, Path]:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("")
    return f"33 29 0:29 / {root} rw - cgroup2 cgroup2 rw\n", root


def test_cgroup_v1_serves_what_v2_lacks_and_a_box_nests_in_its_makers_cgroup(
        tmp_path: Path) -> None:
    line, root = fake_v2(tmp_path, "hugetlb")
    plan = detect(MOUNTS_V1.replace(
        "33 29 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n", line), SELF_V1)
    assert plan.describe() == {"pids": "cgroup v1", "memory": "cgroup v1", "cpu": "cgroup v1"}
    memory = plan.served["memory"]
    assert memory.parent() == Path("/sys/fs/cgroup/memory/outer/me")
    assert plan.served["cpu"].mount == Path("/sys/fs/cgroup/cpu,cpuacct")


def test_cgroup_v2_serves_its_controllers_from_a_parent_at_its_root(tmp_path: Path) -> None:
    line, root = fake_v2(tmp_path, "cpuset cpu io memory hugetlb pids")
    plan = detect(line, "0::/user.slice/session-1.scope\n")
    assert plan.describe() == {"pids": "cgroup v2", "memory": "cgroup v2", "cpu": "cgroup v2"}
    assert plan.served["pids"].parent() == root  # a child of the root: no common parent
    BoxCgroup(plan, "netrepro-box-03").create(
        CgroupLimits(processes=64, memory_bytes=1 << 30, cpu_fraction=0.5))
    folder = root / "netrepro-box-03"
    assert (folder / "pids.max").read_text() == "64"
    assert (folder / "memory.max").read_text() == str(1 << 30)
    assert (folder / "cpu.max").read_text() == "50000 100000"
    # Each write hands one controller down (the fake file keeps the last one written).
    assert (root / "cgroup.subtree_control").read_text() == "+cpu"


def test_no_cgroup_controller_means_per_user_limits_and_says_so() -> None:
    plan = detect("24 27 0:6 / /dev rw - devtmpfs devtmpfs rw\n", "0::/\n")
    assert plan.served == {}
    assert "per-user" in plan.summary()
    assert plan.describe() == {"pids": "none", "memory": "none", "cpu": "none"}


def test_the_process_scan_finds_every_uid_and_leaves_zombies_out(tmp_path: Path) -> None:
    def proc(pid: int, uids: str, state: str, cmd: bytes) -> None:
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "status").write_text(f"Name:\tx\nState:\t{state} (x)\nUid:\t{uids}\n")
        (d / "cmdline").write_bytes(cmd)
    proc(10, "990\t990\t990\t990", "S", b"sleep\x00300")
    proc(11, "0\t990\t0\t0", "R", b"setuid-ish")  # the box's uid as effective only
    proc(12, "990\t990\t990\t990", "Z", b"")
    proc(13, "991\t991\t991\t991", "S", b"another box")
    (tmp_path / "self").mkdir()
    found = processes_of(990, tmp_path)
    assert [(p.pid, p.command) for p in found] == [(10, "sleep 300"), (11, "setuid-ish")]


def test_the_pool_is_every_netrepro_box_user_and_none_is_root(monkeypatch) -> None:
    def entry(name: str, uid: int, gid: int) -> pwd.struct_passwd:
        return pwd.struct_passwd((name, "x", uid, gid, "", "/nonexistent", "/sbin/nologin"))
    users = [entry("netrepro-box-01", 901, 901), entry("netrepro-box-00", 900, 900),
             entry("netrepro-student", 899, 899), entry("netrepro-box-x", 1, 1)]
    monkeypatch.setattr(pwd, "getpwall", lambda: users)
    assert [u.name for u in box_users.pool()] == ["netrepro-box-00", "netrepro-box-01"]
    monkeypatch.setattr(pwd, "getpwall", lambda: users + [entry("netrepro-box-02", 0, 0)])
    with pytest.raises(BoxUnavailable, match="uid or gid 0"):
        box_users.pool()
    monkeypatch.setattr(pwd, "getpwall", lambda: users + [entry("netrepro-box-02", 901, 5)])
    with pytest.raises(BoxUnavailable, match="share a uid"):
        box_users.pool()


def test_two_boxes_at_once_never_share_a_user_and_a_full_pool_fails_in_time(
        tmp_path: Path) -> None:
    pool = [BoxUser("netrepro-box-00", 900, 900), BoxUser("netrepro-box-01", 901, 901)]
    a = lease(1.0, tmp_path, pool)
    b = lease(1.0, tmp_path, pool)
    assert {a.user.name, b.user.name} == {"netrepro-box-00", "netrepro-box-01"}
    # Another process sees both held (flock is per open file, so a child tries).
    code = subprocess.run(
        ["/usr/bin/python3", "-c", "import sys, pathlib; sys.path.insert(0, sys.argv[1]);"
         "from schemes.submission.box_users import lease, BoxUser, BoxUnavailable\n"
         "pool = [BoxUser('netrepro-box-00', 900, 900), BoxUser('netrepro-box-01', 901, 901)]\n"
         "try:\n lease(0.3, pathlib.Path(sys.argv[2]), pool)\nexcept BoxUnavailable as e:\n"
         " print(e); sys.exit(7)", str(Path(__file__).resolve().parents[2]), str(tmp_path)],
        capture_output=True, text=True, timeout=60)
    assert code.returncode == 7 and "in use for 0.3 s" in code.stdout
    started = time.monotonic()
    with pytest.raises(BoxUnavailable, match="no box users"):
        lease(0.3, tmp_path, [])
    assert time.monotonic() - started < 1
    a.release()
    c = lease(1.0, tmp_path, pool)
    assert c.user.name == a.user.name  # freed, and taken again
    b.release()
    c.release()


def test_reading_back_refuses_links_and_anything_but_a_regular_file(tmp_path: Path) -> None:
    box = a_box(tmp_path)
    box.work = tmp_path / "work"
    (box.work / "out").mkdir(parents=True)
    (box.work / "stats.json").write_text("{}")
    (box.work / "out" / "prog").write_bytes(b"\x7fELF")
    secret = tmp_path / "secret"
    secret.write_text("root's")
    (box.work / "link.json").symlink_to(secret)
    (box.work / "dirlink").symlink_to(tmp_path)
    os.mkfifo(box.work / "fifo")
    (box.work / "big").write_bytes(b"x" * 100)
    assert box.read_file("stats.json", 10) == b"{}"
    assert box.read_file("out/prog", 10) == b"\x7fELF"
    assert box.read_file("link.json", 100) is None
    assert box.read_file("dirlink/secret", 100) is None
    assert box.read_file("fifo", 100) is None  # and does not block
    assert box.read_file("missing", 100) is None
    with pytest.raises(ValueError, match="over 10"):
        box.read_file("big", 10)


def test_submitted_sources_are_kept_root_only(tmp_path: Path) -> None:
    root = tmp_path / "contest"
    folder = _new_folder(root, "team", "abcd")
    Sources(b"// h\n", b"// c\n", "here").write(folder)
    for d in (root / "submissions", folder.parent, folder):
        assert d.stat().st_mode & 0o777 == 0o700, d
    for f in folder.iterdir():
        assert f.stat().st_mode & 0o777 == 0o600, f


def test_sources_are_linked_only_when_the_teacher_publishes_them(tmp_path: Path) -> None:
    root = tmp_path / "contest"
    sub = root / "submissions" / "team" / "t1-abcd"
    sub.mkdir(parents=True)
    (sub / "controller.cc").write_text("// marker\n")
    (sub / "controller.hh").write_text("// h\n")
    assert not is_published(root)
    set_published(root, True)
    assert is_published(root)
    link = publish(root, "team", sub)
    copy = root / link / "controller.cc"
    assert copy.read_text() == "// marker\n" and copy.stat().st_mode & 0o777 == 0o644
    set_published(root, False)
    assert not is_published(root) and not (root / FOLDER).exists()
