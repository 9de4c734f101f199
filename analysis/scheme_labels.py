"""How a scheme is named and drawn on figures and in tables.

A TCP variant served by netrepro's own eBPF implementation (metrics.json
`cc_provider` = "ebpf") is not the kernel's code, so its label says so:
"Vegas (eBPF)". Kernel-served variants (built in or a module) carry no tag.
Names, colours and markers come from the scheme tables (schemes/registry.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from schemes.registry import UnknownScheme, scheme_entry

# Providers that are not the kernel's own code, and the tag they get.
PROVIDER_TAGS = {"ebpf": "eBPF"}
KERNEL_TAG = "kernel"


@dataclass(frozen=True)
class SchemeStyle:
    colour: str
    marker: str


# For names no table knows (none of these is a table entry's look).
_FALLBACK = (SchemeStyle("lightcoral", "8"), SchemeStyle("slateblue", "H"),
             SchemeStyle("dimgray", "d"), SchemeStyle("gold", "p"))


def display_name(scheme: str) -> str:
    """The paper's spelling of a scheme name; unknown names are shown as they are."""
    try:
        return scheme_entry(scheme).display_name
    except UnknownScheme:
        return scheme


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
    try:
        entry = scheme_entry(scheme)
    except UnknownScheme:
        entry = None
    if entry is not None and entry.colour and entry.marker:
        return SchemeStyle(entry.colour, entry.marker)
    return _FALLBACK[sum(scheme.encode()) % len(_FALLBACK)]
