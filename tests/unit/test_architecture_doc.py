"""docs/ARCHITECTURE.md's tables of papers and kinds are the code's, and README lists every
experiment the registry has (and no other)."""
from __future__ import annotations

import re

from app.architecture import DOC, GENERATORS, regenerate
from core.paths import REPO_ROOT
from experiments.registry import experiment_classes


def test_the_generated_tables_are_current() -> None:
    text = (REPO_ROOT / DOC).read_text()
    for name in GENERATORS:
        assert f"<!-- generated: {name} -->" in text, f"{DOC} lost its '{name}' table"
    assert regenerate(text) == text, (f"{DOC}'s generated tables are stale: run "
                                      "`./repro _docs` and commit the result")


def test_readme_lists_every_experiment_and_only_those() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    listed = set(re.findall(r"\*\*`([a-z0-9-]+)`\*\*", readme))
    registered = {cls.name for cls in experiment_classes()}
    assert listed == registered, (f"README.md's experiments: missing {registered - listed}, "
                                  f"not registered {listed - registered}")
