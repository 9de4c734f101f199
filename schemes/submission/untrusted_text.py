"""Text a submission controls (its error output, its compiler's messages, the reasons made
of them, the paths it was handed in by), made safe to store and to show.

Whatever a team's code prints reaches files we keep, the teacher's terminal and the
leaderboard. So it is always cut to a size we choose (the head and the tail are kept,
what was cut is counted) and its control characters are written out as visible escapes
(`\\x1b`), so that no terminal escape, carriage return or bidirectional override is ever
replayed on a screen. HTML escaping is the board's own (experiments/contest/leaderboard.py).
"""
from __future__ import annotations

import re

# A failure reason, as stored (FAILED.json, submission.json, the boards) and shown.
REASON_CHARS = 2000
# The tail of a sender's error output a reason quotes (from its last 4 KiB: output_cap.py).
TAIL_LINES = 5
TAIL_CHARS = 1000
# A path or a name quoted in a message.
NAME_CHARS = 300

# C0 and C1 controls, DEL, and the Unicode characters that reorder or hide what follows
# them on a screen (bidirectional embeddings, overrides and isolates; zero-width ones).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
                      "\ufeff]")
_KEPT_IN_TEXT = {"\n", "\t"}


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = False) -> str:
    """`text` with every control character written out (`\\x1b`, `\\u202e`); newlines and
    tabs kept only when `keep_newlines` (a log), so that a one-line text stays one line."""
    def one(match: re.Match[str]) -> str:
        ch = match.group(0)
        return ch if keep_newlines and ch in _KEPT_IN_TEXT else _escape(ch)
    return _CONTROL.sub(one, text)


def cut(text: str, limit: int) -> str:
    """At most about `limit` characters: the head and the tail, and how much was left out."""
    if len(text) <= limit:
        return text
    head = max(0, limit * 3 // 4)
    tail = max(0, limit - head)
    dropped = len(text) - head - tail
    return f"{text[:head]} [... {dropped} characters cut ...] {text[len(text) - tail:]}"


def reason(text: str, limit: int = REASON_CHARS) -> str:
    """A one-line reason fit to store and to show: escaped, then cut."""
    return cut(printable(text), limit)


def log_text(text: str, limit: int) -> str:
    """A multi-line log fit to store and to show: escaped (lines kept), then cut."""
    return cut(printable(text, keep_newlines=True), limit)


def name(value: object, limit: int = NAME_CHARS) -> str:
    """A path or a name for a message: escaped, then cut."""
    return cut(printable(str(value)), limit)


def tail_text(data: bytes, lines: int = TAIL_LINES, limit: int = TAIL_CHARS) -> str:
    """The last `lines` non-empty lines of the last bytes a program wrote, joined with
    " | ", escaped and cut."""
    text = data.decode(errors="replace").strip()
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return cut(" | ".join(printable(line) for line in kept), limit) or "(no output)"
