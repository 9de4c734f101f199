"""The cc benchmark's pure parts: cwnd traces, differences, and what it says with a fake runner."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from bench.cc import (COMPARED, LINKS, SideRun, bench_spec, cwnd_difference, cwnd_series,
                      kernel_fix, main, metric_differences, run_bench)
from core.paths import ProjectPaths
from core.runspec import RunSpec

UNAVAILABLE = ("TCP congestion control 'vegas' is not available (impl=kernel).\n"
               "`modprobe tcp_vegas` failed (exit 1): modprobe: FATAL: Module tcp_vegas "
               "not found")


class FakeRunner:
    """Answers every spec with fixed metrics per side; remembers what it was asked."""

    def __init__(self, fail: set[tuple[str, str]] | None = None) -> None:
        self.specs: list[RunSpec] = []
        self.fail = fail or set()

    def __call__(self, spec: RunSpec) -> SideRun:
        self.specs.append(spec)
        side = spec.param("cc_impl")
        link = next(c.name for c in LINKS if c.data_trace == spec.data_trace)
        if (link, side) in self.fail:
            return SideRun(False, "RunInvalid: boom", {}, None, f"failed/{link}-{side}")
        kernel = side == "kernel"
        metrics = {"throughput_mbps": 10.0 if kernel else 9.0, "p95_e2e_delay_ms": 50.0,
                   "queue_occupancy_median_pkts": 3.0 if kernel else 4.0,
                   "cwnd_median_pkts": 20.0, "cc_used": "vegas" if kernel else "bpf_vegas",
                   "cc_provider": "module" if kernel else "ebpf", "loss_episodes": 0,
                   "tcp_probe_status": "recorded"}
        cwnd = np.full(50, 20.0) if kernel else np.full(40, 22.0)
        return SideRun(True, "", metrics, cwnd, f"runs/{link}-{side}")


def _bench(runner: FakeRunner, reason: str | None) -> tuple[int, dict, list[str]]:
    lines: list[str] = []
    status, result = run_bench("vegas", 5.0, runner, lambda variant: reason,
                               modules_supported=False, say=lines.append)
    return status, result, lines


def test_cwnd_series_holds_the_last_sample_at_each_step() -> None:
    t = np.array([10.0, 10.05, 10.25, 10.31])
    cwnd = np.array([10, 12, 20, 7])
    assert list(cwnd_series(t, cwnd, 0.1)) == [10, 12, 12, 20]
    assert cwnd_series(np.zeros(0), np.zeros(0)).size == 0


def test_cwnd_difference_over_the_common_span() -> None:
    d = cwnd_difference(np.array([10.0, 10, 10, 10]), np.array([12.0, 8, 10]), step_s=0.1)
    assert d == {"compared_s": 0.3, "mean_pkts": 0.0, "median_abs_pkts": 2.0,
                 "max_abs_pkts": 2.0, "mean_abs_relative": pytest.approx(4 / 3 / 10)}
    assert cwnd_difference(np.zeros(0), np.array([1.0])) is None


def test_metric_differences_are_ebpf_minus_kernel() -> None:
    d = metric_differences({"throughput_mbps": 10.0, "p95_e2e_delay_ms": 0.0},
                           {"throughput_mbps": 9.0, "p95_e2e_delay_ms": 5.0})
    assert d["throughput_mbps"] == {"kernel": 10.0, "ebpf": 9.0, "ebpf_minus_kernel": -1.0,
                                    "relative": pytest.approx(-0.1)}
    assert d["p95_e2e_delay_ms"]["relative"] is None  # nothing to divide by
    assert d["cwnd_median_pkts"] is None


def test_each_side_is_forced_to_its_provider() -> None:
    spec = bench_spec("vegas", LINKS[0], "kernel", 7)
    assert (spec.scheme, spec.param("cc_impl"), spec.duration_s) == ("vegas", "kernel", 7)
    assert bench_spec("vegas", LINKS[0], "ebpf", 7).run_id() != spec.run_id()


def test_unavailable_kernel_is_named_with_its_fix_and_the_ebpf_side_still_runs() -> None:
    runner = FakeRunner()
    status, result, lines = _bench(runner, UNAVAILABLE)
    assert status == 0
    assert [s.param("cc_impl") for s in runner.specs] == ["ebpf"] * len(LINKS)
    kernel = result["kernel"]
    assert kernel["status"] == "unavailable" and kernel["module"] == "tcp_vegas"
    assert kernel["reason"] == UNAVAILABLE
    assert "CONFIG_TCP_CONG_VEGAS" in kernel["fix"]
    assert result["ebpf"] == {"status": "ran", "name": "bpf_vegas"}
    assert result["ok"] is True
    for link in result["links"]:
        assert link["kernel"] == {"status": "unavailable"} and link["difference"] is None
        assert link["ebpf"]["cc_used"] == "bpf_vegas"
    text = "\n".join(lines)
    assert "kernel side UNAVAILABLE" in text and "fix: this kernel cannot load modules" in text
    assert "modprobe: FATAL: Module tcp_vegas not found" in text  # modprobe's own words


def test_both_sides_are_compared_per_link() -> None:
    runner = FakeRunner()
    status, result, lines = _bench(runner, None)
    assert status == 0
    assert [(s.data_trace, s.param("cc_impl")) for s in runner.specs] == \
        [(link.data_trace, side) for link in LINKS for side in ("kernel", "ebpf")]
    assert result["kernel"] == {"status": "ran", "name": "vegas"}
    diff = result["links"][0]["difference"]
    assert set(diff["metrics"]) == set(COMPARED)
    assert diff["metrics"]["throughput_mbps"]["ebpf_minus_kernel"] == -1.0
    assert diff["cwnd_trace"]["compared_s"] == pytest.approx(4.0)  # the shorter trace
    assert diff["cwnd_trace"]["median_abs_pkts"] == 2.0
    assert any(line.startswith("  ebpf - kernel: throughput -1.00 Mbit/s (-10.0%)")
               for line in lines)


def test_a_failed_run_fails_the_bench_and_says_why() -> None:
    status, result, lines = _bench(FakeRunner(fail={("trace", "ebpf")}), UNAVAILABLE)
    assert status == 1 and result["ok"] is False
    assert result["ebpf"]["status"] == "failed"
    assert result["links"][1]["ebpf"] == {"status": "failed", "reason": "RunInvalid: boom",
                                          "run_dir": "failed/trace-ebpf"}
    assert any("FAILED: RunInvalid: boom" in line for line in lines)


def test_kernel_fix_depends_on_module_support() -> None:
    assert "modprobe tcp_bic" in kernel_fix("bic", modules_supported=True)
    assert "CONFIG_MODULES" in kernel_fix("bic", modules_supported=False)


@pytest.mark.parametrize("variant", [None, "cubic", "westwood"])
def test_a_variant_without_an_ebpf_version_is_a_usage_error(variant, capsys) -> None:
    args = argparse.Namespace(variant=variant, seconds=None)
    assert main(ProjectPaths(), None, args) == 2  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert "vegas, bic, hybla" in err


def test_the_json_is_the_last_line(monkeypatch, tmp_path, capsys) -> None:
    import bench.cc as cc
    runner = FakeRunner()
    monkeypatch.setattr(cc, "ExecutorRunner", lambda paths, traces, out: runner)
    monkeypatch.setattr(cc, "resolver_kernel_check", lambda resolver: lambda v: UNAVAILABLE)
    args = argparse.Namespace(variant="vegas", seconds=3.0)
    assert main(ProjectPaths(results_override=tmp_path), None, args) == 0  # type: ignore[arg-type]
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last)
    assert result["kernel"]["status"] == "unavailable" and result["seconds"] == 3.0
