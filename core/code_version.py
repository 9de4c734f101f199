"""The version of the code whose change should invalidate finished runs."""
from __future__ import annotations

import functools
import hashlib

from core.paths import REPO_ROOT

# Measurement code: the emulator, the endpoints, the topology, the schemes, the kernel's
# facilities, the controllers, and the run kinds that drive them. Analysis and plotting are
# not here: figures regenerate without rerunning. `core/` is, whole: what a spec means (its
# span, its queue, the artifacts' names) lives there, and a module left off a list would let
# a changed measurement reuse runs made before the change.
_MEASUREMENT_DIRS = ("core", "native", "topologies", "schemes", "kernel", "controllers",
                     "runkinds")
_SUFFIXES = {".cc", ".hh", ".c", ".h", ".py", ".txt", ".tsv"}


# The analysis that turns a run's artifacts into metrics.json; its version is stamped into
# every metrics.json, and `./repro report` recomputes metrics whose version is not this one.
_ANALYSIS_DIRS = ("analysis", "core")  # core: the scored span, the artifacts' formats


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    return _digest(_MEASUREMENT_DIRS)


@functools.lru_cache(maxsize=1)
def analysis_version() -> str:
    return _digest(_ANALYSIS_DIRS)


def _digest(dirs: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for top in dirs:
        base = REPO_ROOT / top
        for path in sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in _SUFFIXES):
            if "__pycache__" in path.parts or path.stem.endswith("_test"):
                continue
            digest.update(str(path.relative_to(REPO_ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
