"""Cubic-over-CoDel never runs as plain Cubic over a FIFO (schemes/tcp_aqm.py)."""
from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from core.paths import ProjectPaths
from core.runspec import RunSpec
from schemes.base import SchemeUnavailable
from schemes.registry import accepted_params, known_schemes, make_scheme


def _paths(tmp_path: Path, usage: str) -> ProjectPaths:
    emulator = tmp_path / "build" / "native" / "link" / "netrepro-link"
    emulator.parent.mkdir(parents=True)
    emulator.write_text(f"#!/bin/sh\necho '{usage}'\n")
    emulator.chmod(0o755)
    return ProjectPaths(root=tmp_path)


def _spec(queue: str) -> RunSpec:
    return RunSpec(experiment="t", scheme="cubic-codel", data_trace="a", ack_trace="b",
                   queue=queue)


def test_declared_with_its_queue() -> None:
    assert "cubic-codel" in {i.name for i in known_schemes()}
    assert accepted_params("cubic-codel") == frozenset({"cc_impl"})


def test_refused_without_a_codel_queue_in_the_emulator(tmp_path: Path) -> None:
    scheme = make_scheme(_spec("codel"), _paths(tmp_path, "SPEC: infinite | droptail:packets=N"))
    with pytest.raises(SchemeUnavailable, match="needs a 'codel' queue in the link emulator"):
        scheme.prepare(ExitStack())


def test_refused_over_another_queue(tmp_path: Path) -> None:
    scheme = make_scheme(_spec("infinite"), _paths(tmp_path, "SPEC: infinite | codel"))
    with pytest.raises(SchemeUnavailable, match="queue to be 'codel'"):
        scheme.prepare(ExitStack())
