"""Scheme names on figures: the table's spelling, and who served a TCP variant."""
import pytest

from analysis import scheme_labels
from analysis.scheme_labels import display_name, scheme_label, scheme_style
from schemes import registry
from schemes.table import SchemeEntry


def test_paper_spelling_comes_from_the_tables() -> None:
    assert display_name("sprout-ewma") == "Sprout-EWMA"
    assert display_name("bic") == "BIC" and display_name("bbr") == "BBR"
    assert display_name("my-scheme") == "my-scheme"


def test_a_label_changed_in_the_table_changes_on_figures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    entry = registry.scheme_entry("cubic")
    changed = SchemeEntry(entry.name, entry.family, entry.description, entry.build,
                          entry.params, label="CUBIC (test)", colour="lime", marker="1")
    tcp = tuple(changed if e.name == "cubic" else e for e in registry.FAMILIES[0])
    monkeypatch.setattr(registry, "FAMILIES", (tcp, *registry.FAMILIES[1:]))
    assert display_name("cubic") == "CUBIC (test)"
    assert scheme_label("cubic", ["builtin"]) == "CUBIC (test)"
    assert scheme_style("cubic") == scheme_labels.SchemeStyle("lime", "1")


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


def test_every_scheme_has_its_own_look_and_unknown_ones_differ_from_all() -> None:
    entries = registry.all_entries()
    looks = [(e.colour, e.marker) for e in entries]
    assert all(c and m for c, m in looks), "give every table entry a colour and a marker"
    duplicates = {look for look in looks if looks.count(look) > 1}
    assert not duplicates, f"two schemes drawn alike: {duplicates}"
    for name in ("unknown", "another-one", "x"):
        style = scheme_style(name)
        assert style == scheme_style(name)
        assert (style.colour, style.marker) not in looks
