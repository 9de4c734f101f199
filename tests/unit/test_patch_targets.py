"""Every dotted name a test patches by string still names something: a module that moves
leaves a patch of its old path failing only when the patched test runs (an integration test,
say), or patching nothing at all."""
from __future__ import annotations

import importlib
import re

import pytest

from core.paths import REPO_ROOT

TARGET = re.compile(r'setattr\(\s*"([A-Za-z_][\w.]*\.[A-Za-z_]\w*)"')


def patched_names() -> list[tuple[str, str]]:
    found = []
    for path in sorted((REPO_ROOT / "tests").rglob("*.py")):
        for name in TARGET.findall(path.read_text()):
            found.append((str(path.relative_to(REPO_ROOT)), name))
    return found


def resolve(name: str) -> object:
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as e:
            if e.name == "mininet":
                pytest.skip("the patched module builds on Mininet; tests/unit-venv.sh has none")
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(name)


def test_the_tests_patch_by_name() -> None:
    assert len(patched_names()) >= 10


@pytest.mark.parametrize("where,name", patched_names())
def test_each_patched_name_exists(where: str, name: str) -> None:
    assert resolve(name) is not None, f"{where} patches {name}"
