"""``ragdiag cache``: statistics, export/import as JSON lines and explicit pruning of both caches.

It sits beside both caches in :mod:`ragdiag.remote`, so neither ``llm/`` nor ``retrieval/`` imports the other.

Both caches live in the cache folder (``--cache-dir``, else ``$RAGDIAG_CACHE_DIR``, else the user
cache dir): LLM calls in ``llm_calls.sqlite``, embedding vectors in ``embeddings.sqlite``. An
export line carries ``"kind": "llm"`` or ``"kind": "embeddings"`` (a line without it is an LLM
entry, as in exports written before embeddings were exported), so one file can hold both and
``import`` sends each entry to its cache after checking it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.config import resolve_cache_dir
from ragdiag.errors import RagdiagError
from ragdiag.io.writer import guard_outputs
from ragdiag.remote.call_cache import CACHE_FILE as LLM_FILE
from ragdiag.remote.call_cache import CallCache
from ragdiag.remote.embedding_cache import CACHE_FILE as EMBEDDINGS_FILE
from ragdiag.remote.embedding_cache import EmbeddingCache

KINDS = ("llm", "embeddings")
_FILES = {"llm": LLM_FILE, "embeddings": EMBEDDINGS_FILE}
_NAMES = {"llm": "LLM call cache", "embeddings": "embedding cache"}


def _kinds(kind: str) -> tuple[str, ...]:
    if kind == "all":
        return KINDS
    if kind not in KINDS:
        raise RagdiagError(f"cache kind must be llm, embeddings or all, got '{kind}'")
    return (kind,)


def cache_path(cache_dir: Path | None, kind: str) -> Path:
    """The file of one cache kind in the cache folder."""
    return resolve_cache_dir(cache_dir) / _FILES[kind]


def open_cache(cache_dir: Path | None, kind: str = "llm", must_exist: bool = True) -> CallCache | EmbeddingCache:
    """One cache, opened through the shared store (a broken file is one clear line)."""
    path = cache_path(cache_dir, kind)
    if must_exist and not path.exists():
        raise RagdiagError(f"no {_NAMES[kind]} at {path}")
    return (CallCache if kind == "llm" else EmbeddingCache)(path)


def cache_stats(cache_dir: Path | None, kind: str = "all") -> dict[str, Any]:
    """Per-cache statistics under ``caches``; for ``llm`` (and ``all``) the LLM cache's keys at top level too."""
    caches: dict[str, Any] = {}
    if kind == "all" and not any(cache_path(cache_dir, name).exists() for name in KINDS):
        raise RagdiagError(f"no LLM call cache or embedding cache in {resolve_cache_dir(cache_dir)}")
    for name in _kinds(kind):
        path = cache_path(cache_dir, name)
        if kind == "all" and not path.exists():
            caches[name] = {"kind": name, "path": str(path), "entries": 0, "bytes": 0, "groups": [], "exists": False}
            continue
        cache = open_cache(cache_dir, name)
        try:
            caches[name] = {**cache.stats(), "exists": True}
        finally:
            cache.close()
    top = {k: v for k, v in caches.get("llm", {}).items() if k in ("path", "entries", "bytes", "groups")}
    return {**top, "kind": kind, "caches": caches}


def cache_entries(cache_dir: Path | None, kinds: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Every entry of the caches ``kinds``, each with its ``kind`` (read lazily, cache by cache)."""
    for name in kinds:
        cache = open_cache(cache_dir, name)
        try:
            for entry in cache.export():
                yield {**entry, "kind": name}
        finally:
            cache.close()


@dataclass(frozen=True)
class ExportPlan:
    """What ``cache export`` reads: the caches (``kinds``) and the paths an export must not overwrite."""

    kinds: tuple[str, ...]
    sources: list[Path]


def plan_export(cache_dir: Path | None, out: Path, kind: str = "llm") -> ExportPlan:
    """Check an export before anything is written: refused when ``out`` is a cache file or lies inside
    the cache folder, or when a chosen cache does not exist. The caller writes
    :func:`cache_entries` to ``out`` (one JSON line each)."""
    kinds = _kinds(kind)
    folder = resolve_cache_dir(cache_dir)
    sources = [folder, *(cache_path(cache_dir, k) for k in KINDS)]
    if Path(out).resolve().is_relative_to(folder.resolve()):
        raise RagdiagError(f"{out}: is inside the cache folder {folder}; write the export somewhere else")
    guard_outputs([out], sources)
    for name in kinds:
        if not cache_path(cache_dir, name).exists():
            raise RagdiagError(f"no {_NAMES[name]} at {cache_path(cache_dir, name)}")
    return ExportPlan(kinds, sources)


def _export_records(source: Path) -> tuple[list[tuple[int, Any]], list[str]]:
    """(entry number, entry) of an export file, and one reason per line that is not JSON (skipped
    and counted like any bad entry). A JSON list file is read whole; a file where no line is JSON
    is not an export at all: one line."""
    import orjson

    from ragdiag.io.jsonl import read_json_records

    data = source.read_bytes() if source.is_file() else b""
    if not source.is_file() or source.suffix == ".gz" or data.lstrip().startswith(b"["):
        return list(enumerate(read_json_records(source), start=1)), []
    records: list[tuple[int, Any]] = []
    skipped: list[str] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((len(records) + len(skipped) + 1, orjson.loads(line)))
        except orjson.JSONDecodeError as err:
            skipped.append(f"{source}: entry {len(records) + len(skipped) + 1} (line {number}): malformed JSON "
                           f"({str(err).split(':')[0]})")
    if skipped and not records:
        raise RagdiagError(f"{source}: malformed JSON on every line ({len(skipped)}); not a cache export "
                           "(written by 'ragdiag cache export')")
    return records, skipped


def import_cache(cache_dir: Path | None, source: Path, kind: str = "all") -> tuple[dict[str, int], list[str]]:
    """Add the checked entries of an export file (existing keys kept).

    Returns the number added per cache and one reason per skipped entry (malformed, or of a kind not
    asked for). Entries are routed by their ``kind`` (none means ``llm``).
    """
    kinds = _kinds(kind)
    records, skipped = _export_records(Path(source))
    routed: dict[str, list[Any]] = {name: [] for name in KINDS}
    for index, entry in records:
        entry_kind = entry.get("kind", "llm") if isinstance(entry, dict) else "llm"
        if entry_kind not in KINDS:
            skipped.append(f"{source}: entry {index}: unknown kind {entry_kind!r}")
        elif entry_kind not in kinds:
            skipped.append(f"{source}: entry {index}: a {entry_kind} entry (importing {kind} only)")
        else:
            routed[entry_kind].append((index, entry))
    added: dict[str, int] = {}
    for name in kinds:
        if not routed[name]:
            continue
        cache = open_cache(cache_dir, name, must_exist=False)
        try:
            added[name], bad = cache.import_entries([entry for _, entry in routed[name]], str(source),
                                                    [index for index, _ in routed[name]])
        finally:
            cache.close()
        skipped.extend(bad)
    return added, skipped


def prune_cache(cache_dir: Path | None, model: str | None, prompt: str | None, kind: str = "llm") -> int:
    """Delete LLM entries of a model and/or prompt version, or embedding vectors of a model."""
    if kind == "all":
        raise RagdiagError("cache prune works on one cache at a time: --kind llm or --kind embeddings")
    cache = open_cache(cache_dir, kind)
    try:
        if kind == "llm":
            return cache.prune(model, prompt)
        if prompt is not None:
            raise RagdiagError("--prompt applies to the LLM cache; prune embeddings with --model")
        return cache.prune(model)
    finally:
        cache.close()
