"""An exclusive lock on a file (flock) for the length of a `with` block, so processes that
share a state folder take turns (the congestion-control registry, tcp_probe's ports)."""
from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Holds an exclusive flock on `path` (created, with its folder, if missing); waits for
    another holder to let go. The kernel drops the lock if the holder dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
