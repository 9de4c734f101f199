"""Which distribution packages setup installs on this release, and why: one testable decision.

`setup/install.sh` asks this module for the packages to install; `setup/install.sh --dry-run
[--os-release FILE]` prints the whole plan without root and without touching the machine.

The plan depends on facts of the release's archive, never on its name alone: which package
names are real, which only virtual (and who provides them) and which missing; the release's
Python; the running kernel; on Ubuntu, whether the `universe` component is enabled. On a
live machine the facts come from apt-cache and dpkg (read-only, nothing is updated); for
another release, from a recorded facts file (tests/data/distros/, docs/distributions.md).

Standard library only: it runs before anything else is installed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

ROOT = Path(__file__).resolve().parent.parent
RECORDED_FACTS = ROOT / "tests" / "data" / "distros"
# Below MIN_PYTHON the code is not even type-checked (mypy --python-version 3.10 passes);
# outside TRIED_PYTHON it was never run: said, not refused.
MIN_PYTHON = (3, 10)
TRIED_PYTHON = ((3, 11), (3, 13))
# Mininet 2.3.0 imports distutils, which Python 3.12 removed; setuptools brings a copy.
DISTUTILS_GONE = (3, 12)

# Required: the suite cannot run without these (python3-aiohttp: `repro contest serve`).
REQUIRED = ("mininet", "iperf3", "iputils-ping", "ethtool", "iproute2", "tcpdump", "cmake", "g++",
            "make", "libgtest-dev", "python3", "python3-numpy", "python3-scipy",
            "python3-matplotlib", "python3-dpkt", "python3-pytest", "python3-jinja2",
            "python3-markdown", "python3-rich", "bubblewrap", "python3-aiohttp")
# Optional: eBPF congestion controls (bpftool is decided apart), the PRR controller, Open
# vSwitch, runs spread over machines (`./repro run --cluster`; docs/cluster.md).
OPTIONAL = ("clang", "llvm", "libbpf-dev", "python3-os-ken", "openvswitch-switch",
            "python3-distributed")
# For the tests (run_tests.sh), not with --programs-only: types, lint, the plain venv.
TEST_REQUIRED = ("mypy", "flake8", "python3-venv")
TEST_OPTIONAL = ("python3-selenium",)
# The report's browser test drives Debian's chromium debs. On Ubuntu both names are only
# virtual, provided by transitional packages that install the chromium snap, whose private
# /tmp cannot open the test's report: they are installed only where they are real debs.
BROWSER = ("chromium", "chromium-driver")
WHY = {
    "bpftool": "eBPF congestion controls and PRR recoveries",
    "clang": "building the eBPF programs", "llvm": "building the eBPF programs",
    "libbpf-dev": "building the eBPF programs", "python3-os-ken": "the PRR controller (os-ken)",
    "openvswitch-switch": "the PRR experiment's switch",
    "python3-distributed": "--cluster and repro worker",
    "python3-selenium": "the report's browser test",
    "chromium": "the report's browser test", "chromium-driver": "the report's browser test",
    "python3-setuptools": f"distutils for Mininet 2.3.0 on Python {DISTUTILS_GONE[0]}."
                          f"{DISTUTILS_GONE[1]} and later",
}
ENABLE_UNIVERSE = ("enable it: sudo add-apt-repository universe && sudo apt-get update (or add "
                   "'universe' to the Components: line of /etc/apt/sources.list.d/ubuntu.sources)")


class PlanInputError(ValueError):
    """An os-release or facts file that cannot be read as one."""


@dataclass(frozen=True)
class OsRelease:
    id: str
    version_id: str
    codename: str
    pretty_name: str
    id_like: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "OsRelease":
        values: dict[str, str] = {}
        for line in text.splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and key and not key.startswith("#"):
                values[key] = value.strip().strip('"').strip("'")
        if "ID" not in values:
            raise PlanInputError("an os-release file needs an ID= line")
        return cls(id=values["ID"], version_id=values.get("VERSION_ID", ""),
                   codename=values.get("VERSION_CODENAME", ""),
                   pretty_name=values.get("PRETTY_NAME", values["ID"]),
                   id_like=tuple(values.get("ID_LIKE", "").split()))

    @property
    def is_ubuntu(self) -> bool:
        return self.id == "ubuntu" or "ubuntu" in self.id_like

    @property
    def key(self) -> str:
        """The recorded facts' file name: ubuntu-24.04, debian-13."""
        return f"{self.id}-{self.version_id}"


