"""The scheme tables: every entry builds, parameters are declared once, the CLI reads them."""
from __future__ import annotations

from pathlib import Path

import pytest

from app import cli
from core.paths import ProjectPaths
from core.runspec import RunSpec, make_params
from schemes import grump, registry
from schemes.base import Scheme
from schemes.grump import ControllerTableError, read_controllers
from schemes.table import SchemeParameterError


def spec(scheme: str, **params: object) -> RunSpec:
    return RunSpec(experiment="x", scheme=scheme, data_trace="rate:12", ack_trace="rate:12",
                   duration_s=5, params=make_params(**params))


def required_values(name: str) -> dict[str, object]:
    entry = registry.scheme_entry(name)
    return {p.name: (p.choices[0] if p.choices else p.minimum)
            for p in entry.params if p.required}


@pytest.fixture
def built_paths(tmp_path: Path) -> ProjectPaths:
    """A project whose native programs 'exist' (empty files): building touches no machine."""
    for component, name in (("grump", "grump-sender"), ("grump", "grump-receiver"),
                            ("sprout", "sprout-sender"), ("sprout", "sprout-receiver"),
                            ("sprout", "sprout-peer"), ("link", "netrepro-link")):
        path = tmp_path / "build" / "native" / component / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    return ProjectPaths(root=tmp_path)


@pytest.mark.parametrize("name", [e.name for e in registry.all_entries() if e.listed])
def test_every_table_entry_builds_its_scheme(name: str, built_paths: ProjectPaths) -> None:
    scheme = registry.make_scheme(spec(name, **required_values(name)), built_paths)
    assert isinstance(scheme, Scheme)
    assert scheme.name == name
    assert scheme.describe()["scheme"] == name


def test_the_controllers_are_those_of_the_data_file_the_native_build_reads() -> None:
    names_in_file = [line.split("\t")[1] for line in grump.CONTROLLERS_FILE.read_text()
                     .splitlines() if line.startswith("controller\t")]
    assert list(grump.CONTROLLERS) == names_in_file
    assert {"aimd", "delay-trigger", "johnnybameesh"} <= set(names_in_file)
    cmake = (grump.CONTROLLERS_FILE.parent / "CMakeLists.txt").read_text()
    assert "controllers.tsv" in cmake and "_controller.cc" not in cmake


def test_controller_parameters_reach_the_native_sender(built_paths: ProjectPaths) -> None:
    scheme = registry.make_scheme(spec("aimd", decrease=4.0, timeout_ms=1000), built_paths)
    assert isinstance(scheme, grump.GrumpScheme)

    class Ends:
        receiver_ip = "10.0.0.2"
        out_dir = Path("/tmp")

    args = scheme.sender_args(Ends(), 10)  # type: ignore[arg-type]
    assert args[args.index("--param") + 1] == "decrease=4"
    assert "timeout_ms=1000" in args


@pytest.mark.parametrize("scheme,params,message", [
    ("aimd", {"decrease": 0.5}, "aimd: --decrease: 0.5 is out of range: a number from 1.01 to 100"),
    ("aimd", {"timeout_ms": 12.5}, "--timeout-ms: 12.5 is not an integer"),
    ("fixed-window", {"window": 0}, "--window: 0 is out of range: an integer from 1 to 100000"),
    ("sprout", {"confidence": 1.5}, "--confidence: 1.5 is out of range: a number from 0.001"),
    ("cubic", {"cc_impl": "module"}, "--cc-impl: 'module' is not one of auto, kernel"),
    ("fixed-window", {}, "fixed-window needs --window"),
    ("delay-trigger", {"low_rtt_ms": 150}, "--low-rtt-ms 150 is above --high-rtt-ms 100"),
])
def test_a_bad_parameter_is_refused_naming_its_flag_and_range(scheme: str, params: dict,
                                                              message: str) -> None:
    with pytest.raises(SchemeParameterError) as e:
        registry.check_params(spec(scheme, **params))
    assert message in str(e.value)


def test_one_name_one_type_across_the_tables() -> None:
    shared = {s.param.name: s for s in registry.shared_params()}
    assert set(shared["window"].schemes) == {"fixed-window", "aimd", "delay-trigger"}
    assert set(shared["rtt_threshold_ms"].schemes) == {"aimd", "sheen"}


def test_the_cli_flags_are_the_tables_parameters() -> None:
    parser = cli.build_parser()
    one = next(a for a in parser._subparsers._group_actions[0].choices.values()  # type: ignore
               if any(o.option_strings == ["--scheme"] for o in a._actions))
    flags = {s for a in one._actions for s in a.option_strings}
    assert {s.flag for s in registry.shared_params()} <= flags
    assert {"--window", "--confidence", "--cc-impl", "--decrease", "--low-rtt-ms"} <= flags


def test_cc_impl_auto_is_the_run_without_it() -> None:
    assert registry.params_from_values("cubic", {"cc_impl": "auto"}) == ()
    assert registry.params_from_values("cubic", {"cc_impl": "ebpf"}) == (("cc_impl", "ebpf"),)


def test_the_controller_file_is_checked_as_cmake_reads_it(tmp_path: Path) -> None:
    bad = tmp_path / "controllers.tsv"
    bad.write_text("controller\tx\tX\tx_controller\tX\tred\to\tdoes x; and y\n")
    with pytest.raises(ControllerTableError, match="semicolons"):
        read_controllers(bad)
    bad.write_text("param\tx\tw\tint\t1\t2\t1\thelp\n")
    with pytest.raises(ControllerTableError, match="must follow"):
        read_controllers(bad)
    bad.write_text("controller\tx\tX\tx_controller\tX\tred\to\td\n"
                   "param\tx\tw\tdouble\t1\t2\t1\thelp\n")
    with pytest.raises(ControllerTableError, match="not int or float"):
        read_controllers(bad)
