"""`ss -tin` output, read: each connection's detail lines beside its ports."""
from __future__ import annotations

from typing import Iterator


def detail_lines(text: str) -> Iterator[tuple[int | None, int | None, str]]:
    """(local port, peer port, line) for every detail line of `ss -tin` output: the indented
    lines under a connection's own line, which holds its addresses."""
    local: int | None = None
    peer: int | None = None
    for line in text.splitlines():
        if line[:1] and not line[:1].isspace():
            words = line.split()
            local = port_of(words[3]) if len(words) > 3 else None
            peer = port_of(words[4]) if len(words) > 4 else None
            continue
        yield local, peer, line


def port_of(address: str) -> int | None:
    """The port of `ss`'s ADDRESS:PORT (IPv6 addresses keep their colons); None if absent."""
    try:
        return int(address.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return None
