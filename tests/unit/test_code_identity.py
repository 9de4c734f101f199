"""A run's id hashes the code that run executes, found from its imports, and no more."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator

import pytest

from core import code_identity
from core.code_identity import (EVERY_RUN_NATIVE, CodeIdentity, CodeRoots, CodeRootsNotInstalled,
                                identity, module_closure, native_components)
from core.paths import REPO_ROOT
from core.runspec import RunSpec
from runkinds.registry import KINDS, code_roots, metrics_roots
from schemes.registry import all_entries, scheme_module


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _fresh() -> None:
    code_identity._module_index.cache_clear()
    code_identity._imports.cache_clear()
    code_identity.declared_native.cache_clear()
    code_identity._native_libraries.cache_clear()
    code_identity.identity.cache_clear()


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    _fresh()
    yield _tree(tmp_path, {
        "kinds/__init__.py": "",
        "kinds/a.py": "import kinds.helper\ndef f():\n    from registry import make\n",
        "kinds/helper.py": "NATIVE = ('link',)\n",
        "kinds/other.py": "import unrelated\n",
        "unrelated.py": "",
        "registry.py": "import family_x\nimport family_y\n",
        "family_x.py": "from kinds import helper\n",
        "family_y.py": "",
        "native/CMakeLists.txt": "project(x)\n",
        "native/util/CMakeLists.txt": "add_library(netrepro_util STATIC u.cc)\n",
        "native/util/u.cc": "int u;\n",
        "native/util/util_test.cc": "int t;\n",
        "native/link/CMakeLists.txt": "add_library(link_core STATIC l.cc)\n"
                                      "target_link_libraries(link_core PUBLIC netrepro_util)\n",
        "native/link/l.cc": "int l;\n",
        "native/probe/CMakeLists.txt": "add_executable(p p.cc)\n",
        "native/probe/p.cc": "int p;\n",
    })
    _fresh()


def test_the_closure_follows_lazy_imports_and_stops_at_a_dispatch_module(repo: Path) -> None:
    found = module_closure(["kinds.a", "family_x"], stop_at=["registry"], root=repo)
    assert found == ("family_x", "kinds", "kinds.a", "kinds.helper", "registry")
    # Without the stop, every family the registry imports is the run's code.
    assert "family_y" in module_closure(["kinds.a"], root=repo)


def test_native_sources_come_from_the_declared_components_and_what_they_link(repo: Path) -> None:
    assert native_components(["link"], root=repo) == ("link", "util")
    ident = identity(CodeRoots(("kinds.a",), stop_at=("registry",)), root=repo)
    assert "native/link/l.cc" in ident.files and "native/util/u.cc" in ident.files
    assert "native/util/util_test.cc" not in ident.files  # tests are not the run's code
    assert "native/probe/p.cc" not in ident.files
    with_probe = identity(CodeRoots(("kinds.a",), stop_at=("registry",), native=("probe",)),
                          root=repo)
    assert "native/probe/p.cc" in with_probe.files


def test_editing_code_outside_the_closure_keeps_the_version(repo: Path) -> None:
    roots = CodeRoots(("kinds.a", "family_x"), stop_at=("registry",))
    before = identity(roots, root=repo)
    (repo / "kinds/other.py").write_text("import unrelated  # edited\n")
    (repo / "family_y.py").write_text("# edited\n")
    _fresh()
    assert identity(roots, root=repo).version == before.version
    (repo / "kinds/helper.py").write_text("NATIVE = ('link',)\nEDITED = True\n")
    (repo / "native/util/u.cc").write_text("int u = 1;\n")
    _fresh()
    after = identity(roots, root=repo)
    assert after.version != before.version
    assert after.changed(before.files) == ["kinds/helper.py", "native/util/u.cc"]


def test_comments_and_docstrings_are_not_code_but_statements_are(repo: Path) -> None:
    roots = CodeRoots(("kinds.a", "family_x"), stop_at=("registry",))
    before = identity(roots, root=repo).version
    (repo / "kinds/helper.py").write_text('"""A docstring."""\n# a comment\nNATIVE = ("link",)\n')
    _fresh()
    assert identity(roots, root=repo).version == before
    (repo / "kinds/helper.py").write_text('NATIVE = ("link",)\nDELAY = 1\n')
    _fresh()
    assert identity(roots, root=repo).version != before


def test_a_run_id_before_the_kinds_are_known_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_identity, "_roots_of", [])
    with pytest.raises(CodeRootsNotInstalled, match="runkinds.registry"):
        RunSpec("e", "cubic", "a.down", "a.up").run_id()


# ------------------------------------------------------------------ this repository


def _imported(module: str) -> set[str]:
    """Every repository module `module` imports, anywhere in it (read with ast)."""
    path = REPO_ROOT / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = REPO_ROOT / module.replace(".", "/") / "__init__.py"
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    index = code_identity._module_index(REPO_ROOT)
    return {n for n in names if n in index}


def _module_of(path: str) -> str:
    parts = list(Path(path).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_module_a_kind_measures_with_is_in_its_runs_code(kind: str) -> None:
    """No module the kind's measurement imports, directly or not, is left out of its id."""
    roots = KINDS[kind].code_roots(None)
    files = identity(roots).files
    modules = {_module_of(f) for f in files if f.endswith(".py")}
    for module in modules:
        assert _imported(module) <= modules, (module, _imported(module) - modules)
    assert KINDS[kind].measure_module in modules


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kinds_runs_do_not_hash_the_app_the_papers_or_other_kinds(kind: str) -> None:
    files = identity(KINDS[kind].code_roots(None)).files
    others = [k.measure_module.rsplit(".", 1)[0].replace(".", "/") + "/"
              for name, k in KINDS.items() if name != kind]
    outside = [f for f in files if f.startswith(("app/", "experiments/", "bench/", "analysis/"))
               or any(f.startswith(o) for o in others)]
    assert outside == []
    assert "core/progress.py" not in files


