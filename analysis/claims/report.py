"""An experiment's claims written beside its figures: claims.json (the report's dict,
read back by verify) and claims.md (the table a reader sees)."""
from __future__ import annotations

from pathlib import Path

from analysis.claims.model import FAIL, NOT_RUN, PASS, ClaimReport
from core.results import write_json


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_markdown(report: ClaimReport) -> str:
    counts = report.counts()
    lines = [f"# Claims: {report.experiment}", "",
             f"Runs on record: the {report.mode} mode. {counts[PASS]} pass, {counts[FAIL]} fail, "
             f"{counts[NOT_RUN]} not run.", "",
             "| claim | source | paper | ours | tolerance | verdict | runs |",
             "|---|---|---:|---:|---|---|---:|"]
    for r in report.results:
        verdict = r.verdict + (f": {r.why}" if r.why else "")
        runs = r.runs_text()
        lines.append(f"| **{_cell(r.id)}** {_cell(r.text)} | {_cell(r.source)} | "
                     f"{_cell(r.paper)} | {_cell(r.ours)} | {_cell(r.tolerance)} | "
                     f"{_cell(verdict)} | {runs} |")
    lines += ["", "Why each tolerance is what it is (fixed before any run):", ""]
    lines += [f"- **{r.id}** ({r.kind}, holds for: {r.mode}): {r.reason}" for r in report.results]
    return "\n".join(lines) + "\n"


def write_claims(report: ClaimReport, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "claims.json", out_dir / "claims.md"
    write_json(json_path, report.to_dict())
    md_path.write_text(claims_markdown(report))
    return [json_path, md_path]
