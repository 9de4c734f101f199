"""results/index.html: a page that shows before it tells, and each experiment's claims.json /
claims.md beside its runs.

The first screen: one line per paper with its verdict, and each paper's headline figure
(experiments/base.py `headline`), beside the paper's own points where the figure draws
them. Then one section per paper, and in it each experiment: its figures, then its claims
grouped by verdict (app/publish/report_claims.py): FAILs first, each with its measured
cause linked to the section that shows it (rendered into results/docs/ by
app/publish/report_docs.py), then PASSes, then one line per reason for those not run; then
its tables, missing and failed runs, environment and run folders, folded.

Built from artifacts only, so it can be regenerated at any time without rerunning.
Self-contained: relative links inside the results folder, no fetch from the network,
readable from 390 px (a phone) to a desktop.
"""
from __future__ import annotations

import csv
import html
import struct
import time
from collections import Counter
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from analysis.claims.model import FAIL, NOT_RUN, PASS, ClaimReport
from analysis.claims.report import write_claims
from analysis.coverage import NOT_RUN as NOT_RUN_YET, Coverage, short_reason
from analysis.fidelity import LATE_RULE, emulator_late, worst_lateness_p99_us
from analysis.host_limits import receive_ceiling
from analysis.cpu_probe import cpus_were_missing
from analysis.host_timing import MAX_HOST_P99_US, hosts_late, worst_host_p99_us
from analysis.summary import failed_records, failed_runs, finished_runs
from core.paths import ProjectPaths
from core.results import ExperimentStore, experiment_store
from experiments.base import Experiment
from experiments.registry import papers
from app.publish.report_claims import group_claims
from app.publish.report_docs import cited_docs, link_docs, render_docs
from app.recorded_options import RecordError, as_recorded

TEMPLATES = Path(__file__).parent / "templates"
INLINE_TABLE_ROWS = 60  # a CSV this short is also shown in the page (folded); longer: linked
DOCS_DIR = "docs"  # the cited write-ups, rendered, under the results folder


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    if not path.exists():
        return [], []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return (rows[0], rows[1:]) if rows else ([], [])


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's header; (0, 0) when it is not a readable PNG."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return 0, 0
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _figures(store: ExperimentStore, results: Path) -> tuple[list[dict], list[dict]]:
    """(main figures, per-panel figures). A tall or large figure spans the page's width."""
    main: list[dict] = []
    panels: list[dict] = []
    for path in sorted(store.root.glob("*.png")):
        width, height = png_size(path)
        svg = path.with_suffix(".svg")
        fig = {"src": path.relative_to(results).as_posix(), "name": path.stem,
               "svg": svg.relative_to(results).as_posix() if svg.exists() else None,
               "wide": height > width or width > 2000}
        (panels if path.stem.startswith("panel-") else main).append(fig)
    return main, panels


