"""core.file_lock: one holder at a time, the folder made on the way, released on error."""
from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from core.file_lock import exclusive_lock


def held_elsewhere(path: Path) -> bool:
    """Whether another open file description cannot take the lock now."""
    with open(path, "a+") as other:
        try:
            fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(other.fileno(), fcntl.LOCK_UN)
        return False


def test_the_lock_is_held_for_the_block_only(tmp_path: Path) -> None:
    path = tmp_path / "state" / "lock"  # the folder does not exist yet
    with exclusive_lock(path):
        assert path.exists() and held_elsewhere(path)
    assert not held_elsewhere(path)


def test_an_error_in_the_block_releases_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    with pytest.raises(RuntimeError):
        with exclusive_lock(path):
            raise RuntimeError("inside")
    assert not held_elsewhere(path)
