"""The code a run executes, and its version: what a run's id hashes.

A run's id is a hash of its spec and of the code that measured it, and of no other code:
editing the report, a figure, another kind or another paper reuses every finished run.
That code is found from the imports, not from a list kept by hand:

- the closure of a run's root modules (its kind's measurement, its scheme family; their
  `import` statements, lazy ones inside functions too, read with ast), within this
  repository, each hashed as its syntax tree without docstrings (a comment or a reworded
  docstring changes no run);
- stopping at dispatch modules: a registry that imports every family is hashed itself,
  but what it imports is not followed (a run uses one family of it, which is a root);
- the sources of the native programs those modules start: a module declares them in
  `NATIVE = ("link", ...)`, native/<component>/ (tests and READMEs left out), with the
  native libraries its CMakeLists links and the top CMakeLists.txt.

The metrics of a run are versioned the same way, from its kind's metrics module
(runkinds/registry.py). Which roots a spec has is the run kinds' knowledge, a layer above
this one: runkinds/registry.py installs it (`install`), and a run id asked for before
that fails loudly rather than hashing the wrong code.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from core.paths import REPO_ROOT

if TYPE_CHECKING:
    from core.runspec import RunSpec

# Native programs every run starts beside its measurement (the executor's CPU probe).
EVERY_RUN_NATIVE = ("probe",)
NATIVE_DIR = "native"
_NATIVE_SUFFIXES = {".cc", ".hh", ".c", ".h", ".txt", ".tsv"}
_DIGEST_CHARS = 12


@dataclass(frozen=True)
class CodeRoots:
    """Where a run's code starts."""

    modules: tuple[str, ...]  # dotted module names (a package means its __init__)
    stop_at: tuple[str, ...] = ()  # dispatch modules: hashed, their imports not followed
    native: tuple[str, ...] = ()  # native components started whatever the modules say


@dataclass(frozen=True)
class CodeIdentity:
    """The files a run's code consists of, each with its hash, and their version."""

    files: Mapping[str, str] = field(default_factory=dict)  # repo-relative path -> sha256
    # The native components among them (with what they link), by name.
    native: tuple[str, ...] = ()

    @property
    def version(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.files):
            digest.update(f"{path}\0{self.files[path]}\n".encode())
        return digest.hexdigest()[:_DIGEST_CHARS]

    def changed(self, earlier: Mapping[str, str]) -> list[str]:
        """The files that differ from an earlier identity's record: edited, added or gone."""
        return sorted(p for p in set(self.files) | set(earlier)
                      if self.files.get(p) != earlier.get(p))

    def to_dict(self) -> dict[str, object]:
        return {"version": self.version, "files": dict(sorted(self.files.items()))}


# ------------------------------------------------------------------ python: the closure

# Top-level folders that hold no module a run imports. They are never walked: results/
# holds other runs' folders, which appear and vanish while this run starts.
NOT_CODE = frozenset({"tests", "build", "var", "results", "setup"})


@functools.lru_cache(maxsize=None)
def _module_index(root: Path) -> dict[str, Path]:
    """Every importable module of the repository: dotted name -> file."""
    index: dict[str, Path] = {}
    for folder, subfolders, names in os.walk(root):
        top = folder == str(root)
        subfolders[:] = sorted(d for d in subfolders if not (
            d.startswith(".") or d == "__pycache__" or (top and d in NOT_CODE)))
        for name in names:
            if not name.endswith(".py"):
                continue
            path = Path(folder, name)
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if parts:
                index[".".join(parts)] = path
    return index


@functools.lru_cache(maxsize=None)
def _imports(path: Path, module: str) -> tuple[str, ...]:
    """The dotted names module `module` (its file `path`) imports, absolute and relative,
    anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([p for p in anchor if p] + ([base] if base else []))
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names]
    return tuple(n for n in names if n)


def module_closure(modules: Iterable[str], stop_at: Iterable[str] = (),
                   root: Path = REPO_ROOT) -> tuple[str, ...]:
    """The repository's modules that `modules` import, transitively, themselves included
    (with every package on the way: its __init__ runs on import)."""
    index = _module_index(root)
    stops = set(stop_at)
    seen: set[str] = set()
    todo = list(modules)
    for name in todo:
        if name not in index:
            raise ValueError(f"{name}: no such module in this repository")
    while todo:
        name = todo.pop()
        if name in seen or name not in index:
            continue
        seen.add(name)
        parents = name.split(".")
        todo += [".".join(parents[:i]) for i in range(1, len(parents))]
        if name in stops:
            continue
        for imported in _imports(index[name], name):
            # `from a.b import c`: c may be a module (a.b.c) or a name in a.b.
            todo += [n for n in (imported, imported.rpartition(".")[0]) if n in index]
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=None)
def declared_native(path: Path) -> tuple[str, ...]:
    """The native components a module declares it starts: `NATIVE = ("link", ...)`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "NATIVE" for t in node.targets):
            value = ast.literal_eval(node.value)
            if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{path}: NATIVE must be a tuple of component names")
            return value
    return ()


