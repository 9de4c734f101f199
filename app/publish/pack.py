"""`repro pack` writes one compressed archive of the results that another machine can
check with `repro verify --bundle FILE`, without rerunning anything.

The archive (tar + xz) holds, under `netrepro-bundle/`:
- `MANIFEST.json`: the bundle format, when and by which code it was made (code
  version, analysis version, git commit), the packing machine's environment, per
  experiment its mode, runs and claim verdicts, and a sha256 and size per file;
- `results/<experiment>/...`: every artifact of every finished and failed run
  (logs, meta.json, metrics.json, spec.json, DONE...), the figures, the CSVs,
  claims.json/md, and options.json, the options the runs were planned with
  (the checking machine judges them against it, app/recorded_options.py);
- `traces/<name>`: the traces the runs used, so self-inflicted delays can be
  re-derived where the trace set is absent.

Checking a bundle: every file's sha256 against the manifest (a changed, missing
or unlisted file is named), then `verify` on the unpacked results.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import shutil
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Sequence, TextIO

from app.publish.verify import VerifyReport, verify_results
from core.environment import environment
from core.paths import ProjectPaths, display
from core.results import read_json
from core.runspec import RunSpec
from core.traces import TraceError, TraceSet
from runkinds.registry import analysis_version, measurement_version
from experiments.base import Experiment

log = logging.getLogger(__name__)

BUNDLE_FORMAT = 1
ROOT = "netrepro-bundle"
MANIFEST = "MANIFEST.json"
CHUNK = 1 << 20
# xz -1: on a full warm-up's 138 MB, 14.5 MB in 5 s; the default -6 gives 11.1 MB in 110 s.
XZ_PRESET = 1


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# ----------------------------------------------------------------------------- packing


def _result_files(root: Path) -> list[Path]:
    """Every file of an experiment's results, half-written runs (.tmp-*) left out. Run
    folders linked from the shared pool (results/runs) are followed: the bundle holds
    their files under the experiment, as plain files."""
    def unreadable(error: OSError) -> None:
        raise error  # never a bundle that silently lacks a folder
    found = [Path(d) / f for d, _, names in os.walk(root, followlinks=True, onerror=unreadable)
             for f in names]
    return sorted(p for p in found if p.is_file()
                  and not any(part.startswith(".tmp-") for part in p.relative_to(root).parts)
                  and not p.name.endswith(".part"))


def _trace_names(root: Path) -> set[str]:
    """Trace names of every run (finished or failed) under an experiment's results."""
    names: set[str] = set()
    for spec_path in root.glob("*/*/spec.json"):
        try:
            spec = RunSpec.from_dict(read_json(spec_path))
        except (OSError, ValueError, TypeError):
            continue
        names.update(t for t in (spec.data_trace, spec.ack_trace) if "/" not in t
                     and not t.startswith("rate:"))
    return names


