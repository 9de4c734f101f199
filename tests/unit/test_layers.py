"""Layers import downward only: base < measurement < analysis < experiments < app.

A paper's own command (experiments/<paper>/commands.py, or a package commands/) is app code
kept in its paper's folder: it is judged as the app layer, and only the app finds it
(app/cli.py, by name).

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
    "runkinds": 3,      # one package per kind of network: its measurement and its metrics
    "experiments": 4,   # one package per paper
    "app": 5,           # cli, runner, executor, doctor, cleanup, report
    "bench": 5,         # benchmarks, run from the CLI
}
LAYER_NAMES = ("base", "measurement", "analysis", "run kinds", "experiments", "app")


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


# A file of a package whose path matches this is the app's, wherever it lives.
APP_FILES = ("experiments/*/commands.py", "experiments/*/commands/*.py")


def layer_of(path: Path, root: Path, package: str) -> int:
    rel = path.relative_to(root)
    if any(rel.match(pattern) for pattern in APP_FILES):
        return LAYERS["app"]
    return LAYERS[package]


def upward_imports(root: Path) -> list[str]:
    problems = []
    for package in LAYERS:
        for path in sorted((root / package).rglob("*.py")):
            layer = layer_of(path, root, package)
            for line, target in imported_packages(path):
                if LAYERS.get(target, -1) > layer:
                    problems.append(
                        f"{path.relative_to(root)}:{line}: {LAYER_NAMES[layer]} ({package}) "
                        f"imports {target} ({LAYER_NAMES[LAYERS[target]]}), a layer above it")
    return problems


def test_no_module_imports_a_papers_command() -> None:
    """A paper's command is the app's: app/cli.py finds it by name, nothing imports it."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).parts[0] in ("var", "build", "results", "tests"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names
                      if n.startswith("experiments.") and ".commands" in n
                      and not path.relative_to(ROOT).match("experiments/*/commands/*.py")]
    assert found == []


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
