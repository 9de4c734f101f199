"""Scheme names on figures: the paper's spelling, and who served a TCP variant."""
from analysis.scheme_labels import STYLES, display_name, scheme_label, scheme_style


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
    looks = {(s.colour, s.marker) for s in STYLES.values()}
    assert len(looks) == len(STYLES)
    assert scheme_style("unknown") == scheme_style("unknown")
