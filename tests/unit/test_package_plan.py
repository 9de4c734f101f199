"""Setup's package decisions, for each release's os-release and package facts.

The facts in tests/data/distros/ are Debian 12's and 13's as apt-cache answered, and
Ubuntu 22.04's, 24.04's and 26.04's as written from knowledge of those archives (each file
says which in its `source`); the plan must follow the facts, not the release's name.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from setup import package_plan as pp

DATA = Path(__file__).resolve().parents[1] / "data" / "distros"
RELEASES = ("debian-12", "debian-13", "ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04")


def load(key: str, kernel: str | None = None) -> tuple[pp.OsRelease, pp.PackageFacts]:
    release = pp.OsRelease.parse((DATA / f"{key}.os-release").read_text())
    facts = pp.PackageFacts.from_json(json.loads((DATA / f"{key}.json").read_text()), kernel)
    return release, facts


def plan_for(key: str, *, tests: bool = True, kernel: str | None = None) -> pp.Plan:
    release, facts = load(key, kernel)
    return pp.make_plan(release, facts, tests=tests)


@pytest.mark.parametrize("key", RELEASES)
def test_every_release_has_its_data_and_a_plan_that_installs_mininet(key: str) -> None:
    release, facts = load(key)
    assert release.key == key
    plan = pp.make_plan(release, facts)
    assert plan.errors == []
    assert {"mininet", "python3", "iperf3", "openvswitch-switch"} <= set(plan.names())
    # Every planned name is a real package of that archive: apt-get can install it.
    assert [n for n in plan.names() if facts.kind(n) != "real"] == []


def test_recorded_facts_say_where_they_come_from() -> None:
    for key in RELEASES:
        source = json.loads((DATA / f"{key}.json").read_text())["source"]
        assert source.startswith("queried" if key.startswith("debian") else "written from")


@pytest.mark.parametrize("key,python", [("debian-12", (3, 11)), ("debian-13", (3, 13)),
                                        ("ubuntu-22.04", (3, 10)), ("ubuntu-24.04", (3, 12)),
                                        ("ubuntu-26.04", (3, 13))])
def test_setuptools_exactly_where_python_has_no_distutils(key: str,
                                                          python: tuple[int, int]) -> None:
    plan = plan_for(key)
    assert plan.facts.python == python
    assert ("python3-setuptools" in plan.names()) == (python >= (3, 12))


def test_debian_installs_bpftool_itself() -> None:
    for key in ("debian-12", "debian-13"):
        names = plan_for(key).names()
        assert "bpftool" in names and not any(n.startswith("linux-tools") for n in names)


def test_ubuntu_24_04_takes_bpftool_from_the_running_kernels_linux_tools() -> None:
    plan = plan_for("ubuntu-24.04")
    assert plan.facts.kind("bpftool") == "virtual"
    assert "bpftool" not in plan.names()
    assert {"linux-tools-common", "linux-tools-6.8.0-31-generic"} <= set(plan.names())
    assert any("virtual" in n and "linux-tools-6.8.0-31-generic" in n for n in plan.notes)


def test_ubuntu_26_04_has_a_real_bpftool() -> None:
    names = plan_for("ubuntu-26.04").names()
    assert "bpftool" in names and "linux-tools-common" not in names


def test_a_kernel_without_its_linux_tools_is_a_warning_naming_the_package() -> None:
    plan = plan_for("ubuntu-24.04", kernel="6.18.0-custom")
    assert not any(n.startswith("linux-tools") for n in plan.names())
    [warning] = [w for w in plan.warnings if w.startswith("bpftool")]
    assert "linux-tools-6.18.0-custom" in warning and "not in the archive" in warning
    assert plan.errors == []  # eBPF is optional: the rest installs


def without_universe(facts: pp.PackageFacts, universe: list[str]) -> pp.PackageFacts:
    return replace(facts, real=facts.real - set(universe),
                   components=facts.components - {"universe"} if facts.components else None)


def test_ubuntu_without_universe_says_so_and_how_to_enable_it() -> None:
    release, facts = load("ubuntu-24.04")
    universe = json.loads((DATA / "ubuntu-24.04.json").read_text())["universe"]
    plan = pp.make_plan(release, without_universe(facts, universe))
    assert plan.errors, "mininet is required and lives in universe"
    first = plan.errors[0]
    assert "universe component is not enabled" in first and "mininet" in first
    assert "add-apt-repository universe" in first
    assert not any(e.startswith("required package mininet") for e in plan.errors)


def test_a_missing_required_package_on_debian_is_named() -> None:
    release, facts = load("debian-13")
    plan = pp.make_plan(release, replace(facts, real=facts.real - {"python3-dpkt"}))
    assert plan.errors == ["required package python3-dpkt is not in this release's archive"]


def test_missing_optional_packages_are_warnings_naming_what_is_lost() -> None:
    release, facts = load("debian-12")
    plan = pp.make_plan(release, replace(facts, real=facts.real - {"python3-os-ken"}))
    assert plan.errors == []
    assert any("python3-os-ken" in w and "PRR controller" in w for w in plan.warnings)


def test_chromium_only_where_it_is_a_deb() -> None:
    assert {"chromium", "chromium-driver"} <= set(plan_for("debian-13").names())
    plan = plan_for("ubuntu-24.04")
    assert "chromium" not in plan.names()
    assert any(w.startswith("chromium is only a virtual package") for w in plan.warnings)


@pytest.mark.parametrize("release", ["debian-12", "debian-13", "ubuntu-22.04", "ubuntu-24.04",
                                     "ubuntu-26.04"])
def test_the_contest_servers_framework_is_planned_everywhere(release: str) -> None:
    plan = plan_for(release, tests=False)
    assert "python3-aiohttp" in plan.names() and not plan.errors


def test_programs_only_leaves_out_the_test_tools() -> None:
    names = plan_for("debian-13", tests=False).names()
    assert not {"mypy", "flake8", "python3-venv", "python3-selenium", "chromium"} & set(names)
    assert "mininet" in names


def test_python_older_than_any_tried_is_said_and_too_old_is_refused() -> None:
    assert any("Python 3.10" in w and "tried" in w for w in plan_for("ubuntu-22.04").warnings)
    release, facts = load("ubuntu-22.04")
    plan = pp.make_plan(release, replace(facts, python=(3, 8)))
    assert any("Python 3.8" in e and "3.10 or later" in e for e in plan.errors)


def test_installed_packages_are_planned_but_not_installed_again() -> None:
    release, facts = load("debian-12")
    plan = pp.make_plan(release, replace(facts, installed=frozenset(facts.real)))
    assert plan.names() and plan.missing() == []


def test_os_release_parsing() -> None:
    release = pp.OsRelease.parse('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n'
                                 'VERSION_CODENAME=noble\nPRETTY_NAME="Ubuntu 24.04.3 LTS"\n')
    assert (release.id, release.version_id, release.codename) == ("ubuntu", "24.04", "noble")
    assert release.is_ubuntu and release.key == "ubuntu-24.04"
    assert pp.OsRelease.parse("ID=linuxmint\nID_LIKE=ubuntu debian\n").is_ubuntu
    with pytest.raises(pp.PlanInputError):
        pp.OsRelease.parse("NAME=nothing\n")


def test_apt_cache_output_parsing() -> None:
    policy = ("mininet:\n  Installed: (none)\n  Candidate: 2.3.0-1.1\n  Version table:\n"
              "bpftool:\n  Installed: (none)\n  Candidate: (none)\n"
              "python3:\n  Installed: 3.12.3-0ubuntu2\n  Candidate: 3.12.3-0ubuntu2\n")
    assert pp.parse_policy(policy) == {"mininet": "2.3.0-1.1", "python3": "3.12.3-0ubuntu2"}
    showpkg = ("Package: bpftool\nVersions: \n\nReverse Depends: \n  x,bpftool\n"
               "Dependencies: \nProvides: \nReverse Provides: \n"
               "linux-tools-common 6.8.0-31.31\nlinux-tools-common 6.8.0-90.91\n")
    assert pp.parse_reverse_provides(showpkg) == ("linux-tools-common",)
    sources = (" 500 http://archive.ubuntu.com/ubuntu noble/main amd64 Packages\n"
               "     release v=24.04,o=Ubuntu,a=noble,n=noble,l=Ubuntu,c=main,b=amd64\n"
               " 500 http://archive.ubuntu.com/ubuntu noble/restricted amd64 Packages\n"
               "     release v=24.04,o=Ubuntu,a=noble,n=noble,l=Ubuntu,c=restricted,b=amd64\n")
    assert pp.parse_components(sources) == {"main", "restricted"}


def test_dry_run_report_for_a_recorded_release(capsys: pytest.CaptureFixture[str]) -> None:
    code = pp.main(["--os-release", str(DATA / "ubuntu-24.04.os-release"), "--programs-only"])
    out = capsys.readouterr().out
    assert code == 0
    assert "written from knowledge" in out and "linux-tools-6.8.0-31-generic" in out
    assert "python3-setuptools" in out and "setup would go on" in out


def test_dry_run_without_recorded_facts_asks_for_them(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    os_release = tmp_path / "os-release"
    os_release.write_text('ID=fedora\nVERSION_ID="41"\nPRETTY_NAME="Fedora Linux 41"\n')
    assert pp.main(["--os-release", str(os_release)]) == 2
    assert "no recorded package facts for Fedora Linux 41" in capsys.readouterr().err