@dataclass(frozen=True)
class PackageFacts:
    """What the release's archive holds, as far as the plan asks."""
    real: frozenset[str]
    virtual: Mapping[str, tuple[str, ...]]  # name -> the packages that provide it
    python: tuple[int, int] | None  # the release's python3, major and minor
    kernel: str  # uname -r of the machine the plan is for
    components: frozenset[str] | None = None  # enabled archive components; None: unknown
    installed: frozenset[str] = frozenset()
    source: str = ""

    def kind(self, name: str) -> str:
        if name in self.real:
            return "real"
        if self.virtual.get(name):
            return "virtual"
        return "missing"

    @classmethod
    def from_json(cls, data: Mapping[str, object], kernel: str | None = None) -> "PackageFacts":
        try:
            virtual = data.get("virtual", {})
            python = str(data["python3"])
            components = data.get("components")
            assert isinstance(virtual, dict)
            return cls(real=frozenset(_strings(data["real"])),
                       virtual={k: tuple(_strings(v)) for k, v in virtual.items()},
                       python=_major_minor(python), kernel=kernel or str(data["kernel"]),
                       components=frozenset(_strings(components))
                       if components is not None else None,
                       source=str(data.get("source", "")))
        except (KeyError, AssertionError, TypeError) as e:
            raise PlanInputError(f"a facts file needs real, virtual, python3 and kernel "
                                 f"({type(e).__name__}: {e})") from None


def _strings(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"expected a list of names, got {value!r}")
    return value


