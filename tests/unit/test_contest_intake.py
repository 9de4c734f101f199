"""The intake of a submission's files: no link followed, nothing but regular files, never
more than the limit read, and paths in refusals escaped."""
from __future__ import annotations

import io
import os
import stat
import threading
from pathlib import Path

import pytest

from schemes.submission import intake
from schemes.submission.api import SubmissionRefused
from schemes.submission.sources import Sources

HEADER = b"class Controller {};\n"
BODY = b"// body\n"


def team(tmp_path: Path, name: str = "team") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "controller.hh").write_bytes(HEADER)
    (folder / "controller.cc").write_bytes(BODY)
    return folder


def test_a_folder_or_its_two_files_are_read(tmp_path: Path) -> None:
    folder = team(tmp_path)
    a = Sources.collect([folder])
    b = Sources.collect([folder / "controller.cc", folder / "controller.hh"])
    assert (a.header, a.body) == (b.header, b.body) == (HEADER, BODY)
    assert a.origin == f"{folder}/controller.hh, {folder}/controller.cc"


def test_a_link_to_a_secret_is_refused_and_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("root:SECRET-HASH:20228:0:99999:7:::\n")
    folder = team(tmp_path)
    (folder / "controller.cc").unlink()
    (folder / "controller.cc").symlink_to(secret)
    with pytest.raises(SubmissionRefused, match="controller.cc is a symbolic link") as e:
        Sources.collect([folder])
    assert "SECRET" not in str(e.value)
    with pytest.raises(SubmissionRefused, match="symbolic link"):
        Sources.collect([folder / "controller.hh", folder / "controller.cc"])


@pytest.mark.parametrize("target", ["/proc/self/environ", "/proc/kmsg", "/dev/zero"])
def test_links_to_proc_and_dev_files_are_refused_at_once(tmp_path: Path, target: str) -> None:
    folder = team(tmp_path)
    (folder / "controller.cc").unlink()
    (folder / "controller.cc").symlink_to(target)
    with pytest.raises(SubmissionRefused, match="symbolic link"):
        Sources.collect([folder])


def test_a_linked_folder_or_a_link_on_the_way_is_refused(tmp_path: Path) -> None:
    real = team(tmp_path, "real")
    (tmp_path / "linked").symlink_to(real)
    with pytest.raises(SubmissionRefused, match="linked is a symbolic link"):
        Sources.collect([tmp_path / "linked"])
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "via").symlink_to(tmp_path)
    with pytest.raises(SubmissionRefused, match="via is a symbolic link"):
        Sources.collect([tmp_path / "up" / "via" / "real"])


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    folder = team(tmp_path)
    (folder / "controller.cc").unlink()
    os.mkfifo(folder / "controller.cc")
    outcome: list[BaseException] = []

    def submit() -> None:
        try:
            Sources.collect([folder])
        except BaseException as e:  # noqa: B902 - handed to the test's thread
            outcome.append(e)
    worker = threading.Thread(target=submit, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "the intake blocked on a FIFO"
    assert isinstance(outcome[0], SubmissionRefused) and "is a FIFO" in str(outcome[0])


def _opens_for_reading(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every os.open of the intake that could run a driver's open (not O_PATH), by path."""
    opened: list[str] = []
    real_open = os.open

    def spy(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if not flags & os.O_PATH and not flags & os.O_DIRECTORY:
            opened.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(intake.os, "open", spy)
    return opened


def test_a_special_file_is_refused_before_anything_opens_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A device node that `tar x` made as root: opening one runs its driver (a watchdog is
    # armed by its open, a tape rewound), so it is looked at as a path only, never opened.
    folder = team(tmp_path)
    (folder / "controller.cc").unlink()
    os.mkfifo(folder / "controller.cc")
    opened = _opens_for_reading(monkeypatch)
    with pytest.raises(SubmissionRefused, match="controller.cc is a FIFO"):
        Sources.collect([folder])
    assert len(opened) == 1, opened  # controller.hh only, through its checked descriptor
    assert opened[0].startswith("/proc/self/fd/"), opened


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node takes root")
def test_a_device_node_is_refused_as_a_device_not_by_what_its_driver_said(
        tmp_path: Path) -> None:
    # /dev/ptmx's number: its driver's open fails (ENOENT) outside /dev, and a mount with
    # nodev refuses the open (EACCES); only a check that never opens it says what it is.
    folder = team(tmp_path)
    (folder / "controller.cc").unlink()
    os.mknod(folder / "controller.cc", stat.S_IFCHR | 0o600, os.makedev(5, 2))
    with pytest.raises(SubmissionRefused, match="controller.cc is a character device"):
        Sources.collect([folder])


def test_a_file_over_the_limit_is_refused_and_one_at_the_limit_read(tmp_path: Path) -> None:
    folder = team(tmp_path)
    (folder / "controller.cc").write_bytes(b"x" * 100)
    data, _ = intake.collect([folder], limit=100)
    assert data["controller.cc"] == b"x" * 100
    (folder / "controller.cc").write_bytes(b"x" * 101)
    with pytest.raises(SubmissionRefused, match="101 bytes; a source file may have at most 100"):
        intake.collect([folder], limit=100)


def test_a_file_that_grows_after_its_stat_is_read_only_to_the_limit_plus_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = team(tmp_path)
    (folder / "controller.cc").write_bytes(b"y" * 5000)
    real_fstat = os.fstat
    reads: list[int] = []
    real_read = os.read

    def small_fstat(fd: int) -> os.stat_result:  # the size when it was looked at
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, 10, st.st_atime, st.st_mtime, st.st_ctime))

    def counted_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        reads.append(len(data))
        return data
    monkeypatch.setattr(intake.os, "fstat", small_fstat)
    monkeypatch.setattr(intake.os, "read", counted_read)
    with pytest.raises(SubmissionRefused, match="more than 1000 bytes"):
        intake.collect([folder], limit=1000)
    assert sum(reads) == len(HEADER) + 1001  # the body: the limit + 1 bytes, no more


def test_a_stream_is_read_to_the_limit_plus_one_and_no_further() -> None:
    stream = io.BytesIO(b"z" * (10 << 20))
    with pytest.raises(SubmissionRefused, match="more than 4096 bytes"):
        intake.read_bounded(stream, "upload controller.cc", 4096)
    assert stream.tell() == 4097
    assert intake.read_bounded(io.BytesIO(b"ok"), "upload", 4096) == b"ok"


def test_shipped_bytes_are_checked_as_files_are() -> None:
    ok = Sources.of_bytes({"controller.hh": HEADER, "controller.cc": BODY}, "shipped")
    assert ok.body == BODY
    with pytest.raises(SubmissionRefused, match="at most"):
        Sources.of_bytes({"controller.hh": HEADER,
                          "controller.cc": b"x" * (intake.MAX_SOURCE_BYTES + 1)}, "shipped")
    with pytest.raises(SubmissionRefused, match="exactly controller.hh and controller.cc"):
        Sources.of_bytes({"controller.hh": HEADER, "../../etc/x": BODY}, "shipped")


def test_paths_in_refusals_have_their_control_characters_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "evil\x1b]0;owned\x07\x1b[2J"
    folder.mkdir()
    with pytest.raises(SubmissionRefused) as e:
        Sources.collect([folder])
    text = str(e.value)
    assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b]0;owned\\x07\\x1b[2J" in text
