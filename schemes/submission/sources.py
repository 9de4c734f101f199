"""A submission's two files, read once (schemes/submission/intake.py) and hashed; the hash
names the build and the runs."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from schemes.submission import intake
from schemes.submission.api import check_api
from schemes.submission.intake import MAX_SOURCE_BYTES, SOURCE_FILES

__all__ = ["HASH_CHARS", "MAX_SOURCE_BYTES", "SOURCE_FILES", "Sources"]

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
        """From a directory holding controller.hh and controller.cc, or those two files;
        never through a link, never a special file, never more than the limit."""
        data, origin = intake.collect(given)
        return cls(data["controller.hh"], data["controller.cc"], origin=origin)

    @classmethod
    def of_bytes(cls, files: dict[str, bytes], origin: str) -> "Sources":
        """From bytes that arrived with a task or an upload, checked as the files are."""
        intake.accept(files, origin)
        return cls(files["controller.hh"], files["controller.cc"], origin=origin)

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
