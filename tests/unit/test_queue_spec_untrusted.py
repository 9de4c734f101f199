"""The queue for an untrusted sender: bounded in bytes, parsed as the emulator parses it."""
from __future__ import annotations

import subprocess

import pytest

from core.paths import ProjectPaths
from core.queue_spec import QueueSpecError, parse_queue


def test_an_untrusted_senders_queue_takes_a_byte_bound() -> None:
    q = parse_queue("untrusted:bytes=67108864")
    assert (q.kind, q.bytes, q.packets) == ("untrusted", 67108864, None)
    assert "unread while full" in q.describe() and not q.marks_ecn


@pytest.mark.parametrize("text", ["untrusted", "untrusted:", "untrusted:packets=3",
                                  "untrusted:bytes=0", "untrusted:bytes=1,bytes=2"])
def test_bad_untrusted_specs_are_refused(text: str) -> None:
    with pytest.raises(QueueSpecError, match="bad queue"):
        parse_queue(text)


def test_the_emulator_accepts_the_same_form() -> None:
    """`--help` parses nothing, so ask the emulator to start with the queue and a missing
    interface: a bad queue is refused before the interface is looked up."""
    binary = ProjectPaths().build_dir / "link" / "netrepro-link"
    if not binary.is_file():
        pytest.skip("native/link is not built")
    args = [str(binary), "--iface-a", "nonexistent0", "--iface-b", "nonexistent1",
            "--a2b-rate-mbps", "1", "--b2a-rate-mbps", "1", "--a2b-log", "/dev/null",
            "--b2a-log", "/dev/null", "--stats", "/dev/null"]
    good = subprocess.run(args + ["--a2b-queue", "untrusted:bytes=3008"], capture_output=True,
                          text=True, timeout=30)
    bad = subprocess.run(args + ["--a2b-queue", "untrusted:packets=3"], capture_output=True,
                         text=True, timeout=30)
    assert "bad queue" not in good.stderr, good.stderr
    assert "bad queue" in bad.stderr, bad.stderr