def _major_minor(version: str) -> tuple[int, int] | None:
    """'3.12.3-0ubuntu2' -> (3, 12)."""
    match = re.match(r"^(?:\d+:)?(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class Wanted:
    name: str
    required: bool
    why: str = ""


@dataclass
class Plan:
    release: OsRelease
    facts: PackageFacts
    packages: list[Wanted] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        return [w.name for w in self.packages]

    def missing(self) -> list[Wanted]:
        """The plan's packages not installed yet."""
        return [w for w in self.packages if w.name not in self.facts.installed]


def make_plan(release: OsRelease, facts: PackageFacts, *, tests: bool = True) -> Plan:
    plan = Plan(release, facts)
    wanted = [Wanted(n, True) for n in REQUIRED] + [Wanted(n, False, WHY[n]) for n in OPTIONAL]
    if tests:
        wanted += [Wanted(n, True) for n in TEST_REQUIRED]
        wanted += [Wanted(n, False, WHY[n]) for n in TEST_OPTIONAL]
    python = facts.python
    if python is None:
        plan.errors.append("no python3 in this release's archive")
    elif python < MIN_PYTHON:
        plan.errors.append(f"{release.pretty_name} ships Python {python[0]}.{python[1]}; "
                           f"netrepro needs Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or later")
    if python is not None and python >= MIN_PYTHON and \
            not TRIED_PYTHON[0] <= python <= TRIED_PYTHON[1]:
        plan.warnings.append(
            f"Python {python[0]}.{python[1]}: netrepro was tried on Python "
            f"{TRIED_PYTHON[0][0]}.{TRIED_PYTHON[0][1]} to {TRIED_PYTHON[1][0]}."
            f"{TRIED_PYTHON[1][1]} only (docs/distributions.md)")
    if python is not None and python >= DISTUTILS_GONE:
        wanted.append(Wanted("python3-setuptools", True, WHY["python3-setuptools"]))
        plan.notes.append(f"python3-setuptools: Python {python[0]}.{python[1]} has no "
                          "distutils, which Mininet 2.3.0 imports")
    universe_missing: list[str] = []
    for want in wanted:
        kind = facts.kind(want.name)
        if kind == "real" or want.name in facts.installed:
            plan.packages.append(want)
        elif want.required:
            universe_missing.append(want.name)
            if not _universe_off(release, facts):
                plan.errors.append(f"required package {want.name} is {_absent(want, facts)}")
        else:
            if _universe_off(release, facts):
                universe_missing.append(want.name)
            plan.warnings.append(f"optional package {want.name} is {_absent(want, facts)}: "
                                 f"no {want.why}")
    _add_bpftool(plan)
    if tests:
        _add_browser(plan)
    if universe_missing and _universe_off(release, facts):
        plan.errors.insert(0, f"Ubuntu's universe component is not enabled here, and "
                              f"{', '.join(universe_missing)} live there: {ENABLE_UNIVERSE}")
    return plan


def _universe_off(release: OsRelease, facts: PackageFacts) -> bool:
    return (release.is_ubuntu and facts.components is not None
            and "universe" not in facts.components)


def _absent(want: Wanted, facts: PackageFacts) -> str:
    providers = facts.virtual.get(want.name)
    if providers:
        return f"only a virtual package here (provided by {', '.join(providers)})"
    return "not in this release's archive"


def _add_bpftool(plan: Plan) -> None:
    """bpftool is a package of its own on Debian and Ubuntu 26.04; on Ubuntu 24.04 and
    earlier only a virtual one: linux-tools-common's /usr/sbin/bpftool runs the copy in
    linux-tools-$(uname -r), the running kernel's."""
    facts, why = plan.facts, WHY["bpftool"]
    kind = facts.kind("bpftool")
    if kind == "real" or "bpftool" in facts.installed:
        plan.packages.append(Wanted("bpftool", False, why))
        return
    providers = facts.virtual.get("bpftool", ())
    kernel_tools = f"linux-tools-{facts.kernel}"
    if "linux-tools-common" in providers and facts.kind("linux-tools-common") == "real":
        if facts.kind(kernel_tools) == "real":
            plan.packages += [Wanted("linux-tools-common", False, why),
                              Wanted(kernel_tools, False, why)]
            plan.notes.append(f"bpftool: only a virtual package here; installing "
                              f"linux-tools-common and {kernel_tools} (kernel {facts.kernel})")
            return
        plan.warnings.append(
            f"bpftool: only a virtual package here, provided by linux-tools-common with the "
            f"running kernel's {kernel_tools}, which is not in the archive (a kernel not "
            f"from this release?): no {why}; boot one of the release's kernels, or install "
            "a bpftool that runs on this one")
        return
    plan.warnings.append(f"bpftool is {_absent(Wanted('bpftool', False), facts)}: no {why}")


def _add_browser(plan: Plan) -> None:
    for name in BROWSER:
        if plan.facts.kind(name) == "real" or name in plan.facts.installed:
            plan.packages.append(Wanted(name, False, WHY[name]))
        else:
            plan.warnings.append(
                f"{name} is {_absent(Wanted(name, False), plan.facts)}, not a deb (on Ubuntu "
                "only the chromium snap's transitional package provides it): the report's "
                "browser test cannot run (README, Developing)")


# --- facts of the live machine (read-only) ----------------------------------------------------

APT_TIMEOUT_S = 60


def _run(args: Sequence[str]) -> str:
    try:
        result = subprocess.run(list(args), capture_output=True, text=True,
                                timeout=APT_TIMEOUT_S, env={**os.environ, "LANG": "C"})
    except FileNotFoundError:
        raise PlanInputError(f"{args[0]} is not installed: this machine has no apt") from None
    except subprocess.TimeoutExpired:
        raise PlanInputError(f"`{' '.join(args)}` did not answer within {APT_TIMEOUT_S} s") \
            from None
    return result.stdout


def parse_policy(text: str) -> dict[str, str]:
    """`apt-cache policy NAME...` -> {name: candidate version} for names with a candidate."""
    candidates: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            name = line[:-1]
        elif line.strip().startswith("Candidate:") and name:
            version = line.split(":", 1)[1].strip()
            if version != "(none)":
                candidates[name] = version
    return candidates


def parse_reverse_provides(text: str) -> tuple[str, ...]:
    """`apt-cache showpkg NAME` -> the packages that provide NAME."""
    _, sep, tail = text.partition("Reverse Provides:")
    if not sep:
        return ()
    return tuple(sorted({line.split()[0] for line in tail.splitlines() if line.strip()}))


def parse_components(text: str) -> frozenset[str]:
    """`apt-cache policy` (no names) -> the components of the enabled sources (c=...)."""
    return frozenset(re.findall(r"\bc=([A-Za-z0-9-]+)", text))


def live_facts(names: Iterable[str], kernel: str | None = None) -> PackageFacts:
    kernel = kernel or os.uname().release
    asked = sorted(set(names) | {"python3", "linux-tools-common", f"linux-tools-{kernel}"})
    candidates = parse_policy(_run(["apt-cache", "policy", *asked]))
    virtual = {name: parse_reverse_provides(_run(["apt-cache", "showpkg", name]))
               for name in asked if name not in candidates}
    installed = frozenset(line.split()[0] for line in _run(
        ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n", *asked]).splitlines()
        if line.split()[1:2] == ["ii"])
    python = _major_minor(candidates.get("python3", "")) or sys.version_info[:2]
    components = parse_components(_run(["apt-cache", "policy"]))
    return PackageFacts(real=frozenset(candidates), virtual=virtual, python=python,
                        kernel=kernel, components=components or None, installed=installed,
                        source="this machine's apt-cache and dpkg (read-only)")


def every_name_asked() -> list[str]:
    return [*REQUIRED, *OPTIONAL, *TEST_REQUIRED, *TEST_OPTIONAL, *BROWSER, "bpftool",
            "python3-setuptools"]


def recorded_facts(release: OsRelease, kernel: str | None = None) -> PackageFacts:
    path = RECORDED_FACTS / f"{release.key}.json"
    if not path.is_file():
        known = sorted(p.stem for p in RECORDED_FACTS.glob("*.json"))
        raise PlanInputError(f"no recorded package facts for {release.pretty_name} "
                             f"({path.name}; recorded: {', '.join(known)}); give --facts FILE")
    return PackageFacts.from_json(json.loads(path.read_text()), kernel)


def facts_json(facts: PackageFacts) -> dict[str, object]:
    """A facts file's content (what is installed is the machine's, not the release's)."""
    return {"source": facts.source,
            "python3": ".".join(map(str, facts.python)) if facts.python else "",
            "kernel": facts.kernel,
            "components": sorted(facts.components) if facts.components is not None else None,
            "real": sorted(facts.real),
            "virtual": {k: list(v) for k, v in sorted(facts.virtual.items()) if v}}


# --- the command line -------------------------------------------------------------------------

def report(plan: Plan, *, live: bool) -> str:
    f = plan.facts
    python = f"{f.python[0]}.{f.python[1]}" if f.python else "none"
    lines = [f"release: {plan.release.pretty_name} ({plan.release.key})",
             f"facts: {f.source}",
             f"python3: {python}; kernel: {f.kernel}; components: "
             f"{' '.join(sorted(f.components)) if f.components is not None else 'unknown'}"]
    todo = plan.packages
    if live:  # what is installed already is known here
        lines.append(f"packages ({len(plan.packages)}): {' '.join(plan.names())}")
        todo = plan.missing()
    lines.append(f"would install ({len(todo)}): " + (" ".join(w.name for w in todo)
                                                     or "nothing, all present"))
    lines += [f"note: {n}" for n in plan.notes]
    lines += [f"warning: {w}" for w in plan.warnings]
    lines += [f"error: {e}" for e in plan.errors]
    lines.append("setup would stop here (errors above)" if plan.errors
                 else "setup would go on to build native/")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--print", dest="what", choices=("report", "missing", "facts"),
                        default="report",
                        help="report: the whole plan; missing: `name required|optional` of "
                        "each package not installed yet (warnings and errors on stderr); "
                        "facts: the facts as a facts file (to record a release)")
    parser.add_argument("--os-release", type=Path, default=Path("/etc/os-release"))
    parser.add_argument("--facts", type=Path, help="a facts file instead of this machine's")
    parser.add_argument("--kernel", help="uname -r to plan for (default: this machine's)")
    parser.add_argument("--programs-only", action="store_true",
                        help="leave out the test tools, as setup's --programs-only")
    args = parser.parse_args(argv)
    try:
        release = OsRelease.parse(args.os_release.read_text())
        here = OsRelease.parse(Path("/etc/os-release").read_text())
        live = args.facts is None and release.key == here.key
        if args.facts is not None:
            facts = PackageFacts.from_json(json.loads(args.facts.read_text()), args.kernel)
        elif live:
            facts = live_facts(every_name_asked(), args.kernel)
        else:
            facts = recorded_facts(release, args.kernel)
    except (OSError, PlanInputError, json.JSONDecodeError) as e:
        print(f"package plan: {e}", file=sys.stderr)
        return 2
    if args.what == "facts":
        print(json.dumps(facts_json(facts), indent=1))
        return 0
    plan = make_plan(release, facts, tests=not args.programs_only)
    if args.what == "report":
        print(report(plan, live=live))
        return 1 if plan.errors else 0
    for line in [f"warning: {w}" for w in plan.warnings] + [f"error: {e}" for e in plan.errors]:
        print(f"setup: {line}", file=sys.stderr)
    for want in plan.missing():
        print(want.name, "required" if want.required else "optional")
    return 1 if plan.errors else 0


if __name__ == "__main__":
    sys.exit(main())