def pack(paths: ProjectPaths, experiments: Sequence[Experiment], traces: TraceSet,
         out: Path | None = None, explicit: bool = False, stream: TextIO = sys.stdout
         ) -> Path | None:
    """Write the bundle; None (with the reason printed) when there is nothing to pack."""
    results = paths.results_dir
    chosen = [e for e in experiments if (results / e.name).is_dir()]
    for exp in experiments:
        if explicit and exp not in chosen:
            print(f"error: {exp.name} has no results to pack (`./repro run {exp.name} "
                  "--quick`)", file=stream)
            return None
    if not chosen:
        print("error: no results to pack: run an experiment first", file=stream)
        return None
    report = verify_results(chosen, results, traces)
    files: dict[str, Path] = {}
    for exp in chosen:
        try:
            for path in _result_files(results / exp.name):
                files[f"results/{path.relative_to(results).as_posix()}"] = path
        except PermissionError as e:
            print(f"error: cannot read {e.filename} (some results are root's: a submission's "
                  "sources are private); pack as root: sudo ./repro pack", file=stream)
            return None
    missing_traces = []
    for name in sorted(set().union(*(_trace_names(results / e.name) for e in chosen))):
        try:
            files[f"traces/{name}"] = traces.resolve(name)
        except TraceError as e:
            missing_traces.append(f"{name}: {e}")
    sizes = {name: path.stat().st_size for name, path in sorted(files.items())}
    file_entries = {name: {"sha256": sha256_file(path), "bytes": sizes[name]}
                    for name, path in sorted(files.items())}
    manifest = {
        "bundle_format": BUNDLE_FORMAT,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "code_version": measurement_version(), "analysis_version": analysis_version(),
        "git_commit": environment().get("git_commit"),
        "git_dirty": environment().get("git_dirty"),
        "environment": environment(),
        "experiments": {v.name: {"mode": v.mode, "planned": v.planned, "finished": v.finished,
                                 "failed": len(v.failed_in_plan), "late": v.late,
                                 "claims": {r.id: r.verdict for r in v.claims.results}
                                 if v.claims else {}}
                        for v in report.experiments},
        "verify_exit_when_packed": report.exit_code(),
        "traces_not_bundled": missing_traces,
        "files": file_entries,
    }
    out = out or results / f"netrepro-bundle-{time.strftime('%Y%m%d-%H%M%S')}.tar.xz"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    # What tarfile.open(tmp, "w:xz", preset=...) calls; typed with the preset.
    with tarfile.TarFile.xzopen(tmp, "w", preset=XZ_PRESET) as tar:
        blob = json.dumps(manifest, indent=2, sort_keys=True).encode()
        info = tarfile.TarInfo(f"{ROOT}/{MANIFEST}")
        info.size, info.mtime, info.mode = len(blob), int(time.time()), 0o644
        tar.addfile(info, io.BytesIO(blob))
        for name, path in sorted(files.items()):
            tar.add(path.resolve(), arcname=f"{ROOT}/{name}", recursive=False,
                    filter=_anonymous)
    tmp.replace(out)
    size = out.stat().st_size
    raw = sum(sizes.values())
    print(f"wrote {display(out)}: {len(files)} files, {raw / 1e6:.1f} MB packed into "
          f"{size / 1e6:.2f} MB; at packing, verify said: {report.holds()}", file=stream)
    for problem in missing_traces:
        print(f"  warning: trace not bundled: {problem}", file=stream)
    return out


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


# ----------------------------------------------------------------------------- checking


@dataclass
class BundleCheck:
    manifest: dict[str, Any] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    error: str = ""


