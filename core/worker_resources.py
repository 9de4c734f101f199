"""The names of what a worker offers and a run asks for, on a cluster (docs/cluster.md).

A worker advertises these as Dask resources (app/cluster/worker.py); a run's kind says
which it needs (core/run_kind.py), and the scheduler gives the run only to a worker that
has them all.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

RUNS = "runs"  # the resource every run takes one of
CODE = "code:"  # + the measurement code's version (runkinds/registry.py)
TRACE = "trace:"  # + name@first 12 hex digits of its git blob hash
CC = "cc:"  # + variant, and + variant:kernel / variant:ebpf for the provider kind
# The run kinds and scheme families name the others they need and offer (a switch, a
# controller, boxed builds), and say what a worker lacking one must do
# (RunKind.explain_need, a family module's `explain_need`).


def trace_resource(name: str, sha1: str) -> str:
    return f"{TRACE}{name}@{sha1[:12]}"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
