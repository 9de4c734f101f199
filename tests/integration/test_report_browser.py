"""The report in a real browser: headless Chromium through chromedriver (Selenium), at a
desktop width and a phone's. The first screen at 1280 x 800 must show a figure, every
image must load and every link resolve (files in the results folder, anchors in the page
and in the rendered docs), every experiment that ran must show each of its claims,
nothing may scroll sideways, and nothing may come from the network. Screenshots are kept
in the test's temporary folder (the path is printed).

Needs Debian's chromium, chromium-driver and python3-selenium (setup/install.sh
installs them when tests are run: ./run_tests.sh). On Ubuntu those two names only lead
to the chromium snap (transitional debs chromium-browser, chromium-chromedriver), whose
private /tmp hides this test's report and the driver's profile: setup leaves them out
there and this test fails saying so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runkinds.trace_path.metrics import REVERSE
from app.publish.report import write_report
from core.paths import ProjectPaths
from core.results import experiment_store
from core.run_span import BOTH, DIRECTIONS
from core.runspec import RunSpec
from core.traces import TraceSet
from app.recorded_options import pinned, write_record
from experiments.registry import all_experiments
from tests.unit.fake_runs import add_done, add_failed

WIDTHS = (1280, 390)
SCHEME_SHAPE = {  # scheme -> (share of capacity, e2e delay ms): plausible, not measured
    "sprout": (0.45, 120), "sprout-ewma": (0.75, 260), "cubic": (0.8, 3000),
    "vegas": (0.5, 250), "reno": (0.78, 2500), "bic": (0.8, 3200), "hybla": (0.8, 2800),
    "bbr": (0.85, 600), "fixed-window": (0.5, 300)}


def _metrics(spec: RunSpec, index: int) -> dict[str, Any]:
    share, delay = SCHEME_SHAPE.get(spec.scheme, (0.5, 300))
    window = spec.param("window")
    if window is not None:  # the contest's sweep: more window, more of both
        share, delay = min(0.99, window / 60), 110 + 9 * window
    confidence = spec.param("confidence")
    if confidence is not None:
        share, delay = 0.4 + 0.4 * confidence, 80 + 600 * confidence
    capacity = 5.0
    metrics: dict[str, Any] = {
        "throughput_mbps": capacity * share, "capacity_mbps": capacity, "utilization": share,
        "p95_e2e_delay_ms": delay + 20.0, "p95_signal_delay_ms": delay,
        "p95_queue_delay_ms": delay, "power": capacity * share / (delay / 1000), "score": -4.0,
        "signal_delay_first_ms": 0, "signal_delay_last_ms": 59_000,
        "lateness_p99_us": 300 if index % 17 else 4000, "ack_lateness_p99_us": 200,
        "lateness_ok": bool(index % 17), "cpu_steal_pct": 0.4}
    if spec.scheme in ("cubic", "vegas", "reno", "bic", "hybla", "bbr"):
        metrics.update(cc_requested=spec.scheme, cc_used=spec.scheme,
                       cc_provider="ebpf" if spec.scheme in ("vegas", "hybla") else "builtin")
    if spec.option(DIRECTIONS) == BOTH:  # a run that loads both directions scores both
        metrics[REVERSE] = dict(metrics)
    return metrics


@pytest.fixture
def report(paths: ProjectPaths, traces: TraceSet) -> Path:
    """A results tree built by hand for every experiment's quick matrix, with one failed
    run per experiment, its options recorded as `repro run` records them, its figures
    drawn and the report written."""
    experiments = [pinned(exp) for exp in all_experiments(traces)]
    for exp in experiments:
        store = experiment_store(paths.results_dir, exp.name)
        write_record(store.root, exp)
        specs = exp.matrix(quick=True)
        for i, spec in enumerate(specs[:-1]):
            add_done(store, spec, **_metrics(spec, i))
        add_failed(store, specs[-1], "SchemeUnavailable: no provider for this scheme here "
                   "(the fix is named in the run's FAILED.json)")
        exp.make_figures(store, store.root)
    return write_report(paths, experiments)


def _viewport(driver: Any, width: int, height: int) -> None:
    """A phone's or a desktop's viewport (a window cannot be made narrower than ~500 px)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def test_the_first_screen_shows_a_figure(report: Path, browser: Any, tmp_path: Path) -> None:
    """At 1280 x 800, before any scroll: a paper's headline figure, loaded, on screen."""
    _viewport(browser, 1280, 800)
    browser.get(report.as_uri())
    shown = browser.execute_script(
        "return Array.from(document.images).filter(i => { const r = i.getBoundingClientRect();"
        " return r.top < window.innerHeight && r.bottom > 0 && r.height > 100 && i.complete"
        " && i.naturalWidth > 0 && i.closest('#glance'); }).map(i => i.getAttribute('src'))")
    assert shown, "no figure on the first screen at 1280 x 800"
    before = browser.execute_script(
        "const t = document.querySelector('table'); return t ? t.getBoundingClientRect().top"
        " : 1e9")
    assert before >= 800, f"a table starts {before} px down, on the first screen"
    shot = tmp_path / "first-screen-1280x800.png"
    browser.save_screenshot(str(shot))
    print(f"screenshot: {shot} (figures on it: {shown})")


