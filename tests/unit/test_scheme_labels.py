"""Scheme names on figures: the paper's spelling, and who served a TCP variant."""
from analysis.scheme_labels import _FALLBACK, STYLES, display_name, scheme_label, scheme_style
from experiments.sprout_fig7 import SCHEMES


def test_paper_spelling() -> None:
    assert display_name("sprout-ewma") == "Sprout-EWMA"
    assert display_name("bic") == "BIC" and display_name("bbr") == "BBR"
    assert display_name("my-scheme") == "my-scheme"


def test_ebpf_served_variants_say_so() -> None:
    assert scheme_label("vegas", ["ebpf", "ebpf"]) == "Vegas (eBPF)"
    assert scheme_label("hybla", ["ebpf"]) == "Hybla (eBPF)"


def test_kernel_served_and_non_tcp_schemes_carry_no_tag() -> None:
    assert scheme_label("cubic", ["builtin"]) == "Cubic"
    assert scheme_label("vegas", ["module"]) == "Vegas"
    assert scheme_label("sprout", [None]) == "Sprout"
    assert scheme_label("sprout") == "Sprout"


def test_mixed_providers_show_both() -> None:
    assert scheme_label("vegas", ["ebpf", "module"]) == "Vegas (eBPF/kernel)"


def test_every_scheme_of_figure_7_has_its_own_look() -> None:
    assert set(SCHEMES) <= set(STYLES), f"no style for {set(SCHEMES) - set(STYLES)}"
    looks = {(s.colour, s.marker) for s in STYLES.values()}
    assert len(looks) == len(STYLES)


def test_an_unknown_scheme_never_looks_like_a_known_one() -> None:
    known = set(STYLES.values())
    for name in ("my-scheme", "copa", "remy", "unknown", "x"):
        assert scheme_style(name) not in known, name
    # Chosen from the name's bytes (not hash(), which changes per process): the same
    # name draws the same in every figure and every run of the suite.
    assert scheme_style("copa") == _FALLBACK[sum(b"copa") % len(_FALLBACK)]
