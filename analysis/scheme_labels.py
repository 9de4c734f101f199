"""How a scheme is named and drawn on figures and in tables.

A TCP variant served by netrepro's own eBPF implementation (metrics.json
`cc_provider` = "ebpf") is not the kernel's code, so its label says so:
"Vegas (eBPF)". Kernel-served variants (built in or a module) carry no tag.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

DISPLAY_NAMES = {
    "sprout": "Sprout",
    "sprout-ewma": "Sprout-EWMA",
    "cubic": "Cubic",
    "cubic-codel": "Cubic-CoDel",
    "vegas": "Vegas",
    "reno": "Reno",
    "bic": "BIC",
    "hybla": "Hybla",
    "bbr": "BBR",
}
# Providers that are not the kernel's own code, and the tag they get.
PROVIDER_TAGS = {"ebpf": "eBPF"}
KERNEL_TAG = "kernel"


@dataclass(frozen=True)
class SchemeStyle:
    colour: str
    marker: str


STYLES = {
    "sprout": SchemeStyle("tab:red", "*"),
    "sprout-ewma": SchemeStyle("tab:orange", "P"),
    "cubic": SchemeStyle("tab:blue", "o"),
    "cubic-codel": SchemeStyle("tab:cyan", "d"),
    "vegas": SchemeStyle("tab:green", "s"),
    "reno": SchemeStyle("tab:purple", "^"),
    "bic": SchemeStyle("tab:brown", "v"),
    "hybla": SchemeStyle("tab:pink", "D"),
    "bbr": SchemeStyle("tab:gray", "X"),
}
_FALLBACK = (SchemeStyle("tab:olive", "h"), SchemeStyle("tab:cyan", "<"),
             SchemeStyle("black", ">"), SchemeStyle("gold", "p"))


def display_name(scheme: str) -> str:
    """The paper's spelling of a scheme name; unknown names are shown as they are."""
    return DISPLAY_NAMES.get(scheme, scheme)


def scheme_label(scheme: str, providers: Iterable[str | None] = ()) -> str:
    """The display name, tagged with every non-kernel provider that served its runs.

    `providers` holds one `cc_provider` per run (None for schemes that are not TCP).
    When some runs were served by eBPF and others by the kernel, both tags show.
    """
    seen = {p for p in providers if p}
    tags = sorted(PROVIDER_TAGS[p] for p in seen if p in PROVIDER_TAGS)
    if tags and seen - PROVIDER_TAGS.keys():
        tags.append(KERNEL_TAG)
    name = display_name(scheme)
    return f"{name} ({'/'.join(tags)})" if tags else name


def scheme_style(scheme: str) -> SchemeStyle:
    """A fixed colour and marker per known scheme, so every panel reads the same."""
    if scheme in STYLES:
        return STYLES[scheme]
    return _FALLBACK[sum(scheme.encode()) % len(_FALLBACK)]