def _target(report: Path, href: str) -> tuple[Path | None, str]:
    """(the file a relative link names, or None for the page itself; its anchor)."""
    path, _, anchor = href.partition("#")
    return ((report.parent / path) if path else None), anchor


def test_every_link_and_image_resolves(report: Path, browser: Any) -> None:
    _viewport(browser, 1280, 900)
    browser.get(report.as_uri())
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    ids = set(browser.execute_script(
        "return Array.from(document.querySelectorAll('[id]')).map(e => e.id)"))
    assert hrefs
    broken = []
    for href in hrefs:
        assert "://" not in href, f"a link leaves the results folder: {href}"
        target, anchor = _target(report, href)
        if target is None:
            if anchor not in ids:
                broken.append(href)
        elif not target.exists():
            broken.append(href)
        elif anchor and f'id="{anchor}"' not in target.read_text(errors="replace"):
            broken.append(href)
    assert not broken, f"links that do not resolve: {broken[:10]}"
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete,"
        " i.naturalWidth])")
    assert images, "the report shows no figure"
    missing = [src for src, complete, natural in images if not complete or natural == 0]
    assert not missing, f"images that did not load: {missing}"


@pytest.mark.parametrize("width", WIDTHS)
def test_report_in_headless_chromium(report: Path, browser: Any, width: int,
                                     tmp_path: Path, traces: TraceSet) -> None:
    _viewport(browser, width, 900)
    browser.get(report.as_uri())
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete,"
        " i.naturalWidth])")
    assert images, "the report shows no figure"
    broken = [src for src, complete, natural in images if not complete or natural == 0]
    assert not broken, f"images that did not load: {broken}"
    sections = [e.name for e in all_experiments(traces)]
    claims = browser.execute_script(
        "return Array.from(document.querySelectorAll('article')).map(s => "
        "[s.id, s.querySelectorAll('[data-claim]').length])")
    assert {sid for sid, rows in claims if rows} == set(sections), claims
    for exp in all_experiments(traces):
        shown = dict(claims)[exp.name]
        assert shown == len(exp.claims), f"{exp.name}: {shown} of {len(exp.claims)} claims shown"
    sideways = browser.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]")
    assert sideways[0] <= sideways[1], f"the page scrolls sideways at {width} px: {sideways}"
    wide = browser.execute_script(
        "return Array.from(document.querySelectorAll('body *')).filter(e => "
        "e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll'))"
        ".map(e => e.tagName + '.' + e.className).slice(0, 5)")
    assert not wide, f"elements wider than the {width} px page: {wide}"
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').map(r => r.name)")
    remote = [url for url in fetched if not url.startswith("file://")]
    assert not remote, f"the report fetched from the network: {remote}"
    # The eight-panel figure spans the page at a desktop width (not squeezed beside a panel).
    if width >= 1000:
        fig7 = browser.execute_script(
            "const i = Array.from(document.images).find(i => i.src.endsWith('/fig7.png')"
            " && !i.closest('#glance'));"
            "return i ? i.getBoundingClientRect().width : 0")
        assert fig7, "no fig7.png in the report: are the traces here? (NETREPRO_TRACES)"
        assert fig7 > 900, f"fig7 is drawn {fig7} px wide"
    height = browser.execute_script("return document.documentElement.scrollHeight")
    _viewport(browser, width, min(height, 16000))
    shot = tmp_path / f"report-{width}.png"
    browser.save_screenshot(str(shot))
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
