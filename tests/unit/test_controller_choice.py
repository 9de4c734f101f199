"""Which controller serves a run, and installing POX: never a silent switch."""
from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from controllers import launcher, pox_install
from controllers.drop_plan import DropPlan
from controllers.launcher import ControllerUnavailable, choose_controller
from runkinds.switched_path.config import SwitchedPathConfig


def fake_install(root: Path) -> None:
    target = pox_install.pox_dir(root)
    target.mkdir(parents=True)
    (target / "pox.py").write_text("")
    (target / pox_install.STAMP).write_text(
        f'{{"commit": "{pox_install.POX_COMMIT}", "source": "test"}}')


def test_pox_asked_for_and_absent_fails_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ControllerUnavailable, match="POX was asked for but is not installed.*"
                       "--pox-dir DIR.*--controller os-ken"):
        choose_controller("pox", tmp_path)


def test_auto_prefers_pox_and_records_why(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "osken_available", lambda: None)
    without = choose_controller("auto", tmp_path)
    assert (without.kind, without.requested) == ("os-ken", "auto")
    assert without.why == "auto: POX is not installed"
    fake_install(tmp_path)
    with_pox = choose_controller("auto", tmp_path)
    assert with_pox.kind == "pox" and with_pox.why.startswith("auto: POX is installed")
    assert choose_controller("os-ken", tmp_path).kind == "os-ken"


def test_no_controller_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "osken_available", lambda: "osken-manager is missing")
    with pytest.raises(ControllerUnavailable, match="POX is not installed .* and osken"):
        choose_controller("auto", tmp_path)
    with pytest.raises(ControllerUnavailable, match="os-ken was asked for but cannot run"):
        choose_controller("os-ken", tmp_path)


def test_unknown_controller(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown controller 'nox': use one of pox, os-ken, auto"):
        choose_controller("nox", tmp_path)
    with pytest.raises(ValueError, match="unknown controller 'ryu'"):
        SwitchedPathConfig(plan=DropPlan.parse("light"), controller="ryu")


@pytest.mark.parametrize("field,value,message", [
    ("rate_mbps", 0.0, "rate_mbps"), ("delay_ms", -1, "delay_ms"),
    ("delay_ms", 2.5, "whole number"), ("tcp_port", 0, "tcp_port"), ("queue", "red", "bad queue")])
def test_path_config_is_checked_before_anything_is_built(field: str, value: object,
                                                         message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SwitchedPathConfig(plan=DropPlan.parse("light"), **{field: value})  # type: ignore[arg-type]


def _tarball(path: Path, text: str = "print('pox')\n") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        data = text.encode()
        info = tarfile.TarInfo("pox/pox.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_a_tarball_with_the_wrong_sha256_is_refused(tmp_path: Path) -> None:
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    tarball = _tarball(vendor / pox_install.POX_TARBALL)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    with pytest.raises(pox_install.PoxInstallError, match=f"sha256 {digest} is not the pinned"):
        pox_install.install(tmp_path / "checkout", directory=vendor, fetch=False)
    assert pox_install.installed(tmp_path / "checkout") is None


def test_a_pinned_tarball_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    tarball = _tarball(vendor / pox_install.POX_TARBALL)
    monkeypatch.setattr(pox_install, "POX_TARBALL_SHA256",
                        hashlib.sha256(tarball.read_bytes()).hexdigest())
    done = pox_install.install(tmp_path / "checkout", directory=vendor, fetch=False)
    assert (done.path / "pox.py").read_text() == "print('pox')\n"
    assert "sha256 verified" in done.source
    assert pox_install.installed(tmp_path / "checkout") == done


def test_a_folder_with_another_tree_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "pox"
    folder.mkdir()
    (folder / "pox.py").write_text("not the pinned one\n")
    with pytest.raises(pox_install.PoxInstallError, match="git tree .* is not the pinned"):
        pox_install.from_directory(folder, tmp_path / "target")


def test_nothing_works_names_every_place_and_github(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NETREPRO_POX", raising=False)
    monkeypatch.setattr(pox_install, "POX_REPO", str(tmp_path / "no-such-repo"))
    with pytest.raises(pox_install.PoxInstallError) as err:
        pox_install.install(tmp_path / "checkout", directory=tmp_path / "nowhere")
    text = str(err.value)
    assert "nowhere: does not exist" in text
    assert "shared/vendor: does not exist" in text
    assert "cannot clone" in text and "is GitHub reachable from here?" in text
    assert "./setup/install.sh --pox-dir DIR" in text


def test_a_listener_counts_only_if_it_is_the_controllers_own() -> None:
    import os
    import socket
    import subprocess
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert launcher.listening(port, os.getpid())
        other = subprocess.Popen(["sleep", "5"])
        try:
            assert not launcher.listening(port, other.pid)   # another process's port
        finally:
            other.kill()
            other.wait()
    assert not launcher.listening(port, os.getpid())          # closed


def _pinned_tarball(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    extra: list[tarfile.TarInfo]) -> Path:
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    tarball = vendor / pox_install.POX_TARBALL
    with tarfile.open(tarball, "w:gz") as tar:
        data = b"print('pox')\n"
        info = tarfile.TarInfo("pox/pox.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for member in extra:
            tar.addfile(member)
    monkeypatch.setattr(pox_install, "POX_TARBALL_SHA256",
                        hashlib.sha256(tarball.read_bytes()).hexdigest())
    return vendor


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


# Forcing the path of Pythons without filters on one that has them: it warns there.
NO_FILTER_WARNING = "ignore:Python 3.14 will, by default, filter:DeprecationWarning"


@pytest.mark.filterwarnings(NO_FILTER_WARNING)
@pytest.mark.parametrize("filters", [True, False], ids=["data-filter", "no-filter-python"])
def test_a_link_inside_pox_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        filters: bool) -> None:
    if filters and not pox_install.has_data_filter():
        pytest.skip("this Python has no tarfile filters (before 3.11.4)")
    monkeypatch.setattr(pox_install, "has_data_filter", lambda: filters)
    vendor = _pinned_tarball(tmp_path, monkeypatch, [_link("pox/debug-pox.py", "pox.py")])
    done = pox_install.install(tmp_path / "checkout", directory=vendor, fetch=False)
    assert (done.path / "debug-pox.py").resolve() == (done.path / "pox.py").resolve()


@pytest.mark.filterwarnings(NO_FILTER_WARNING)
@pytest.mark.parametrize("filters", [True, False], ids=["data-filter", "no-filter-python"])
@pytest.mark.parametrize("member", [
    _link("pox/escape", "../../outside"), _link("pox/abs", "/etc/passwd"),
    _link("pox/hard", "etc/passwd", tarfile.LNKTYPE), tarfile.TarInfo("pox/../../x"),
    tarfile.TarInfo("other/x")], ids=["symlink-up", "symlink-absolute", "hardlink-out",
                                      "path-up", "not-under-pox"])
def test_a_member_reaching_outside_pox_is_refused(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  filters: bool, member: tarfile.TarInfo) -> None:
    if filters and not pox_install.has_data_filter():
        pytest.skip("this Python has no tarfile filters (before 3.11.4)")
    monkeypatch.setattr(pox_install, "has_data_filter", lambda: filters)
    vendor = _pinned_tarball(tmp_path, monkeypatch, [member])
    with pytest.raises(pox_install.PoxInstallError, match="unexpected member|data filter"):
        pox_install.install(tmp_path / "checkout", directory=vendor, fetch=False)
    assert not (tmp_path / "outside").exists()
    assert pox_install.installed(tmp_path / "checkout") is None
