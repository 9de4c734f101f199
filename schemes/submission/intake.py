"""Intake: the bytes of a submission's two files, taken without trusting how they were handed
in. One intake serves the command line (paths), the cluster (bytes shipped with a task) and
an upload (a stream).

A team's folder arrives as `git clone` or `tar x` made it, so its files may be symbolic
links (to /etc/shadow, /proc/self/environ), FIFOs, devices, or files that keep growing. The
intake runs as root, before any box, so it:

- follows no link: every component of the path given is opened with O_NOFOLLOW, from the
  root or the working directory down (a link anywhere is refused, naming it);
- reads only regular files: each file is first opened as a path only (O_PATH: no
  driver's open runs, so a device node that `tar x` made as root is never armed, rewound or
  woken), that descriptor is checked with fstat (never the path again), and only a regular
  file is then opened for reading, through that descriptor, with O_NONBLOCK so a blocking
  /proc file cannot hold it;
- reads at most the limit + 1 bytes, whatever the size fstat said, and refuses a file
  over the limit, one that grew past it while read included;
- quotes paths in refusals with their control characters escaped (untrusted_text.py).
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from schemes.submission.api import SubmissionRefused
from schemes.submission.untrusted_text import name as shown

SOURCE_FILES = ("controller.hh", "controller.cc")
MAX_SOURCE_BYTES = 1 << 20
READ_CHUNK = 1 << 16
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A path only: no read, and no device's open (a watchdog armed, a tape rewound).
_PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _link_refusal(path: str) -> SubmissionRefused:
    return SubmissionRefused(
        f"{shown(path)} is a symbolic link: a submission is read without following links "
        "(copy the file itself into the folder; a link to another file is never read)")


def _open_error(path: str, e: OSError, directory: bool) -> SubmissionRefused:
    if e.errno == errno.ELOOP:
        return _link_refusal(path)
    if e.errno == errno.ENOENT:
        return SubmissionRefused(f"{shown(path)}: no such file (a submission is controller.hh "
                                 "+ controller.cc)")
    if e.errno == errno.ENOTDIR and directory:
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return _link_refusal(path)
        except OSError:
            pass
        return SubmissionRefused(f"{shown(path)} is not a directory")
    return SubmissionRefused(f"{shown(path)} cannot be opened: {e.strerror or e}")


def open_folder(path: Path) -> int:
    """A descriptor of the folder `path`, every component opened without following a link
    (from / for an absolute path, else from the working directory)."""
    text = os.fspath(path)
    fd = os.open("/" if os.path.isabs(text) else ".", _DIR_FLAGS)
    walked = "/" if os.path.isabs(text) else ""
    try:
        for part in [p for p in text.split("/") if p not in ("", ".")]:
            walked = os.path.join(walked, part)
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                raise _open_error(walked, e, directory=True) from None
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bounded(stream: BinaryIO | int, label: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """At most `limit` bytes from an open file or stream; refused when there are more (read
    up to `limit` + 1, never the rest)."""
    chunks, got = [], 0
    while got <= limit:
        try:
            chunk = (os.read(stream, min(READ_CHUNK, limit + 1 - got)) if isinstance(stream, int)
                     else stream.read(min(READ_CHUNK, limit + 1 - got)))
        except BlockingIOError:
            raise SubmissionRefused(f"{shown(label)} cannot be read now (it would block): not "
                                    "a file of its own contents") from None
        except OSError as e:
            raise SubmissionRefused(f"{shown(label)} cannot be read: {e.strerror or e}") from None
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got > limit:
        raise SubmissionRefused(f"{shown(label)}: more than {limit} bytes; a source file may "
                                f"have at most {limit} bytes")
    return b"".join(chunks)


def read_file(folder_fd: int, leaf: str, label: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The regular file `leaf` of the folder `folder_fd`, not through a link, bounded. It is
    opened for reading only once fstat has said it is a regular file, and through the
    descriptor fstat looked at, so what is read is the inode that was checked."""
    try:
        path_fd = os.open(leaf, _PATH_FLAGS, dir_fd=folder_fd)
    except OSError as e:
        raise _open_error(label, e, directory=False) from None
    try:
        info = os.fstat(path_fd)
        if stat.S_ISLNK(info.st_mode):  # O_PATH | O_NOFOLLOW opens the link itself
            raise _link_refusal(label)
        _check_regular(info, label, limit)
        try:
            fd = os.open(f"/proc/self/fd/{path_fd}", _READ_FLAGS)
        except OSError as e:
            raise _open_error(label, e, directory=False) from None
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise SubmissionRefused(f"{shown(label)} changed while it was opened: a "
                                        "submission is two regular files")
            _check_regular(opened, label, limit)
            return read_bounded(fd, label, limit)
        finally:
            os.close(fd)
    finally:
        os.close(path_fd)


def _check_regular(info: os.stat_result, label: str, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionRefused(f"{shown(label)} is {_kind(info.st_mode)}: a submission is "
                                "two regular files")
    if info.st_size > limit:
        raise SubmissionRefused(f"{shown(label)}: {info.st_size} bytes; a source file may "
                                f"have at most {limit} bytes")


def accept(files: dict[str, bytes], where: str, limit: int = MAX_SOURCE_BYTES) -> None:
    """Bytes that arrived some other way (shipped with a task, uploaded): exactly the two
    files, each within the limit; SubmissionRefused otherwise."""
    if sorted(files) != sorted(SOURCE_FILES):
        raise SubmissionRefused(f"{where}: a submission is exactly {' and '.join(SOURCE_FILES)} "
                                f"(got: {shown(', '.join(sorted(files)) or 'nothing')})")
    for leaf, data in files.items():
        if not isinstance(data, bytes):
            raise SubmissionRefused(f"{where}: {leaf} is not bytes")
        if len(data) > limit:
            raise SubmissionRefused(f"{where}: {leaf} has {len(data)} bytes; a source file may "
                                    f"have at most {limit} bytes")


def collect(given: list[Path], limit: int = MAX_SOURCE_BYTES) -> tuple[dict[str, bytes], str]:
    """The two files from a folder holding them, or from the two files named; and where they
    came from (the paths as given, made absolute, escaped) for the record."""
    if len(given) == 1 and not given[0].name.endswith(SOURCE_FILES):
        if not os.path.lexists(given[0]):
            raise SubmissionRefused("give a directory holding controller.hh and controller.cc, "
                                    f"or exactly those two files ({shown(given[0])} does not "
                                    "exist)")
        places = [(given[0], leaf) for leaf in SOURCE_FILES]
    else:
        names = sorted(p.name for p in given)
        if names != sorted(SOURCE_FILES):
            raise SubmissionRefused(
                "give a directory holding controller.hh and controller.cc, or exactly those two "
                f"files (got: {shown(', '.join(str(p) for p in given)) or 'nothing'})")
        places = sorted(((p.parent, p.name) for p in given), key=lambda x: x[1] != SOURCE_FILES[0])
    data: dict[str, bytes] = {}
    for folder, leaf in places:
        label = os.path.join(os.fspath(folder), leaf)
        fd = open_folder(folder)
        try:
            data[leaf] = read_file(fd, leaf, label, limit)
        finally:
            os.close(fd)
    origin = ", ".join(shown(os.path.abspath(os.path.join(os.fspath(f), leaf)))
                       for f, leaf in places)
    return data, origin
