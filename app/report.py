"""results/index.html: every experiment's figures, tables and failures on one page.

Built from artifacts only, so it can be regenerated at any time without rerunning.
"""
from __future__ import annotations

import csv
import html
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from analysis.summary import failed_runs, finished_runs
from core.paths import ProjectPaths
from core.results import experiment_store
from experiments.base import Experiment

TEMPLATES = Path(__file__).parent / "templates"


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    if not path.exists():
        return [], []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return (rows[0], rows[1:]) if rows else ([], [])


def _section(paths: ProjectPaths, exp: Any) -> dict[str, Any]:
    store = experiment_store(paths.results_dir, exp.name)
    figures = sorted(p.relative_to(paths.results_dir).as_posix()
                     for p in store.root.glob("*.png")) if store.root.is_dir() else []
    tables = []
    if store.root.is_dir():
        for csv_path in sorted(store.root.glob("*.csv")):
            header, rows = _read_csv(csv_path)
            tables.append({"name": csv_path.name,
                           "href": csv_path.relative_to(paths.results_dir).as_posix(),
                           "header": header, "rows": rows})
    records = finished_runs(store) if store.runs_dir.is_dir() else []
    environment = records[-1].meta.get("environment", {}) if records else {}
    return {"name": exp.name, "title": exp.title, "figures": figures, "tables": tables,
            "runs": len(records), "failures": failed_runs(store), "environment": environment}


def write_report(paths: ProjectPaths, experiments: list[Experiment]) -> Path:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    sections = [_section(paths, exp) for exp in experiments]
    page = env.get_template("index.html.j2").render(
        sections=sections, generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"), escape=html.escape)
    out = paths.results_dir / "index.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    return out
