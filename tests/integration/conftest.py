"""Integration tests build real Mininet networks: root and a built native/ are required."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.paths import ProjectPaths
from core.results import ExperimentStore
from core.traces import TraceSet
from tests.integration.helpers.browser import browser  # noqa: F401 (a fixture for page tests)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/integration is an integration test."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _require_root() -> None:
    if os.geteuid() != 0:
        pytest.fail("integration tests need root: run ./run_tests.sh as root")


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProjectPaths:
    monkeypatch.setenv("NETREPRO_RESULTS", str(tmp_path / "results"))
    return ProjectPaths()


@pytest.fixture
def traces(paths: ProjectPaths) -> TraceSet:
    return TraceSet.for_project(paths.root)


@pytest.fixture
def store(paths: ProjectPaths) -> ExperimentStore:
    return ExperimentStore(paths.results_dir / "itest")


@pytest.fixture
def fixed_trace(tmp_path: Path) -> Path:
    """One 1504-byte opportunity per ms: a 12.032 Mbit/s link on the mahimahi basis."""
    path = tmp_path / "fixed-12mbit.trace"
    path.write_text("1\n")
    return path


@pytest.fixture
def bursty_trace(tmp_path: Path) -> Path:
    """Every 100 ms: 10 opportunities at ms 5, 10 at ms 50 and one at ms 100 (the period)."""
    path = tmp_path / "bursty.trace"
    path.write_text("5\n" * 10 + "50\n" * 10 + "100\n")
    return path
