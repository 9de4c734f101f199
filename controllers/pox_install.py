"""Install POX, pinned and verified, into the checkout's git-ignored var/pox.

No package registry serves POX (Debian has none; the PyPI name is another
project), so it is installed the way the traces are, from the first of:

1. a directory the user names (`--dir DIR` or NETREPRO_POX=DIR): it holds the
   release tarball (checked by sha256) or is a POX tree (checked by git tree);
2. ../shared/vendor beside the checkout (the tarball, checked by sha256);
3. a clone of the pinned commit from GitHub (checked by commit).

    /usr/bin/python3 -m controllers.pox_install [--dir DIR] [--offline]

Where none works it says so, naming each place tried; runs then use os-ken
under `--controller auto`, and a run that asks for `pox` fails with the fix.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import Unavailable
from core.paths import REPO_ROOT
from core.results import write_json

POX_REPO = "https://github.com/noxrepo/pox"
POX_BRANCH = "halosaur"
POX_COMMIT = "20d291825de5e1038e4500382e842e4f95b5731a"
POX_TREE = "fec25b4b8dad94a092b0dea9a5f50518dbea7a4a"
POX_TARBALL = "pox-halosaur-20d2918.tar.gz"
POX_TARBALL_SHA256 = "19b18939d68f4995cbc047e512a6c28693300fbab743df3b61b49013042c1fc8"
VENDOR_RELPATH = Path("..") / "shared" / "vendor"
STAMP = ".netrepro-pox.json"
CLONE_TIMEOUT_S = 120


class PoxInstallError(Unavailable):
    """POX could not be installed from any place; the message names each one tried."""


def pox_dir(root: Path = REPO_ROOT) -> Path:
    return root / "var" / "pox"


@dataclass(frozen=True)
class PoxInstall:
    path: Path        # the folder holding pox.py
    source: str       # where it came from and how it was verified

    @property
    def version(self) -> str:
        return f"{POX_BRANCH} {POX_COMMIT[:12]}"


def installed(root: Path = REPO_ROOT) -> PoxInstall | None:
    """The verified install under var/pox, or None."""
    target = pox_dir(root)
    stamp = target / STAMP
    if not (target / "pox.py").is_file() or not stamp.is_file():
        return None
    try:
        data = json.loads(stamp.read_text())
    except ValueError:
        return None
    if data.get("commit") != POX_COMMIT:
        return None
    return PoxInstall(target, str(data.get("source", "")))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git_tree_of(folder: Path) -> str:
    """The git tree hash of a folder's files (as the vendor README describes)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "pox"
        shutil.copytree(folder, copy, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", STAMP, "__pycache__", "*.pyc"))
        env = {**os.environ, "GIT_DIR": str(Path(tmp) / "git"), "GIT_WORK_TREE": str(copy)}
        for args in (["init", "-q"], ["add", "-A", "-f"]):
            subprocess.run(["git", *args], cwd=copy, env=env, check=True, capture_output=True)
        out = subprocess.run(["git", "write-tree"], cwd=copy, env=env, check=True,
                             capture_output=True, text=True)
        return out.stdout.strip()


def _install_tree(folder: Path, target: Path, source: str) -> PoxInstall:
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(folder, tmp, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "__pycache__"))
    write_json(tmp / STAMP, {"commit": POX_COMMIT, "tree": POX_TREE, "source": source})
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return PoxInstall(target, source)


def _check_members(tarball: Path, members: list[tarfile.TarInfo]) -> None:
    """Refuse a member that would land, or link, outside the extraction folder's pox/."""
    for m in members:
        parts = Path(m.name).parts
        bad = m.name.startswith("/") or ".." in parts or not parts or parts[0] != "pox" \
            or m.isdev()
        if m.issym() or m.islnk():
            # A symbolic link is read from its own folder, a hard link from the archive's top.
            start = posixpath.dirname(m.name) if m.issym() else ""
            target = posixpath.normpath(posixpath.join(start, m.linkname))
            bad = bad or m.linkname.startswith("/") or not (target + "/").startswith("pox/")
        if bad:
            raise PoxInstallError(f"{tarball}: unexpected member {m.name!r}")


def has_data_filter() -> bool:
    """Python 3.12 and later (and 3.11.4 and later) extract with filters (PEP 706)."""
    return hasattr(tarfile, "data_filter")


def _extract(tar: tarfile.TarFile, tarball: Path, folder: str) -> None:
    """Extract under `folder` with the `data` filter (no paths or links out of it, no devices,
    no set-id bits: the default from Python 3.14 on, a warning on 3.12 and 3.13 without it).
    Where Python has no filters, the members were checked above, and that check is all."""
    _check_members(tarball, tar.getmembers())
    if has_data_filter():
        # Called untyped: older type stubs know neither the keyword nor the error.
        extract: Any = tar.extractall
        filter_error: type[Exception] = getattr(tarfile, "FilterError")
        try:
            extract(folder, filter="data")
        except filter_error as e:
            raise PoxInstallError(f"{tarball}: refused by the tar data filter: {e}") from e
    else:
        tar.extractall(folder)


