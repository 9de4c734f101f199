"""The trace registry: validation, git blob hashes, lookup order, stamps, download."""
from __future__ import annotations

import shutil
import subprocess
import urllib.error
from pathlib import Path

import numpy as np
import pytest

import core.traces as traces_mod
from core.traces import (ENV_DIR, ManifestEntry, TraceDownloadError, TraceFormatError,
                         TraceHashMismatch, TraceMissing, TraceSet, git_blob_sha1, known_traces,
                         load_trace, parse_trace, prepare, read_manifest, trace_duration_ms)

CONTENT = b"0\n3\n3\n7\n"
URL = "https://example.invalid/pinned/Test.down"


def entry(content: bytes = CONTENT, name: str = "Test.down", url: str = URL) -> ManifestEntry:
    return ManifestEntry(name, git_blob_sha1(content), url)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# --- format validation -------------------------------------------------------

@pytest.mark.parametrize("data, where", [
    (b"", r"f:1: empty file"),
    (b"1\n\n2\n", r"f:2: empty line"),
    (b"1\n2\n\n", r"f:3: empty line"),
    (b"1\nx\n", r"f:2: 'x' is not"),
    (b"1\n-2\n", r"f:2: '-2' is not"),
    (b"1\n2.5\n", r"f:2: "),
    (b"1\r\n2\r\n", r"f:1: .*Windows"),
    (b"5\n3\n", r"f:2: 3 is smaller than the previous value 5"),
    (b"1\n4\n4\n2\n9\n", r"f:4: 2 is smaller"),
    (b"0\n0\n", r"f:2: the last timestamp is 0"),
    (b"0", r"f:1: the last timestamp is 0"),
])
def test_invalid_traces_name_file_and_line(data: bytes, where: str):
    with pytest.raises(TraceFormatError, match=where):
        parse_trace(data, "f")


def test_valid_traces():
    assert list(parse_trace(CONTENT, "f")) == [0, 3, 3, 7]
    assert list(parse_trace(b"1", "f")) == [1]  # no final newline is fine
    assert parse_trace(b"2\n2\n", "f").dtype == np.int64


def test_load_trace_and_duration(tmp_path: Path):
    path = write(tmp_path / "t", CONTENT)
    assert list(load_trace(path)) == [0, 3, 3, 7]
    assert trace_duration_ms(path) == 7


# --- hashes and manifest ---------------------------------------------------------

@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("data", [b"", b"hello\n", CONTENT, bytes(range(256))])
def test_git_blob_sha1_matches_git_hash_object(data: bytes):
    expected = subprocess.run(["git", "hash-object", "--stdin"], input=data,
                              capture_output=True, check=True).stdout.decode().strip()
    assert git_blob_sha1(data) == expected


def test_empty_blob_id_is_gits_well_known_one():
    assert git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_project_manifest_lists_the_paper_traces():
    names = known_traces()
    assert "Verizon-LTE-short.down" in names and "TMobile-LTE-short.up" in names
    assert all(n.endswith((".up", ".down")) for n in names)


def test_manifest_errors(tmp_path: Path):
    bad = write(tmp_path / "m.tsv", b"name\tgit_blob_sha1\tupstream\nA.up\tnothex\thttp://x\n")
    with pytest.raises(traces_mod.TraceError, match=r"m\.tsv:2: .*40"):
        read_manifest(bad)
    bad.write_bytes(b"name\tupstream\n")
    with pytest.raises(traces_mod.TraceError, match=r"m\.tsv:1: .*git_blob_sha1"):
        read_manifest(bad)


# --- lookup -----------------------------------------------------------------------

def project(tmp_path: Path, url: str = URL) -> Path:
    """A fake checkout: repo/ with setup/traces.tsv, and a sibling shared/traces/."""
    root = tmp_path / "repo"
    e = entry(url=url)
    write(root / "setup" / "traces.tsv",
          f"name\tgit_blob_sha1\tupstream\n{e.name}\t{e.git_blob_sha1}\t{e.upstream}\n".encode())
    return root


def test_lookup_order(tmp_path: Path):
    root = project(tmp_path)
    explicit = write(tmp_path / "mine" / "Test.down", CONTENT)
    shared = write(tmp_path / "shared" / "traces" / "Test.down", CONTENT)
    cached = write(root / "var" / "traces" / "Test.down", CONTENT)

    def resolve(**kw) -> Path:
        return TraceSet.for_project(root, **kw).resolve("Test.down")

    assert resolve(extra_dir=explicit.parent, env={}) == explicit
    assert resolve(env={ENV_DIR: str(explicit.parent)}) == explicit
    # the option wins over the environment
    other = write(tmp_path / "other" / "Test.down", CONTENT)
    assert resolve(extra_dir=other.parent, env={ENV_DIR: str(explicit.parent)}) == other
    assert resolve(env={}) == shared.resolve()
    shared.unlink()
    assert resolve(env={}) == cached


def test_missing_trace_says_where_it_looked_and_how_to_fix(tmp_path: Path):
    root = project(tmp_path)
    traces = TraceSet.for_project(root, extra_dir=tmp_path / "empty", env={})
    with pytest.raises(TraceMissing) as err:
        traces.resolve("Test.down")
    text = str(err.value)
    assert "Test.down" in text and str(tmp_path / "empty") in text
    assert str(root / "var" / "traces") in text and ENV_DIR in text and URL in text


