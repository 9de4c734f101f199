"""The page of a comparison (`repro compare`): one self-contained HTML file, beside the
report by default, readable offline; the same content as the command's output, every cell
metric included."""
from __future__ import annotations

import time
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.publish.compare import Comparison
from app.publish.noise import NOT_JUDGED, TESTS_TEXT

TEMPLATES = Path(__file__).parent / "templates"


def write_page(c: Comparison, out: Path) -> Path:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    page = env.get_template("compare.html.j2").render(
        c=c, tests=TESTS_TEXT, NOT_JUDGED=NOT_JUDGED,
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    return out
