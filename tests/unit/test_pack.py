"""`repro pack` and `repro verify --bundle` on hand-built results: a bundle checked in
another directory gives the same verdicts; a changed byte, a missing file, an older
code version, a damaged archive and a member leaving the bundle are each reported."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Callable

import pytest

from app.publish.pack import MANIFEST, ROOT, pack, verify_bundle
from app.publish.verify import EXIT_FAILED, EXIT_OK, EXIT_UNCHECKED, emit
from core.paths import ProjectPaths
from tests.unit.fake_runs import trace_set, write_trace
from tests.unit.test_verify import EXP, build


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    build(results)
    traces_dir = tmp_path / "traces"
    write_trace(traces_dir, "Verizon-LTE-short.down", [1, 2, 3])
    write_trace(traces_dir, "Verizon-LTE-short.up", [1, 2, 3])
    out = io.StringIO()
    path = pack(ProjectPaths(results_override=results), [EXP], trace_set(traces_dir),
                tmp_path / "b.tar.xz", stream=out)
    assert path is not None and "wrote" in out.getvalue()
    return path


def check(path: Path, tmp_path: Path, name: str = "elsewhere"):
    report = verify_bundle(path, None, ProjectPaths(results_override=tmp_path / "none"),
                           keep=tmp_path / name)
    text = io.StringIO()
    code = emit(report, False, text)
    return code, text.getvalue(), report


def _read(tar: tarfile.TarFile, member: str | tarfile.TarInfo) -> bytes:
    f = tar.extractfile(member)
    assert f is not None, f"{member} is not a regular file in the bundle"
    return f.read()


def rewrite(path: Path, out: Path, change: Callable[[str, bytes], bytes | None],
            extra: dict[str, bytes] | None = None) -> Path:
    """A copy of the bundle with each member's bytes passed through `change` (None drops it)."""
    with tarfile.open(path, "r:*") as src, tarfile.open(out, "w:xz") as dst:
        for member in src:
            data = _read(src, member) if member.isfile() else b""
            new = change(member.name, data)
            if new is None:
                continue
            member.size = len(new)
            dst.addfile(member, io.BytesIO(new))
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
    return out


def test_a_bundle_checked_elsewhere_gives_the_same_verdicts(bundle, tmp_path):
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        manifest = json.loads(_read(tar, f"{ROOT}/{MANIFEST}"))
    assert names[0] == f"{ROOT}/{MANIFEST}"
    assert f"{ROOT}/traces/Verizon-LTE-short.down" in names
    assert all(len(e["sha256"]) == 64 for e in manifest["files"].values())
    assert manifest["code_version"] and manifest["environment"]["kernel"]
    assert manifest["experiments"][EXP.name]["claims"]["throughput-rises"] == "PASS"
    code, text, _ = check(bundle, tmp_path)
    assert code == EXIT_OK, text
    assert "every claim's verdict is the same as when packed" in text
    assert "hashes: " in text and "the reproduction holds" in text


def test_a_changed_byte_is_named(bundle, tmp_path):
    target = "/runs/"

    def flip(name: str, data: bytes) -> bytes:
        if target in name and name.endswith("data.log"):
            return data[:-2] + (b"9" if data[-2:-1] != b"9" else b"8") + data[-1:]
        return data

    code, text, _ = check(rewrite(bundle, tmp_path / "changed.tar.xz", flip), tmp_path)
    assert code == EXIT_FAILED
    assert "CHANGED (sha256 differs from the manifest): results/contest-warmup-a/runs/" in text


def test_a_missing_file_is_named(bundle, tmp_path):
    dropped: list[str] = []

    def drop(name: str, data: bytes) -> bytes | None:
        if name.endswith("metrics.json") and not dropped:
            dropped.append(name)
            return None
        return data

    code, text, _ = check(rewrite(bundle, tmp_path / "missing.tar.xz", drop), tmp_path)
    assert code == EXIT_FAILED
    assert f"MISSING (listed in the manifest, not in the archive): " \
           f"{dropped[0][len(ROOT) + 1:]}" in text