def from_tarball(tarball: Path, target: Path) -> PoxInstall:
    digest = sha256_file(tarball)
    if digest != POX_TARBALL_SHA256:
        raise PoxInstallError(f"{tarball}: sha256 {digest} is not the pinned "
                              f"{POX_TARBALL_SHA256}")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tarball) as tar:
            _extract(tar, tarball, tmp)
        folder = Path(tmp) / "pox"
        if not (folder / "pox.py").is_file():
            raise PoxInstallError(f"{tarball}: no pox/pox.py inside")
        return _install_tree(folder, target, f"{tarball} (sha256 verified)")


def from_folder(folder: Path, target: Path) -> PoxInstall:
    tree = git_tree_of(folder)
    if tree != POX_TREE:
        raise PoxInstallError(f"{folder}: git tree {tree} is not the pinned {POX_TREE} "
                              f"(POX {POX_BRANCH} {POX_COMMIT[:12]})")
    return _install_tree(folder, target, f"{folder} (git tree verified)")


def from_directory(directory: Path, target: Path) -> PoxInstall:
    """A directory holding the tarball, or a POX tree itself."""
    if (directory / POX_TARBALL).is_file():
        return from_tarball(directory / POX_TARBALL, target)
    if directory.is_file() and directory.name.endswith(".tar.gz"):
        return from_tarball(directory, target)
    if (directory / "pox.py").is_file():
        return from_folder(directory, target)
    if (directory / "pox" / "pox.py").is_file():
        return from_folder(directory / "pox", target)
    raise PoxInstallError(f"{directory}: holds neither {POX_TARBALL} nor a POX tree (pox.py)")


def from_github(target: Path) -> PoxInstall:
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "pox"
        try:
            subprocess.run(["git", "clone", "-q", "--branch", POX_BRANCH, POX_REPO, str(clone)],
                           check=True, capture_output=True, text=True,
                           timeout=CLONE_TIMEOUT_S, env={**os.environ,
                                                         "GIT_TERMINAL_PROMPT": "0"})
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", POX_COMMIT],
                           check=True, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            raise PoxInstallError(f"cloning {POX_REPO} timed out after {CLONE_TIMEOUT_S} s "
                                  "(is GitHub reachable from here?)") from None
        except subprocess.CalledProcessError as e:
            tail = (e.stderr or "").strip().splitlines()[-1:] or ["(no output)"]
            raise PoxInstallError(f"cannot clone {POX_REPO} at {POX_COMMIT[:12]} (is GitHub "
                                  f"reachable from here?): {tail[0]}") from None
        return _install_tree(clone, target, f"{POX_REPO} at {POX_COMMIT} (git clone)")


def install(root: Path = REPO_ROOT, directory: Path | None = None,
            fetch: bool = True) -> PoxInstall:
    """Install (or keep) POX under var/pox; PoxInstallError names every place tried."""
    current = installed(root)
    if current is not None and directory is None:
        return current
    target = pox_dir(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    tried: list[str] = []
    places: list[Path] = []
    if directory is not None:
        places.append(directory)
    elif os.environ.get("NETREPRO_POX"):
        places.append(Path(os.environ["NETREPRO_POX"]))
    places.append(root / VENDOR_RELPATH)
    for place in places:
        if not place.exists():
            tried.append(f"{place}: does not exist")
            continue
        try:
            return from_directory(place, target)
        except PoxInstallError as e:
            tried.append(str(e))
    if fetch:
        try:
            return from_github(target)
        except PoxInstallError as e:
            tried.append(str(e))
    else:
        tried.append(f"{POX_REPO}: not tried (--offline)")
    raise PoxInstallError("POX is not installed; tried:\n  " + "\n  ".join(tried) +
                          f"\nGive a directory holding {POX_TARBALL} or a POX checkout at "
                          f"{POX_COMMIT[:12]}: ./setup/install.sh --pox-dir DIR "
                          "(or NETREPRO_POX=DIR)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="controllers.pox_install", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="a directory holding the POX tarball or tree")
    parser.add_argument("--offline", action="store_true", help="never clone from GitHub")
    args = parser.parse_args(argv)
    try:
        done = install(directory=args.dir, fetch=not args.offline)
    except PoxInstallError as e:
        print(f"pox: {e}", file=sys.stderr)
        return 1
    print(f"pox: {done.version} in {done.path} from {done.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
