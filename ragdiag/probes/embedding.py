"""Shared pieces of the embedding probes: embedder loading, call counters, the ``meta`` block."""

from __future__ import annotations

import sys
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ragdiag import __version__
from ragdiag.retrieval.embedders import Embedder, EmbedStats, load_embedder


def load_embedders(specs: list[str], cache_dir: Path | None, use_cache: bool = True,
                   cache_mode: str | None = None) -> list[Embedder]:
    """One embedder per distinct spec (default ``local``); all go through the embedding cache."""
    return [load_embedder(spec, cache_dir, use_cache, cache_mode=cache_mode) for spec in dict.fromkeys(specs or ["local"])]


def embedding_calls(before: EmbedStats, after: EmbedStats) -> dict[str, int]:
    """Counter difference: texts asked for, cache hits, model calls and texts embedded."""
    b, a = asdict(before), asdict(after)
    return {key: a[key] - b.get(key, 0) for key in a}


def _package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def command_line() -> str:
    """The command as typed (console script), else the click command path (e.g. under CliRunner)."""
    if sys.argv and Path(sys.argv[0]).name == "ragdiag":
        return " ".join(["ragdiag", *sys.argv[1:]])
    import click

    ctx = click.get_current_context(silent=True)
    return ctx.command_path if ctx else "ragdiag"


def make_meta(probe: str, params: dict, embedders: list[Embedder], data_files: dict[str, str]) -> dict:
    """How a result was made: command line, versions, embedders, seed and parameters, file hashes."""
    return {
        "probe": probe,
        "command": command_line(),
        "ragdiag_version": __version__,
        "versions": {name: _package_version(name) for name in ("faker", "numpy", "sentence-transformers")},
        "embedders": [e.identity for e in embedders],
        "params": params,
        "data_files_sha256": data_files,
    }
