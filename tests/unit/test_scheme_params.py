"""A parameter a scheme would ignore is refused, with what the scheme does take."""
from __future__ import annotations

import sys
import types

import pytest

from core.errors import EXIT_USAGE
from app import cli
from core.runspec import RunSpec, make_params
from schemes.registry import SchemeParameterError, UnknownScheme, accepted_params, check_params


def spec(scheme: str, **params: object) -> RunSpec:
    return RunSpec(experiment="x", scheme=scheme, data_trace="rate:12", ack_trace="rate:12",
                   duration_s=5, params=make_params(**params))


@pytest.mark.parametrize("scheme,params", [
    ("fixed-window", {"window": 10}),
    ("aimd", {"window": 4}),
    ("dasjoshma", {}),
    ("sprout", {"confidence": 0.25}),
    ("sprout-ewma", {}),
    ("vegas", {"cc_impl": "ebpf"}),
    ("cubic", {}),
])
def test_parameters_a_scheme_reads_are_accepted(scheme: str, params: dict) -> None:
    check_params(spec(scheme, **params))


@pytest.mark.parametrize("scheme,params,refused,takes", [
    ("sprout", {"window": 10}, "--window", "--confidence"),
    ("cubic", {"window": 10}, "--window", "--cc-impl"),
    ("fixed-window", {"window": 10, "confidence": 0.5}, "--confidence", "--window"),
    ("dasjoshma", {"window": 10}, "--window", "--target-delay-ms"),
    ("sprout-ewma", {"cc_impl": "kernel"}, "--cc-impl", "--confidence"),
])
def test_parameters_a_scheme_would_ignore_are_refused(scheme: str, params: dict, refused: str,
                                                      takes: str) -> None:
    with pytest.raises(SchemeParameterError) as e:
        check_params(spec(scheme, **params))
    assert f"{scheme} does not take {refused}" in str(e.value)
    assert takes in str(e.value)


def test_unknown_scheme_lists_the_known_ones() -> None:
    with pytest.raises(UnknownScheme, match="known: .*sprout-ewma"):
        accepted_params("tcp-westwood")


def test_one_refuses_before_building_anything(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    # Root is only pretended: the refusal comes before any network, process or file.
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    # A stand-in for the executor (the real one imports Mininet): running it fails the test.
    executor = types.ModuleType("app.executor")
    executor.execute = lambda *a, **k: pytest.fail("ran anyway")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "app.executor", executor)
    status = cli.main(["one", "--scheme", "sprout", "--window", "10", "--data-trace",
                       "rate:12", "--ack-trace", "rate:12", "--duration", "5", "--json"])
    assert status == EXIT_USAGE
    assert "sprout does not take --window" in capsys.readouterr().err