def test_a_bundle_from_an_older_code_version_is_said_and_still_checked(bundle, tmp_path):
    def older(name: str, data: bytes) -> bytes:
        if name.endswith(MANIFEST):
            manifest = json.loads(data)
            manifest.update(code_version="000000000000", analysis_version="000000000000",
                            git_commit="0" * 40)
            return json.dumps(manifest).encode()
        return data

    code, text, report = check(rewrite(bundle, tmp_path / "old.tar.xz", older), tmp_path)
    assert "OLDER OR OTHER CODE" in text and "git checkout 000000000000" in text
    assert code == EXIT_OK  # the hashes hold and the claims were evaluated
    assert report.experiments[0].claim_count("PASS") >= 2


def test_an_unknown_experiment_in_a_bundle_is_reported(bundle, tmp_path):
    def renamed(name: str, data: bytes) -> bytes:
        if name.endswith(MANIFEST):
            manifest = json.loads(data)
            manifest["experiments"]["retired-experiment"] = {}
            return json.dumps(manifest).encode()
        return data

    _, text, _ = check(rewrite(bundle, tmp_path / "retired.tar.xz", renamed), tmp_path)
    assert "experiment retired-experiment is unknown to this checkout" in text


def test_a_damaged_or_foreign_archive_cannot_be_checked(bundle, tmp_path):
    damaged = tmp_path / "damaged.tar.xz"
    damaged.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
    code, text, _ = check(damaged, tmp_path, "d1")
    assert code == EXIT_UNCHECKED and "error:" in text
    foreign = tmp_path / "foreign.tar.xz"
    with tarfile.open(foreign, "w:xz") as tar:
        info = tarfile.TarInfo("something/else.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    code, text, _ = check(foreign, tmp_path, "d2")
    assert code == EXIT_UNCHECKED and "not a netrepro bundle" in text


def test_a_member_leaving_the_bundle_is_refused(bundle, tmp_path):
    sneaky = rewrite(bundle, tmp_path / "sneaky.tar.xz", lambda n, d: d,
                     extra={f"{ROOT}/../../escaped.txt": b"x"})
    code, text, _ = check(sneaky, tmp_path)
    assert code == EXIT_FAILED and "unsafe member skipped" in text
    assert not (tmp_path / "escaped.txt").exists()


def test_pack_with_nothing_to_pack(tmp_path):
    out = io.StringIO()
    assert pack(ProjectPaths(results_override=tmp_path), [EXP], trace_set(tmp_path),
                explicit=True, stream=out) is None
    assert "has no results to pack" in out.getvalue()


def test_run_folders_linked_from_the_shared_pool_are_packed(tmp_path):
    """Runs shared between experiments live in results/runs and are linked from each
    experiment's runs/: the bundle carries their files, and verifies as the plain one."""
    results = tmp_path / "results"
    build(results)
    pool = results / "runs"
    pool.mkdir()
    for run in sorted((results / EXP.name / "runs").iterdir()):
        target = pool / run.name
        run.rename(target)
        run.symlink_to(Path("../../runs") / run.name)
    traces_dir = tmp_path / "traces"
    write_trace(traces_dir, "Verizon-LTE-short.down", [1, 2, 3])
    write_trace(traces_dir, "Verizon-LTE-short.up", [1, 2, 3])
    path = pack(ProjectPaths(results_override=results), [EXP], trace_set(traces_dir),
                tmp_path / "linked.tar.xz", stream=io.StringIO())
    assert path is not None
    with tarfile.open(path) as tar:
        members = [m for m in tar if "/runs/" in m.name]
    assert members and all(m.isfile() for m in members)
    code, text, report = check(path, tmp_path, "linked")
    assert report.experiments[0].finished > 0 and "run folder gone" not in text