# ------------------------------------------------------------------ native: the sources

_LIBRARY = re.compile(r"add_library\(\s*([A-Za-z0-9_]+)")
_EXECUTABLE = re.compile(r"^\s*add_executable\(\s*([A-Za-z0-9_.-]+)", re.MULTILINE)
_LINKS = re.compile(r"target_link_libraries\(([^)]*)\)")


@functools.lru_cache(maxsize=None)
def _native_libraries(root: Path) -> dict[str, str]:
    """Library target -> the component folder whose CMakeLists declares it."""
    found: dict[str, str] = {}
    for cmake in (root / NATIVE_DIR).glob("*/CMakeLists.txt"):
        for name in _LIBRARY.findall(cmake.read_text()):
            found[name] = cmake.parent.name
    return found


def native_components(components: Iterable[str], root: Path = REPO_ROOT) -> tuple[str, ...]:
    """The components with every native library they link (their CMakeLists say which)."""
    libraries = _native_libraries(root)
    seen: set[str] = set()
    todo = list(components)
    while todo:
        component = todo.pop()
        if component in seen:
            continue
        cmake = root / NATIVE_DIR / component / "CMakeLists.txt"
        if not cmake.is_file():
            raise ValueError(f"native component {component!r}: no {cmake.relative_to(root)}")
        seen.add(component)
        for args in _LINKS.findall(cmake.read_text()):
            todo += [libraries[w] for w in args.split() if w in libraries]
    return tuple(sorted(seen))


def native_executables(component: str, root: Path = REPO_ROOT) -> tuple[str, ...]:
    """The programs a native component's CMakeLists builds (its unit tests are declared
    through netrepro_unit_test, not here)."""
    cmake = root / NATIVE_DIR / component / "CMakeLists.txt"
    return tuple(_EXECUTABLE.findall(cmake.read_text())) if cmake.is_file() else ()


def _native_files(components: Iterable[str], root: Path) -> list[Path]:
    found = native_components(components, root)
    files = [root / NATIVE_DIR / "CMakeLists.txt"] if found else []
    for component in found:
        for path in sorted((root / NATIVE_DIR / component).rglob("*")):
            if path.is_file() and path.suffix in _NATIVE_SUFFIXES and \
                    not path.stem.endswith("_test"):
                files.append(path)
    return files


# ------------------------------------------------------------------ the identity

@functools.lru_cache(maxsize=None)
def identity(roots: CodeRoots, root: Path = REPO_ROOT) -> CodeIdentity:
    """The files of the code that starts at `roots`, hashed."""
    index = _module_index(root)
    modules = module_closure(roots.modules, roots.stop_at, root)
    native = set(roots.native)
    for name in modules:
        native.update(declared_native(index[name]))
    paths = [index[m] for m in modules] + _native_files(native, root)
    return CodeIdentity({str(p.relative_to(root)): _file_hash(p) for p in paths},
                        native_components(native, root))


def _file_hash(path: Path) -> str:
    """A file's hash; a Python module's is its syntax tree's with docstrings left out, so
    an edited comment, docstring or line break is not a new run."""
    data = path.read_bytes()
    if path.suffix == ".py":
        data = _code_of(data, str(path)).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def _code_of(source: bytes, filename: str) -> str:
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        scope = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, scope) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


# ------------------------------------------------------------------ a spec's code

RootsOf = Callable[["RunSpec"], CodeRoots]
_roots_of: list[RootsOf] = []  # one entry once installed


class CodeRootsNotInstalled(RuntimeError):
    """A run id was asked for before the run kinds said what code a run executes."""


def install(roots_of: RootsOf) -> None:
    """Say which code a spec executes (runkinds/registry.py does, when it is imported)."""
    _roots_of[:] = [roots_of]


def roots_of(spec: "RunSpec") -> CodeRoots:
    if not _roots_of:
        raise CodeRootsNotInstalled(
            "a run's code is not known yet: import runkinds.registry before asking for a "
            "run id (it says which code each kind of run executes)")
    return _roots_of[0](spec)


def run_code(spec: "RunSpec") -> CodeIdentity:
    """The code `spec`'s run executes."""
    return identity(roots_of(spec))
