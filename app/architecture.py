"""The tables of docs/ARCHITECTURE.md that list papers and kinds, generated from the code.

- Papers: each paper package with its experiments, and the code it spans: the files of its
  folder, the code outside it that only it uses, and the code it shares with other papers.
  A paper's code is its package's modules and everything they import, plus the code its
  runs execute (each planned run's kind and scheme, as the run's id hashes them:
  core/code_identity.py) and its metrics' code, native sources included; the two
  registries that import every kind and every scheme family are not followed, nor what a
  paper's own command imports (experiments/<paper>/commands.py: the app's).
- Kinds: each run kind, its package, its measure and metrics modules, and which
  experiments plan runs of it.

`./repro _docs` rewrites the generated sections (between `<!-- generated: NAME -->` and
`<!-- end generated -->`); tests/unit/test_architecture_doc.py fails when they are stale.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.code_identity import CodeRoots, identity, module_closure
from core.paths import REPO_ROOT
from core.traces import TraceSet
from experiments.registry import experiment_classes, paper_packages
from runkinds.registry import KINDS, kind_of, metrics_roots
from schemes.registry import SCHEME_REGISTRY

DOC = Path("docs/ARCHITECTURE.md")
# Registries that import every kind or every scheme family: a paper's runs use some.
DISPATCH = ("runkinds.registry", SCHEME_REGISTRY)
_SECTION = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end "
                      r"generated -->)", re.DOTALL)


@dataclass(frozen=True)
class Span:
    paper: str
    experiments: tuple[str, ...]
    inside: tuple[str, ...]  # repo-relative files of its folder
    own: tuple[str, ...]  # outside its folder, used by no other paper
    shared: tuple[str, ...]  # outside its folder, used by other papers too


def lines_of(paths: tuple[str, ...]) -> int:
    """Their lines, for a report beside the table (the table counts files: lines move with
    every edit)."""
    return sum(len((REPO_ROOT / p).read_text(errors="replace").splitlines()) for p in paths)


def paper_code(package: str) -> set[str]:
    """Every file a paper's code consists of (see the module's docstring)."""
    empty = TraceSet([], Path("/nonexistent"), manifest={})
    folder = f"experiments.{package}"
    modules = [m for m in _package_modules(folder)]
    files = set(identity(CodeRoots(tuple(modules), stop_at=DISPATCH)).files)
    for cls in experiment_classes():
        if cls.__module__.split(".")[1] != package:
            continue
        for quick in (True, False):
            for spec in cls(empty).matrix(quick):
                files |= set(identity(kind_of(spec).code_roots(spec)).files)
                files |= set(identity(metrics_roots(kind_of(spec))).files)
    return files


def _package_modules(package: str) -> list[str]:
    """The package's modules but its command (app code, whose imports are the app's)."""
    base = REPO_ROOT / package.replace(".", "/")
    return [package] + [f"{package}.{p.stem}" for p in sorted(base.glob("*.py"))
                        if p.stem not in ("__init__", "commands")]


def spans() -> list[Span]:
    code = {p: paper_code(p) for p in paper_packages()}
    out = []
    for paper, files in code.items():
        folder = f"experiments/{paper}/"
        others = set().union(*(f for q, f in code.items() if q != paper))
        outside = sorted(f for f in files if not f.startswith(folder))
        names = tuple(c.name for c in experiment_classes()
                      if c.__module__.split(".")[1] == paper)
        out.append(Span(paper, names, tuple(sorted(f for f in files if f.startswith(folder))),
                        tuple(f for f in outside if f not in others),
                        tuple(f for f in outside if f in others)))
    return out


def papers_table() -> str:
    lines = ["| paper (folder) | experiments | its folder | outside it, its own only | "
             "shared with other papers |", "|---|---|---|---|---|"]
    for s in spans():
        own_dirs = sorted({f.rsplit("/", 1)[0] + "/" for f in s.own})
        lines.append(f"| `experiments/{s.paper}/` | {', '.join(f'`{e}`' for e in s.experiments)}"
                     f" | {len(s.inside)} files | {len(s.own)} files"
                     + (f" ({', '.join(f'`{d}`' for d in own_dirs)})" if own_dirs else "")
                     + f" | {len(s.shared)} files |")
    return "\n".join(lines) + "\n"


def kinds_table() -> str:
    empty = TraceSet([], Path("/nonexistent"), manifest={})
    users: dict[str, list[str]] = {name: [] for name in KINDS}
    for cls in experiment_classes():
        kinds = {kind_of(s).name for q in (True, False) for s in cls(empty).matrix(q)}
        for name in sorted(kinds):
            users[name].append(cls.name)
    lines = ["| kind (`topology`) | package | measures with | metrics from | planned by |",
             "|---|---|---|---|---|"]
    for name, kind in KINDS.items():
        package = kind.measure_module.rsplit(".", 1)[0]
        closure = module_closure([kind.measure_module], stop_at=DISPATCH)
        lines.append(f"| `{name}` | `{package.replace('.', '/')}/` | `{kind.measure_module}` "
                     f"({len(closure)} modules) | `{kind.metrics_module}` | "
                     f"{', '.join(f'`{u}`' for u in users[name]) or 'none yet'} |")
    return "\n".join(lines) + "\n"


GENERATORS = {"papers": papers_table, "kinds": kinds_table}


def regenerate(text: str) -> str:
    """The document with every generated section written afresh."""
    def fill(match: re.Match[str]) -> str:
        make = GENERATORS.get(match.group("name"))
        if make is None:
            raise ValueError(f"{DOC}: no generator for section {match.group('name')!r}")
        return match.group(1) + make() + match.group(4)
    return _SECTION.sub(fill, text)


def write(root: Path = REPO_ROOT) -> Path:
    path = root / DOC
    path.write_text(regenerate(path.read_text()))
    return path