def _safe_name(name: str) -> str | None:
    """The member's path inside the bundle root, or None when it would leave it."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] != ROOT:
        return None
    return PurePosixPath(*path.parts[1:]).as_posix() if len(path.parts) > 1 else ""


def unpack(bundle: Path, dest: Path) -> BundleCheck:
    """Unpack regular files under the bundle root into `dest`, and check their hashes."""
    check = BundleCheck()
    try:
        tar = tarfile.open(bundle, "r:*")
    except (OSError, tarfile.TarError) as e:
        check.error = f"{bundle}: not a readable bundle ({e})"
        return check
    found: dict[str, Path] = {}
    with tar:
        try:
            for member in tar:
                inner = _safe_name(member.name)
                if member.isdir() and inner is not None:
                    continue
                if inner is None or not member.isfile():
                    check.unsafe.append(member.name)
                    continue
                source = tar.extractfile(member)
                if source is None:
                    check.unsafe.append(member.name)
                    continue
                target = dest / inner
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "wb") as f:
                    shutil.copyfileobj(source, f)
                # Keep the packed file times: verify compares metrics.json with DONE.
                os.utime(target, (member.mtime, member.mtime))
                found[inner] = target
        except (OSError, tarfile.TarError, EOFError) as e:
            check.error = f"{bundle}: the archive is damaged ({type(e).__name__}: {e})"
    if MANIFEST not in found:
        check.error = check.error or f"{bundle}: no {ROOT}/{MANIFEST}: not a netrepro bundle"
        return check
    try:
        check.manifest = json.loads(found[MANIFEST].read_text())
    except ValueError as e:
        check.error = f"{bundle}: {MANIFEST} is not JSON ({e})"
        return check
    listed = check.manifest.get("files") or {}
    for name, entry in sorted(listed.items()):
        if name not in found:
            check.missing.append(name)
        elif sha256_file(found[name]) != entry.get("sha256"):
            check.changed.append(name)
    check.unlisted = sorted(n for n in found if n != MANIFEST and n not in listed)
    return check


def verify_bundle(bundle: Path, experiments: Sequence[Experiment] | None,
                  paths: ProjectPaths, keep: Path | None = None) -> VerifyReport:
    """Check a bundle's hashes, then re-derive its metrics and claims from its artifacts."""
    from experiments.registry import get_experiment, UnknownExperiment
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        dest, cleanup = keep, False
    else:
        dest, cleanup = Path(tempfile.mkdtemp(prefix="netrepro-bundle-")), True
    try:
        check = unpack(bundle, dest)
        notes = [f"bundle {bundle}"]
        if check.error:
            return VerifyReport([], analysis_version(), notes + [f"error: {check.error}"],
                                bundle_unchecked=True)
        notes += _provenance(check.manifest)
        notes += [f"  CHANGED (sha256 differs from the manifest): {n}" for n in check.changed]
        notes += [f"  MISSING (listed in the manifest, not in the archive): {n}"
                  for n in check.missing]
        notes += [f"  unlisted (in the archive, not in the manifest; ignored): {n}"
                  for n in check.unlisted]
        notes += [f"  unsafe member skipped (a link, a device, or a path leaving the "
                  f"bundle): {n}" for n in check.unsafe]
        listed = len(check.manifest.get("files") or {})
        notes.append(f"  hashes: {listed - len(check.changed) - len(check.missing)} of "
                     f"{listed} files as packed")
        packed = check.manifest.get("experiments") or {}
        traces = TraceSet.for_project(paths.root, extra_dir=dest / "traces")
        if experiments is None:
            experiments = []
            for name in packed:
                try:
                    experiments.append(get_experiment(name, traces))
                except UnknownExperiment:
                    notes.append(f"  experiment {name} is unknown to this checkout: its "
                                 "hashes are checked, its claims cannot be")
        report = verify_results(experiments, dest / "results", traces)
        report.notes = notes + report.notes
        report.bundle_failed = bool(check.changed or check.missing or check.unsafe)
        for v in report.experiments:
            for prefix in {f"{dest}/", f"{dest.resolve()}/"}:  # named as in the manifest
                v.options_problem = v.options_problem.replace(prefix, "")
            before = (packed.get(v.name) or {}).get("claims") or {}
            now = {r.id: r.verdict for r in v.claims.results} if v.claims else {}
            changed = [f"{cid}: {before[cid]} when packed, {now[cid]} here"
                       for cid in sorted(before) if cid in now and now[cid] != before[cid]]
            if v.options_problem:
                report.notes.append(f"  {v.name}: claims not evaluated here (the options its "
                                    "runs were made with are not known, below)")
            elif changed:
                report.notes.append(f"  {v.name}: verdicts unlike the packing machine's: "
                                    + "; ".join(changed))
            elif before:
                report.notes.append(f"  {v.name}: every claim's verdict is the same as when "
                                    "packed")
        return report
    finally:
        if cleanup:
            shutil.rmtree(dest, ignore_errors=True)


def _provenance(manifest: dict[str, Any]) -> list[str]:
    """Who made the bundle, and whether this checkout's code is the same."""
    lines = [f"  packed {manifest.get('created', '?')} by code {manifest.get('code_version', '?')} "
             f"(git {str(manifest.get('git_commit') or '?')[:12]}"
             f"{', uncommitted changes' if manifest.get('git_dirty') else ''}), analysis "
             f"{manifest.get('analysis_version', '?')}, on "
             f"{(manifest.get('environment') or {}).get('distribution', '?')}, kernel "
             f"{(manifest.get('environment') or {}).get('kernel', '?')}"]
    fmt = manifest.get("bundle_format")
    if fmt != BUNDLE_FORMAT:
        lines.append(f"  bundle format {fmt}, this checkout reads {BUNDLE_FORMAT}: checking "
                     "what the manifest allows")
    if manifest.get("code_version") != measurement_version():
        lines.append(f"  OLDER OR OTHER CODE: the runs were measured by code "
                     f"{manifest.get('code_version', '?')}, this checkout is "
                     f"{measurement_version()}; "
                     "hashes, metrics and claims are checked with this checkout's analysis, "
                     "runs no longer in this checkout's matrix are left out of the claims (to "
                     f"check with the same code: git checkout "
                     f"{str(manifest.get('git_commit') or '?')[:12]})")
    if manifest.get("analysis_version") != analysis_version():
        lines.append(f"  packed with analysis {manifest.get('analysis_version', '?')}, this "
                     f"checkout's is {analysis_version()}: a stored number it no longer gives "
                     "back is reported as recomputed")
    return lines
