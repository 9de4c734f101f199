"""Whether the leaderboard shows the teams' sources: only when the teacher asks.

A team's sources are root's alone (results/contest/submissions/: folders 0700,
files 0600). `./repro contest board --publish-sources` records the teacher's
choice (sources-published.json) and every drawing of the board then copies the
sources of the submissions on it into published-sources/<team>/<submission>/,
readable by all, and links them; `--withdraw-sources` removes the record and
the copies. Off by default.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

MARKER = "sources-published.json"
FOLDER = "published-sources"
FILES = ("controller.hh", "controller.cc")


def is_published(root: Path) -> bool:
    return (root / MARKER).is_file()


def set_published(root: Path, published: bool) -> None:
    """Record the teacher's choice; withdrawing removes every published copy."""
    marker = root / MARKER
    if published:
        root.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"published_at": time.strftime(
            "%Y-%m-%d %H:%M:%S UTC", time.gmtime())}) + "\n")
    else:
        marker.unlink(missing_ok=True)
        shutil.rmtree(root / FOLDER, ignore_errors=True)


def publish(root: Path, team: str, submission: Path) -> str:
    """A readable copy of one submission's sources; its folder, relative to `root`."""
    dest = root / FOLDER / team / submission.name
    dest.mkdir(parents=True, exist_ok=True)
    for folder in (root / FOLDER, dest.parent, dest):
        folder.chmod(0o755)
    for name in FILES:
        source = submission / name
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, dest / name)
            (dest / name).chmod(0o644)
    return os.path.relpath(dest, root)
