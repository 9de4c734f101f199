"""The trace registry: find a cellular trace by name or path, verified and validated.

A trace NAME (e.g. `Verizon-LTE-short.down`, listed in setup/traces.tsv) is looked
up in order in: an explicit directory (`--traces-dir` or env NETREPRO_TRACES), the
sibling checkout `../shared/traces` of the repository root if it exists, and the
download cache `var/traces/`.  A known trace is verified by its git blob SHA-1;
the verification is remembered in a small JSON stamp keyed by path, size and
mtime so repeated runs do not rehash.  Anything else is taken as a PATH and only
its format is checked (mahimahi's rules, `link_queue.cc`).

Runs never download: `python3 -m core.traces prepare` (called by setup) does,
from the pinned upstream URL in the manifest, with a 30 s timeout.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from core.errors import UsageError
from core.paths import REPO_ROOT

log = logging.getLogger(__name__)

ENV_DIR = "NETREPRO_TRACES"
MANIFEST_RELPATH = Path("setup") / "traces.tsv"
CACHE_RELPATH = Path("var") / "traces"
SHARED_RELPATH = Path("..") / "shared" / "traces"
STAMP_NAME = ".verified.json"
DOWNLOAD_TIMEOUT_S = 30.0
MANIFEST_COLUMNS = ("name", "git_blob_sha1", "upstream")

# (url, timeout) -> the body; replaceable in tests so nothing touches the network.
Opener = Callable[[str, float], bytes]


class TraceError(UsageError):
    """Base of every trace problem; the message names the trace and the fix."""


class TraceFormatError(TraceError):
    """A file that is not a valid trace; the message is `file:line: problem`."""


class TraceMissing(TraceError):
    pass


class TraceHashMismatch(TraceError):
    pass


class TraceDownloadError(TraceError):
    pass


@dataclass(frozen=True)
class ManifestEntry:
    name: str
    git_blob_sha1: str
    upstream: str


def git_blob_sha1(data: bytes) -> str:
    """The id git gives a file with this content (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_manifest(path: Path) -> dict[str, ManifestEntry]:
    """Rows of a TSV with at least the columns name, git_blob_sha1, upstream."""
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise TraceError(f"{path}: cannot read the trace manifest: {e.strerror or e}") from e
    if not lines:
        raise TraceError(f"{path}:1: the trace manifest is empty; it needs a header line "
                         f"{' '.join(MANIFEST_COLUMNS)} (tab-separated)")
    columns = lines[0].split("\t")
    missing = [c for c in MANIFEST_COLUMNS if c not in columns]
    if missing:
        raise TraceError(f"{path}:1: the header lacks the column(s) {', '.join(missing)}; "
                         f"expected tab-separated {', '.join(MANIFEST_COLUMNS)}")
    at = {c: columns.index(c) for c in MANIFEST_COLUMNS}
    entries: dict[str, ManifestEntry] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(columns):
            raise TraceError(f"{path}:{lineno}: {len(cells)} tab-separated cells, the header "
                             f"has {len(columns)}")
        name, sha, url = (cells[at[c]].strip() for c in MANIFEST_COLUMNS)
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise TraceError(f"{path}:{lineno}: git_blob_sha1 {sha!r} of {name} is not 40 "
                             "lowercase hex digits")
        if not name or "/" in name:
            raise TraceError(f"{path}:{lineno}: trace name {name!r} must be a plain file name")
        if name in entries:
            raise TraceError(f"{path}:{lineno}: trace {name} is listed twice")
        entries[name] = ManifestEntry(name, sha, url)
    return entries


def default_manifest_path() -> Path:
    return REPO_ROOT / MANIFEST_RELPATH


def known_traces(manifest: Path | None = None) -> list[str]:
    """Names of the traces the project knows (the manifest's rows), sorted."""
    return sorted(read_manifest(manifest or default_manifest_path()))


_TRACE_SHAPE = re.compile(rb"(?:[0-9]{1,18}\n)*[0-9]{1,18}\n?")


def parse_trace(data: bytes, source: str) -> np.ndarray:
    """Validate trace content with mahimahi's rules; return the times as int64."""
    if not data:
        raise TraceFormatError(f"{source}:1: empty file; a trace needs at least one "
                               "timestamp (one integer ms per line)")
    if not _TRACE_SHAPE.fullmatch(data):
        raise TraceFormatError(_first_bad_line(data, source))
    times = np.fromstring(data, dtype=np.int64, sep="\n")
    drops = np.flatnonzero(np.diff(times) < 0)
    if drops.size:
        i = int(drops[0]) + 1
        raise TraceFormatError(f"{source}:{i + 1}: {times[i]} is smaller than the previous "
                               f"value {times[i - 1]}; timestamps must never decrease")
    if times[-1] == 0:
        raise TraceFormatError(f"{source}:{times.size}: the last timestamp is 0; a trace must "
                               "last a nonzero time (a 12 Mbit/s link is the single line `1`)")
    return times


def _first_bad_line(data: bytes, source: str) -> str:
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final newline ends the last line
    for lineno, line in enumerate(lines, start=1):
        if not line:
            return f"{source}:{lineno}: empty line (one integer ms per line, no blank lines)"
        if not re.fullmatch(rb"[0-9]{1,18}", line):
            hint = " (Windows line ending? convert with dos2unix)" if line.endswith(b"\r") else ""
            return (f"{source}:{lineno}: {line[:40].decode('utf-8', 'replace')!r} is not a "
                    f"non-negative integer number of ms{hint}")
    return f"{source}: not a trace (one integer ms per line)"


def load_trace(path: Path | str) -> np.ndarray:
    """The opportunity times (ms) of a validated trace file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TraceError(f"{path}: cannot read the trace: {e.strerror or e}") from e
    return parse_trace(data, str(path))


def trace_duration_ms(path: Path | str) -> int:
    """The trace's last timestamp: one pass lasts this long (also the loop period)."""
    return int(load_trace(path)[-1])


class TraceSet:
    """Resolves trace names and paths to verified files; downloads on request only."""

    def __init__(self, search_dirs: Sequence[Path | str], cache_dir: Path | str,
                 manifest: Mapping[str, ManifestEntry] | Path | None = None,
                 opener: Opener | None = None) -> None:
        self.search_dirs = [Path(d) for d in search_dirs]
        self.cache_dir = Path(cache_dir)
        if manifest is None or isinstance(manifest, Path):
            manifest = read_manifest(manifest or default_manifest_path())
        self.manifest = dict(manifest)
        self._opener = opener or _urlopen

    @classmethod
    def for_project(cls, root: Path | str = REPO_ROOT, extra_dir: Path | str | None = None,
                    env: Mapping[str, str] | None = None,
                    opener: Opener | None = None) -> TraceSet:
        """The project's lookup order: extra_dir (else env NETREPRO_TRACES), then
        ../shared/traces next to the repository root, then var/traces."""
        root = Path(root)
        env = os.environ if env is None else env
        dirs: list[Path] = []
        explicit = extra_dir or env.get(ENV_DIR)
        if explicit:
            dirs.append(Path(explicit))
        shared = root / SHARED_RELPATH
        if shared.is_dir():
            dirs.append(shared.resolve())
        return cls(dirs, root / CACHE_RELPATH, read_manifest(root / MANIFEST_RELPATH), opener)

    def known_traces(self) -> list[str]:
        return sorted(self.manifest)

    def places(self) -> list[Path]:
        """Where names are looked up, in order."""
        return [*self.search_dirs, self.cache_dir]

    def resolve(self, name_or_path: str | Path) -> Path:
        """A verified known trace, or a format-checked trace file; never downloads."""
        text = str(name_or_path)
        entry = self.manifest.get(text)
        if entry is not None:
            found = self._find(text)
            if found is None:
                raise TraceMissing(self._missing_message(entry))
            self.verify(found, entry)
            return found
        path = Path(text)
        if "/" not in text:  # a bare unknown name may still sit in a trace directory
            found = self._find(text)
            if found is not None:
                path = found
        try:
            is_file = path.is_file()
        except OSError as e:  # a folder this user may not enter, say
            raise TraceMissing(f"trace {text!r}: cannot be read: {e.strerror}") from None
        if not is_file:
            raise TraceMissing(
                f"trace {text!r} is neither a known trace name nor an existing file (looked "
                f"in {', '.join(str(p) for p in self.places())}); known names: "
                f"{', '.join(self.known_traces()) or 'none'}; or give a path to a trace file")
        load_trace(path)
        return path.resolve()

    def locate(self, name: str) -> Path | None:
        """Where a known trace is on disk (not verified), or None."""
        return self._find(name)

    def _find(self, name: str) -> Path | None:
        for place in self.places():
            candidate = place / name
            if candidate.is_file():
                return candidate
        return None

    def _missing_message(self, entry: ManifestEntry) -> str:
        looked = ", ".join(str(p) for p in self.places())
        return (f"trace {entry.name} is missing (looked in {looked}); fix: set "
                f"{ENV_DIR}=DIR to a directory holding it, or run `python3 -m core.traces "
                f"prepare {entry.name}` (setup does this) with network access to fetch "
                f"{entry.upstream}")

    def verify(self, path: Path, entry: ManifestEntry) -> None:
        """Check a known trace's git blob hash (remembered in the stamp) and its format."""
        st = path.stat()
        key = str(path.resolve())
        stamps = self._read_stamps()
        stamp = stamps.get(key)
        if (stamp and stamp.get("size") == st.st_size and stamp.get("mtime_ns") == st.st_mtime_ns
                and stamp.get("sha1") == entry.git_blob_sha1):
            return
        data = path.read_bytes()
        actual = git_blob_sha1(data)
        if actual != entry.git_blob_sha1:
            raise TraceHashMismatch(
                f"{path}: trace {entry.name} has git blob sha1 {actual}, the manifest "
                f"expects {entry.git_blob_sha1}; the file is corrupt or a different version: "
                f"delete it and run `python3 -m core.traces prepare {entry.name}` (fetches "
                f"{entry.upstream}), or point {ENV_DIR} at a correct copy")
        parse_trace(data, str(path))
        stamps[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha1": actual}
        self._write_stamps(stamps)

    @property
    def stamp_path(self) -> Path:
        return self.cache_dir / STAMP_NAME

    def _read_stamps(self) -> dict[str, dict]:
        try:
            stamps = json.loads(self.stamp_path.read_text())
            return stamps if isinstance(stamps, dict) else {}
        except (OSError, ValueError):
            return {}  # no stamp yet, or a damaged one: just verify again

    def _write_stamps(self, stamps: dict[str, dict]) -> None:
        # A stamp only saves time: failing to write it must not fail the run.
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.stamp_path.with_name(f"{STAMP_NAME}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True))
            tmp.replace(self.stamp_path)  # atomic: parallel runs never read half a file
        except OSError as e:
            log.debug("could not write the trace verification stamp %s: %s", self.stamp_path, e)

    def download(self, name: str) -> Path:
        """Fetch a known trace from its pinned upstream URL into the cache, verified."""
        entry = self.manifest.get(name)
        if entry is None:
            raise TraceMissing(f"trace {name!r} is not in the manifest; known: "
                               f"{', '.join(self.known_traces())}")
        try:
            data = self._opener(entry.upstream, DOWNLOAD_TIMEOUT_S)
        except (OSError, ValueError) as e:  # urllib's URLError is an OSError
            reason = getattr(e, "reason", None) or e
            raise TraceDownloadError(
                f"could not download trace {name} from {entry.upstream}: {reason}; fix: "
                f"connect to the network and retry, or copy the file into a directory and "
                f"set {ENV_DIR}=DIR") from e
        actual = git_blob_sha1(data)
        if actual != entry.git_blob_sha1:
            raise TraceHashMismatch(
                f"downloaded {name} from {entry.upstream} has git blob sha1 {actual}, the "
                f"manifest expects {entry.git_blob_sha1}; nothing was saved. Check the URL "
                f"in {MANIFEST_RELPATH} (it must name the pinned commit)")
        parse_trace(data, entry.upstream)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        target = self.cache_dir / name
        tmp = target.with_name(f".{name}.{os.getpid()}.part")
        tmp.write_bytes(data)
        tmp.replace(target)
        return target


def _urlopen(url: str, timeout: float) -> bytes:
    import urllib.request  # here: loading HTTP and e-mail parsing costs every run's start
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def prepare(traces: TraceSet, names: Iterable[str] | None = None, fetch: bool = True,
            out: Callable[[str], None] = print) -> int:
    """Resolve each trace (all known ones by default), downloading what is missing
    when `fetch`; print one line per trace; return how many are still unusable."""
    failed = 0
    for name in (list(names) if names is not None else traces.known_traces()):
        try:
            if name in traces.manifest and traces.locate(name) is None and fetch:
                path = traces.download(name)
                traces.resolve(name)
                out(f"downloaded {name} -> {path}")
            else:
                out(f"ok         {name} ({traces.resolve(name)})")
        except TraceError as e:
            failed += 1
            label = "MISSING" if isinstance(e, (TraceMissing, TraceDownloadError)) else "BAD"
            out(f"{label:10s} {name}: {e}")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m core.traces",
                                     description="Find, verify and fetch the cellular traces.")
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="make the traces available (exit 1 if any is missing)")
    prep.add_argument("names", nargs="*", help="trace names (default: all known traces)")
    prep.add_argument("--dir", default=None,
                      help=f"a directory holding the traces (default: env {ENV_DIR})")
    prep.add_argument("--offline", action="store_true", help="never download")
    sub.add_parser("list", help="print the known trace names")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        traces = TraceSet.for_project(REPO_ROOT, extra_dir=getattr(args, "dir", None))
    except TraceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.command == "list":
        for name in traces.known_traces():
            print(name)
        return 0
    failed = prepare(traces, args.names or None, fetch=not args.offline)
    if failed:
        print(f"{failed} trace(s) missing", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