def test_a_trace_path_run_hashes_its_own_scheme_family_only() -> None:
    grump = RunSpec("e", "fixed-window", "a.down", "a.up", params=(("window", 10),))
    files = identity(code_roots(grump)).files
    assert "schemes/grump.py" in files and "schemes/registry.py" in files
    assert "schemes/sprout.py" not in files and "schemes/tcp.py" not in files
    for entry in all_entries():
        spec = RunSpec("e", entry.name, "a.down", "a.up")
        module = scheme_module(entry.name)
        assert module.replace(".", "/") + ".py" in identity(code_roots(spec)).files


def test_every_module_that_starts_a_native_program_declares_it() -> None:
    """A module that finds a native binary (or a BPF object) names its component in NATIVE,
    so the program's sources are in the id of the runs that start it."""
    index = code_identity._module_index(REPO_ROOT)
    problems = []
    for module, path in sorted(index.items()):
        if module.startswith(("app.", "bench.")):
            continue  # the executor's CPU probe is every run's (EVERY_RUN_NATIVE)
        text = path.read_text()
        started = set(re.findall(r'native_binary\(\s*"([a-z]+)"', text))
        if re.search(r"\.bpf\.o|bpf_dir|BPF_DIR", text):
            started.add("bpf")
        missing = started - set(code_identity.declared_native(path))
        if missing:
            problems.append(f"{path.relative_to(REPO_ROOT)}: starts {sorted(missing)}, "
                            "not in its NATIVE")
    assert problems == []
    assert EVERY_RUN_NATIVE == ("probe",)


def test_metrics_are_versioned_by_the_kinds_metrics_code_only() -> None:
    for kind in KINDS.values():
        files = identity(metrics_roots(kind)).files
        assert not [f for f in files if f.startswith(("app/", "experiments/", "native/"))]
        assert kind.metrics_module.replace(".", "/") + ".py" in files


def test_an_identity_names_what_changed() -> None:
    old = CodeIdentity({"a.py": "1", "b.py": "2"})
    new = CodeIdentity({"a.py": "1", "b.py": "3", "c.py": "4"})
    assert new.changed(old.files) == ["b.py", "c.py"]
    assert new.version != old.version and len(new.version) == 12


def test_the_module_index_never_walks_results_or_other_non_code_folders(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs side by side: one run's folder under results/ can vanish while another run
    indexes the repository, so results/ (and build/, var/, tests/, setup/) are not entered."""
    import os
    _tree(repo, {"results/runs/.tmp-other-run/x.py": "", "build/gen.py": "",
                 "tests/test_x.py": "", "kinds/.hidden/h.py": ""})
    entered: list[str] = []
    real = os.scandir

    def scandir(path: str) -> object:
        entered.append(str(path))
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    index = code_identity._module_index(repo)
    assert "kinds.a" in index and "registry" in index
    assert not any(name.startswith(("results", "build", "tests")) for name in index)
    assert not [p for p in entered if Path(p).relative_to(repo).parts[:1] in
                (("results",), ("build",), ("tests",), ("var",), ("setup",))]
    assert not [p for p in entered if ".hidden" in p]
