"""results/index.html from hand-built results: claims beside the paper's values, failures,
environment, run links; nothing fetched from the network."""
from __future__ import annotations

import json
import re

from analysis.claims.checks import EveryGroup
from analysis.claims.model import BOTH, Cause, Claim
from app.publish.report import png_size, write_report
from core.paths import ProjectPaths
from experiments.registry import all_experiments
from tests.unit.fake_runs import add_failed
from tests.unit.test_verify import EXP, build


def test_report_shows_claims_failures_environment_and_runs(tmp_path):
    store = build(tmp_path)
    add_failed(store, EXP.matrix(quick=True)[0], "TraceMissing: trace X is missing")
    EXP.make_figures(store, store.root)
    everything = all_experiments(EXP.traces)
    page = write_report(ProjectPaths(results_override=tmp_path), everything).read_text()
    claims = json.loads((store.root / "claims.json").read_text())
    assert claims["experiment"] == EXP.name and claims["mode"] == "quick"
    assert (store.root / "claims.md").is_file()
    assert page.count('<table class="claims passed">') == 1  # the others did not run
    assert 'name="viewport"' in page
    assert "throughput-rises" in page and "0.23 Mbit/s" in page
    assert "TraceMissing: trace X is missing" in page and "finished on a later attempt" in page
    # Claims not run collapse into one line per reason.
    assert "NOT RUN</span>: 12 full-run claims: run `./repro run contest-warmup-a`" in page
    assert "kernel 6.1-test" in page and "Emulator lateness" in page
    for run in store.done_runs():
        assert f'href="{EXP.name}/runs/{run.name}/"' in page
    assert "Not run yet: <code>./repro run sprout-fig7 --quick</code>" in page
    remote = re.findall(r'(?:src|href)="(https?:[^"]*)"', page)
    assert not remote
    for src in re.findall(r'<img src="([^"]+)"', page):
        assert png_size(tmp_path / src)[0] > 0


def test_report_counts_and_marks_an_invalid_run(tmp_path):
    store = build(tmp_path)
    run = sorted(store.done_runs())[0]
    metrics = json.loads((run / "metrics.json").read_text())
    metrics.update(window_valid=False, window_verdict="absurd kernel window in the reverse "
                   "flow: snd_cwnd 1 (ssthresh 2183148773, state 4)")
    (run / "metrics.json").write_text(json.dumps(metrics))
    page = write_report(ProjectPaths(results_override=tmp_path), [EXP]).read_text()
    assert "5 of 6 planned runs finished" in page
    assert "1 finished but invalid</span> (left out of figures and claims)" in page
    assert f'{run.name}</a> <span class="fail">(invalid: absurd kernel window in the reverse ' \
        "flow: snd_cwnd 1 (ssthresh 2183148773, state 4))" in page
    assert "invalid run: absurd kernel window in the reverse flow" in page  # missing runs


def test_report_states_the_tcp_runs_receive_buffer_ceiling(tmp_path):
    store = build(tmp_path)
    run = sorted(store.done_runs())[0]
    metrics = json.loads((run / "metrics.json").read_text())
    metrics.update(cc_requested="cubic", cc_provider="builtin")
    (run / "metrics.json").write_text(json.dumps(metrics))
    meta = json.loads((run / "meta.json").read_text())
    meta.update(tcp_buffer_profile="linux-3.2", tcp_buffers={
        "sender": {"tcp_rmem": "4096 87380 4194304"},
        "receiver": {"tcp_rmem": "4096 87380 4194304"}})
    (run / "meta.json").write_text(json.dumps(meta))
    page = write_report(ProjectPaths(results_override=tmp_path), [EXP]).read_text()
    assert "TCP receive buffer maximum" in page
    assert '<span class="badge">4194304 bytes, linux-3.2 profile</span>' in page


def test_report_counts_runs_whose_end_hosts_were_late(tmp_path):
    from core.results import ExperimentStore
    from tests.unit.fake_runs import add_logged_run
    from tests.unit.test_verify import RISING
    store = ExperimentStore(tmp_path / EXP.name)
    for spec in EXP.matrix(quick=True):
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay,
                       sender_reaction_p99_us=4500 if spec.param("window") == 1 else 300)
    page = write_report(ProjectPaths(results_override=tmp_path), [EXP]).read_text()
    assert "1 with the end hosts late" in page
    assert "worst p99 4500 µs; 1 runs above the 2.0 ms limit" in page
    assert page.count("(hosts late)") == 1
    assert "6 (1 hosts late)" in page  # a claim's runs


