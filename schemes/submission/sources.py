"""A submission's two files, read once and hashed; the hash names the build and the runs."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from schemes.submission.api import SubmissionRefused, check_api

SOURCE_FILES = ("controller.hh", "controller.cc")
MAX_SOURCE_BYTES = 1 << 20
HASH_CHARS = 16


@dataclass(frozen=True)
class Sources:
    """The two files of a submission, read once; `digest` names them in run ids."""

    header: bytes
    body: bytes
    origin: str  # where they came from, for the record

    @property
    def sha256(self) -> str:
        """The hash of both files (names, lengths and bytes); `digest` is its start."""
        h = hashlib.sha256()
        for name, data in zip(SOURCE_FILES, (self.header, self.body)):
            h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
        return h.hexdigest()

    @property
    def digest(self) -> str:
        return self.sha256[:HASH_CHARS]

    @classmethod
    def collect(cls, given: list[Path]) -> "Sources":
        """From a directory holding controller.hh and controller.cc, or those two files."""
        if len(given) == 1 and given[0].is_dir():
            folder = given[0]
            files = {name: folder / name for name in SOURCE_FILES}
        else:
            names = sorted(p.name for p in given)
            if names != sorted(SOURCE_FILES):
                raise SubmissionRefused(
                    "give a directory holding controller.hh and controller.cc, or exactly "
                    f"those two files (got: {', '.join(str(p) for p in given) or 'nothing'})")
            files = {p.name: p for p in given}
        data = {}
        for name, path in files.items():
            if not path.is_file():
                raise SubmissionRefused(f"{path}: no such file (a submission is "
                                        "controller.hh + controller.cc)")
            size = path.stat().st_size
            if size > MAX_SOURCE_BYTES:
                raise SubmissionRefused(f"{path}: {size} bytes; a source file may have at most "
                                        f"{MAX_SOURCE_BYTES} bytes")
            data[name] = path.read_bytes()
        return cls(data["controller.hh"], data["controller.cc"],
                   origin=", ".join(str(files[n].resolve()) for n in SOURCE_FILES))

    def api(self) -> int:
        return check_api(self.header.decode(errors="replace"))

    def write(self, folder: Path) -> None:
        """The two files, private to their owner (0600 in a 0700 folder)."""
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        for name, data in zip(SOURCE_FILES, (self.header, self.body)):
            path = folder / name
            path.touch(mode=0o600)
            path.chmod(0o600)
            path.write_bytes(data)
