"""Deprecated option spellings, per command: they keep working, hidden from ``--help``, and
each use prints one ``ragdiag: note: OLD is deprecated here, use NEW`` line on stderr.

A value is the new flag; a function of the value given that returns the new flag (or None to
keep the old one, when the spelling is still right for that value); or, for a flag that became
an option value, the tokens that replace it (``--no-cache`` → ``--cache off``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional, Union

Renamed = Union[str, Callable[[Optional[str]], Optional[str]], tuple[str, ...]]


def _npy_queries(value: Optional[str]) -> Optional[str]:
    """robustness --queries X.npy meant query vectors; --queries FILE.jsonl is a BEIR queries file."""
    return "--query-vectors" if value is not None and value.lower().endswith(".npy") else None


def _count_queries(value: Optional[str]) -> Optional[str]:
    """probe names --queries 30 meant the number of synthetic queries; --queries FILE is your own queries."""
    return "--n-queries" if value is not None and value.strip().isdigit() else None


_RETRIEVE: dict[str, Renamed] = {"--index": "--index-dir"}
_GENERATE: dict[str, Renamed] = {"--k": "--ks", "--rank-with": "--embedder"}

DEPRECATED: dict[str, dict[str, Renamed]] = {
    "generate": _GENERATE,
    "pipeline": _GENERATE,
    "retrieve": _RETRIEVE,
    "index search": _RETRIEVE,
    "index build": {"--out": "--out-dir", "--index": "--index-spec", "--no-cache": ("--cache", "off")},
    "robustness": {
        "--base": "--base-vectors", "--queries": _npy_queries, "--query-texts": "--queries",
        "--index": "--index-spec", "--plot": "--plot-dir", "--repeats": "--qps-repeats",
    },
    "probe names": {"--queries": _count_queries},
}