def test_report_leaves_runs_outside_the_plan_out_of_its_timing_counts(tmp_path):
    """Full runs on time beside late quick runs still on record: the page counts the plan's,
    and lists the others marked as not counted."""
    from core.results import ExperimentStore
    from tests.unit.fake_runs import add_logged_run
    from tests.unit.test_verify import RISING
    store = ExperimentStore(tmp_path / EXP.name)
    full = EXP.matrix(quick=False)
    quick_only = [s for s in EXP.matrix(quick=True) if s not in full]
    for spec in quick_only:
        every, delay = RISING[spec.param("window")]
        add_logged_run(store, spec, every, delay, lateness_p99_us=358_000)
    for spec in full:
        every, delay = RISING.get(spec.param("window"), (1, 150))
        add_logged_run(store, spec, every, delay, lateness_p99_us=150)
    page = write_report(ProjectPaths(results_override=tmp_path), [EXP]).read_text()
    assert "full mode" in page and "with the emulator late" not in page
    assert "worst p99 150 µs; 0 runs late (p99 lateness above 2 ms, or under 95%" in page
    assert page.count("(not in this plan: not counted)") == len(quick_only)
    assert f"{len(quick_only)} finished runs on record that this plan does not use" in page


class _WithAFailingClaim(type(EXP)):  # type: ignore[misc]
    """Warm-up A with one more claim that fails in every cell, its cause on record."""
    claims = type(EXP).claims + (Claim(
        id="delay-under-1-ms", text="every window's p95 signal delay is under 1 ms",
        source="a test", paper="(our check: a test's)", mode=BOTH,
        reason="made to fail", check=EveryGroup("p95_signal_delay_ms", "<=", 1.0, ("window",)),
        causes=(Cause("docs/prr-fig2.md#the-base-pattern-at-64-kb-under-cubic"),)),)
    headline = ("throughput-vs-delay",)
    headline_caption = "the sweep"


def test_the_first_screen_comes_before_any_table_and_fails_come_first(tmp_path):
    from core.results import ExperimentStore
    from tests.unit.fake_runs import add_logged_run
    from tests.unit.test_verify import RISING
    store = build(tmp_path)
    exp = _WithAFailingClaim(EXP.traces)
    exp.make_figures(store, store.root)
    for spec in EXP.matrix(quick=True)[:2]:  # what `repro run --force` leaves behind
        store._move_aside(store.run_dir(spec), "superseded")
    for spec in EXP.matrix(quick=True)[:2]:  # ... and the reruns that replaced them
        every, delay = RISING[spec.param("window")]
        add_logged_run(ExperimentStore(tmp_path / EXP.name), spec, every, delay)
    page = write_report(ProjectPaths(results_override=tmp_path), [exp]).read_text()
    glance, first_table = page.index('id="glance"'), page.index("<table")
    sections = page.index('<section class="paper"')
    assert glance < sections < first_table
    headline = re.findall(r'<img src="([^"]+)"', page[glance:sections])
    assert headline == [f"{EXP.name}/throughput-vs-delay.png"]
    assert re.search(r"1 of \d judged claims fail \(each with a measured cause\)", page)
    failed, passed = page.index('<table class="claims failed">'), \
        page.index('<table class="claims passed">')
    assert failed < passed
    # The cause links to its section, rendered into the results folder with that anchor.
    link = 'href="docs/prr-fig2.html#the-base-pattern-at-64-kb-under-cubic"'
    assert link in page[failed:passed]
    doc = (tmp_path / "docs" / "prr-fig2.html").read_text()
    assert 'id="the-base-pattern-at-64-kb-under-cubic"' in doc
    for image in re.findall(r'<img[^>]*src="([^"]+)"', doc):
        assert (tmp_path / "docs" / image).is_file(), image
    assert "2 earlier runs replaced by a rerun (--force), not failures" in page
    assert "failed attempts" not in page.split('id="contest-warmup-a"')[1].split("<h4>")[0]