def _environment(records: list[Any]) -> dict[str, Any]:
    """Kernel, distribution and code of the runs, which provider served each TCP variant
    and with which receive buffer ceiling, the emulator's lateness and the CPU steal."""
    envs: Counter[tuple[str, str, str, str]] = Counter()
    providers: dict[str, Counter] = {}
    ceilings: Counter[str] = Counter()
    late, worst_late, steal = 0, None, []
    late_machine, late_no_probe = 0, 0  # late runs a CPU stall explains; with no probe
    host_late, host_worst = 0, None
    for r in records:
        env = r.meta.get("environment") or {}
        envs[(env.get("kernel", "?"), env.get("distribution", "?"),
              str((r.meta.get("code") or {}).get("version") or env.get("code_version", "?")),
              str(env.get("git_commit") or "?")[:12])] += 1
        m = r.metrics
        if m.get("cc_requested"):
            providers.setdefault(m["cc_requested"], Counter())[str(m.get("cc_provider"))] += 1
            ceilings[receive_ceiling(r.meta)] += 1
        late += emulator_late(m)
        if emulator_late(m):
            missing = cpus_were_missing(m.get("emulator_worst_stall_us"),
                                        m.get("cpu_held_during_it_us"))
            late_no_probe += missing is None
            late_machine += missing is True
        run_late = worst_lateness_p99_us(m)
        if run_late is not None:
            worst_late = max(worst_late or 0, run_late)
        host_late += hosts_late(m)
        host_p99 = worst_host_p99_us(m)
        if host_p99 is not None:
            host_worst = max(host_worst or 0, host_p99)
        if m.get("cpu_steal_pct") is not None:
            steal.append(float(m["cpu_steal_pct"]))
    return {
        "machines": [{"kernel": k, "distribution": d, "code": c, "commit": g, "runs": n}
                     for (k, d, c, g), n in envs.most_common()],
        "providers": {v: dict(c) for v, c in sorted(providers.items())},
        "tcp_rmem_max": dict(sorted(ceilings.items())),
        "late": late, "worst_lateness_us": worst_late,
        "late_machine": late_machine, "late_no_probe": late_no_probe,
        "late_rule": LATE_RULE,
        "hosts_late": host_late, "worst_host_us": host_worst,
        "host_limit_ms": MAX_HOST_P99_US / 1000,
        "steal_max": max(steal) if steal else None,
        "steal_mean": sum(steal) / len(steal) if steal else None,
    }


def _section(paths: ProjectPaths, exp: Experiment) -> dict[str, Any]:
    results = paths.results_dir
    store = experiment_store(results, exp.name)
    section: dict[str, Any] = {"name": exp.name, "title": exp.title, "present": False}
    if not store.root.is_dir():
        return section
    records = finished_runs(store) if store.runs_dir.is_dir() else []
    problem = ""
    try:  # judged against the options its runs were made with, not this machine's choices
        exp = as_recorded(exp, store.root)
    except RecordError as e:
        problem = str(e)
    if problem:  # the plan is unknown: nothing is judged, the stored claims.json stays
        cov, claims = Coverage(quick=False, trials=1, cells=()), ClaimReport(exp.name, "", ())
    else:
        cov = exp.coverage(store)
        claims = exp.claims_on(cov, exp.claim_rows(cov))
        write_claims(claims, store.root)
    section.update(options_problem=problem, options=dict(exp.chosen) if exp.options else {})
    main, panels = _figures(store, results)
    tables = []
    for csv_path in sorted(store.root.glob("*.csv")):
        header, rows = _read_csv(csv_path)
        tables.append({"name": csv_path.name, "href": csv_path.relative_to(results).as_posix(),
                       "header": header, "rows": rows if len(rows) <= INLINE_TABLE_ROWS else [],
                       "count": len(rows)})
    done_specs = {r.spec for r in records}
    planned_specs = {c.spec for c in cov.cells}
    failed = failed_records(store)
    other_plans = {f.path.name for f in failed if not problem and f.spec not in planned_specs}
    failures: list[dict[str, Any]] = [
        {"name": name, "reason": short_reason(reason, 300),
         "href": (store.failed_dir / name).relative_to(results).as_posix(),
         "in_plan": name not in other_plans}
        for name, reason in failed_runs(store)]
    finished_later = {f.path.name for f in failed if f.spec in done_specs}
    for f in failures:
        f["since_finished"] = f["name"] in finished_later
    headline = exp.headline_figure(store.root)
    missing = [{"label": c.spec.label(), "reason": short_reason(c.reason, 300),
                "never_run": c.reason == NOT_RUN_YET} for c in cov.missing()]
    # The plan's runs are the ones its timing is judged on; the others on record (another
    # mode's, other options', or redone since) are listed, marked, and not counted.
    judged = records if problem else cov.records()
    in_plan = {r.path for r in judged}
    runs = [{"name": r.path.name, "href": r.path.relative_to(results).as_posix() + "/",
             "late": emulator_late(r.metrics), "scheme": r.spec.scheme,
             "hosts_late": hosts_late(r.metrics), "in_plan": r.path in in_plan,
             "provider": r.metrics.get("cc_provider"), "invalid": exp.invalid_reason(r)}
            for r in records]
    in_plan_failures = [f for f in failures if f["in_plan"]]
    section.update(
        present=True, mode="unknown" if problem else "quick" if cov.quick else "full",
        planned=len(cov.cells),
        finished=sum(c.done for c in cov.cells), claims=claims.results,
        groups=group_claims(claims.results, exp.name),
        counts=claims.counts(), claims_md=f"{exp.name}/claims.md",
        claims_json=f"{exp.name}/claims.json", figures=main, panels=panels, tables=tables,
        failures=failures, failed_in_plan=len(in_plan_failures),
        failed_other_plans=len(failures) - len(in_plan_failures),
        still_failing=sum(not f["since_finished"] for f in in_plan_failures),
        superseded=sum(1 for _ in store.superseded()),
        missing=missing, runs=runs, environment=_environment(judged),
        outside_plan=sum(not r["in_plan"] for r in runs),
        invalid=sum(bool(r["invalid"]) for r in runs),
        headline=headline[0].relative_to(results).as_posix() if headline else None,
        headline_caption=headline[1] if headline else "")
    return section


