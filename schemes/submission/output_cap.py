"""What a boxed program writes to its stdout or stderr, kept in the run's folder up to a cap.

The program writes into a pipe, never into our file: a reader thread keeps the first
`head` bytes and the last `tail` bytes in the file, with a line saying how much was cut
between them, and reads everything else and forgets it, so the program never blocks on
a full pipe and a 60-MiB line costs the disk nothing. The last bytes seen are also kept in
memory for a failure's reason (untrusted_text.py escapes and cuts them).
"""
from __future__ import annotations

import os
import threading
from typing import IO, Any

HEAD_BYTES = 768 << 10
TAIL_BYTES = 256 << 10
RECENT_BYTES = 4096
READ_BYTES = 1 << 16


class CappedOutput:
    """One output stream of a boxed program: `write_fd` is the program's end of the pipe."""

    def __init__(self, dest: IO[Any], head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head, self.tail = head, tail
        self.total = 0
        self._dest = os.dup(dest.fileno())
        self._read_fd, self.write_fd = os.pipe()
        self._kept_tail = bytearray()  # what came after the head, its last `tail` bytes
        self._recent = bytearray()  # the last RECENT_BYTES of everything
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="capped-output", daemon=True)
        self._thread.start()

    def handed_over(self) -> None:
        """The program has its copy of the write end: ours is closed, so the pipe ends (EOF)
        when the program and everything it started are gone."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def _drain(self) -> None:
        try:
            while True:
                chunk = os.read(self._read_fd, READ_BYTES)
                if not chunk:
                    break
                with self._lock:
                    self._take(chunk)
            with self._lock:
                cut = self.total - self.head - len(self._kept_tail)
                if cut > 0:
                    os.write(self._dest, (f"\n[... {cut} bytes not kept: the run keeps the "
                                          f"first {self.head} and the last {self.tail} bytes "
                                          "of each output ...]\n").encode())
                _write_all(self._dest, bytes(self._kept_tail))
        finally:
            os.close(self._read_fd)
            os.close(self._dest)

    def _take(self, chunk: bytes) -> None:
        room = max(0, self.head - self.total)
        if room:
            _write_all(self._dest, chunk[:room])
        self.total += len(chunk)
        self._kept_tail += chunk[room:]
        del self._kept_tail[:max(0, len(self._kept_tail) - self.tail)]
        self._recent += chunk
        del self._recent[:max(0, len(self._recent) - RECENT_BYTES)]

    def recent(self) -> bytes:
        """The last bytes written so far (at most RECENT_BYTES)."""
        with self._lock:
            return bytes(self._recent)

    def finish(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the pipe to end and the file to be complete."""
        self.handed_over()
        self._thread.join(timeout_s)
        return not self._thread.is_alive()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