def test_hash_mismatch_names_file_and_both_hashes(tmp_path: Path):
    root = project(tmp_path)
    bad = write(tmp_path / "mine" / "Test.down", b"1\n2\n")
    with pytest.raises(TraceHashMismatch) as err:
        TraceSet.for_project(root, extra_dir=bad.parent, env={}).resolve("Test.down")
    text = str(err.value)
    assert str(bad) in text and git_blob_sha1(CONTENT) in text
    assert git_blob_sha1(b"1\n2\n") in text and "prepare" in text


def test_verification_is_remembered_until_the_file_changes(tmp_path: Path, monkeypatch):
    root = project(tmp_path)
    path = write(tmp_path / "mine" / "Test.down", CONTENT)
    traces = TraceSet.for_project(root, extra_dir=path.parent, env={})
    calls: list[int] = []
    real = traces_mod.git_blob_sha1

    def counted(data: bytes) -> str:
        calls.append(1)
        return real(data)

    monkeypatch.setattr(traces_mod, "git_blob_sha1", counted)
    traces.resolve("Test.down")
    traces.resolve("Test.down")
    assert len(calls) == 1 and traces.stamp_path.is_file()
    # same size, new content and mtime: hashed again, and the change is caught
    path.write_bytes(b"0\n3\n3\n8\n")
    with pytest.raises(TraceHashMismatch):
        traces.resolve("Test.down")
    assert len(calls) == 2


def test_paths_and_unknown_names(tmp_path: Path):
    root = project(tmp_path)
    traces = TraceSet.for_project(root, extra_dir=tmp_path / "mine", env={})
    user = write(tmp_path / "user" / "my.trace", b"1\n2\n")
    assert traces.resolve(str(user)) == user.resolve()
    write(tmp_path / "mine" / "custom.up", b"5\n")  # an unlisted trace in a trace directory
    assert traces.resolve("custom.up") == (tmp_path / "mine" / "custom.up").resolve()
    broken = write(tmp_path / "user" / "broken", b"1\n\n")
    with pytest.raises(TraceFormatError, match=rf"{broken}:2: empty line"):
        traces.resolve(str(broken))
    with pytest.raises(TraceMissing, match="neither a known trace name"):
        traces.resolve("Nope.down")


# --- download and prepare -----------------------------------------------------------

def test_download_with_a_fake_opener(tmp_path: Path):
    root = project(tmp_path)
    asked = []

    def opener(url: str, timeout: float) -> bytes:
        asked.append((url, timeout))
        return CONTENT

    traces = TraceSet.for_project(root, env={}, opener=opener)
    path = traces.download("Test.down")
    assert path == root / "var" / "traces" / "Test.down" and path.read_bytes() == CONTENT
    assert asked == [(URL, 30.0)]
    assert traces.resolve("Test.down") == path


def test_download_of_wrong_content_saves_nothing(tmp_path: Path):
    root = project(tmp_path)
    traces = TraceSet.for_project(root, env={}, opener=lambda url, timeout: b"9\n")
    with pytest.raises(TraceHashMismatch, match="nothing was saved"):
        traces.download("Test.down")
    assert not (root / "var" / "traces" / "Test.down").exists()


def test_offline_download_is_a_clear_error(tmp_path: Path):
    def offline(url: str, timeout: float) -> bytes:
        raise urllib.error.URLError("Temporary failure in name resolution")

    traces = TraceSet.for_project(project(tmp_path), env={}, opener=offline)
    with pytest.raises(TraceDownloadError, match=rf"{URL}: Temporary failure.*{ENV_DIR}"):
        traces.download("Test.down")


def test_download_through_urllib_from_a_file_url(tmp_path: Path):
    upstream = write(tmp_path / "upstream" / "Test.down", CONTENT)
    root = project(tmp_path, url=upstream.as_uri())
    path = TraceSet.for_project(root, env={}).download("Test.down")
    assert path.read_bytes() == CONTENT


def test_prepare_fetches_what_is_missing_and_counts_failures(tmp_path: Path):
    root = project(tmp_path)
    lines: list[str] = []
    offline = TraceSet.for_project(root, env={}, opener=lambda u, t: (_ for _ in ()).throw(
        urllib.error.URLError("offline")))
    assert prepare(offline, out=lines.append) == 1
    assert lines[0].startswith("MISSING    Test.down")
    lines.clear()
    online = TraceSet.for_project(root, env={}, opener=lambda u, t: CONTENT)
    assert prepare(online, out=lines.append) == 0
    assert lines[0].startswith("downloaded Test.down")
    lines.clear()
    assert prepare(online, ["Test.down"], fetch=False, out=lines.append) == 0
    assert lines[0].startswith("ok         Test.down")


def test_cli_exit_codes(tmp_path: Path, monkeypatch, capsys):
    root = project(tmp_path)
    monkeypatch.setattr(traces_mod, "REPO_ROOT", root)
    monkeypatch.delenv(ENV_DIR, raising=False)
    assert traces_mod.main(["prepare", "--offline"]) == 1
    assert "MISSING" in capsys.readouterr().out
    have = write(tmp_path / "dir" / "Test.down", CONTENT)
    assert traces_mod.main(["prepare", "--offline", "--dir", str(have.parent)]) == 0
    assert traces_mod.main(["list"]) == 0
    assert capsys.readouterr().out.strip().endswith("Test.down")