def _paper_sections(sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The experiments' sections grouped by paper, with each paper's verdict and headline
    figure; experiments no paper package declares come last, as their own group."""
    by_name = {s["name"]: s for s in sections}
    groups: list[tuple[str, str, list[dict[str, Any]]]] = []
    for paper in papers():
        mine = [by_name.pop(n) for n in paper.experiments if n in by_name]
        if mine:
            groups.append((paper.package, paper.title, mine))
    if by_name:
        groups.append(("other", "Other experiments", list(by_name.values())))
    groups.sort(key=lambda g: not any(s["present"] for s in g[2]))  # what ran first
    out = []
    for package, title, mine in groups:
        ran = [s for s in mine if s["present"]]
        counts = {v: sum(s["counts"][v] for s in ran) for v in (PASS, FAIL, NOT_RUN)}
        explained = sum(s["groups"].explained() for s in ran)
        headline = next((s for s in ran if s["headline"]), None)
        out.append({"id": f"paper-{package}", "title": title, "sections": mine, "ran": ran,
                    "counts": counts, "explained": explained,
                    "modes": sorted({s["mode"] for s in ran}),
                    "verdict": _verdict(counts, explained, ran, mine),
                    "headline": headline})
    return out


def _verdict(counts: dict[str, int], explained: int, ran: list[dict[str, Any]],
             mine: list[dict[str, Any]]) -> str:
    if not ran:
        return f"not run yet: ./repro run {mine[0]['name']} --quick"
    judged = counts[PASS] + counts[FAIL]
    if not judged:
        return f"nothing judged yet: {counts[NOT_RUN]} claims not run"
    if not counts[FAIL]:
        return f"holds: {counts[PASS]} of {judged} judged claims pass"
    causes = (f"{explained} with a measured cause" if explained < counts[FAIL]
              else "each with a measured cause")
    return f"{counts[FAIL]} of {judged} judged claims fail ({causes})"


def _cited(sections: list[dict[str, Any]]) -> list[str]:
    return [r.why for s in sections if s["present"] for r in s["claims"]]


def write_report(paths: ProjectPaths, experiments: list[Experiment]) -> Path:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    env.filters["link_docs"] = lambda text: Markup(link_docs(str(text)))
    sections = [_section(paths, exp) for exp in experiments]
    results = paths.results_dir
    render_docs(cited_docs(_cited(sections)), paths.root / "docs", results / DOCS_DIR)
    compare = results / "compare.html"
    page = env.get_template("index.html.j2").render(
        papers=_paper_sections(sections), generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        escape=html.escape, PASS=PASS, FAIL=FAIL, NOT_RUN=NOT_RUN,
        compare="compare.html" if compare.is_file() else None)
    out = results / "index.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    return out
