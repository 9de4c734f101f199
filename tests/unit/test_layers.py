"""Layers import downward only: base < measurement < analysis < experiments < app.

Read from the source with `ast` (every import, also those inside functions), so
a lazy import cannot hide an upward dependency. What a layer needs from above
(the trace set, the experiment list) is passed in as an argument instead.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Package -> layer; a module may import its own layer and the ones below it.
LAYERS = {
    "core": 0,          # base: paths, run specs and ids, results store, traces, queue specs
    "topologies": 1,    # measurement: Mininet topologies and links
    "schemes": 1,       # measurement: the scheme families' endpoints
    "kernel": 1,        # measurement: congestion-control providers, recoveries, tcp_probe,
                        # captures, the hosts' TCP buffers and offloads
    "controllers": 1,   # measurement: OpenFlow drop plans and their adapters
    "analysis": 2,      # reads artifacts only
    "runkinds": 3,      # one run kind per kind of network: its measurement and its metrics
    "experiments": 3,   # one package per paper
    "app": 4,           # cli, runner, executor, doctor, cleanup, report
    "bench": 4,         # benchmarks, run from the CLI
}
LAYER_NAMES = ("base", "measurement", "analysis", "experiments", "app")


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def upward_imports(root: Path) -> list[str]:
    problems = []
    for package, layer in LAYERS.items():
        for path in sorted((root / package).rglob("*.py")):
            for line, target in imported_packages(path):
                if LAYERS.get(target, -1) > layer:
                    problems.append(
                        f"{path.relative_to(root)}:{line}: {LAYER_NAMES[layer]} ({package}) "
                        f"imports {target} ({LAYER_NAMES[LAYERS[target]]}), a layer above it")
    return problems


def test_every_package_has_a_layer() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages <= set(LAYERS), f"give these packages a layer: {packages - set(LAYERS)}"


def test_no_upward_imports() -> None:
    problems = upward_imports(ROOT)
    assert not problems, "upward imports:\n" + "\n".join(problems)


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    for package in LAYERS:
        (tmp_path / package).mkdir()
    (tmp_path / "core" / "paths.py").write_text("def f():\n    from app.cli import main\n")
    (tmp_path / "analysis" / "ok.py").write_text("from schemes.base import Scheme\n")
    problems = upward_imports(tmp_path)
    assert problems == ["core/paths.py:2: base (core) imports app (app), a layer above it"]


@pytest.mark.parametrize("script", ["repro"])
def test_entry_point_uses_the_app_layer(script: str) -> None:
    assert "from app.cli import main" in (ROOT / script).read_text()
