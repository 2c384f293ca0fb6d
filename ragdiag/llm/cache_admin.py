"""``ragdiag cache``: statistics, export/import as JSON lines, explicit pruning of the call cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragdiag.config import resolve_cache_dir
from ragdiag.errors import RagdiagError
from ragdiag.llm.cache import CACHE_FILE, CallCache


def open_cache(cache_dir: Path | None, must_exist: bool = True) -> CallCache:
    path = resolve_cache_dir(cache_dir) / CACHE_FILE
    if must_exist and not path.is_file():
        raise RagdiagError(f"no LLM call cache at {path}")
    return CallCache(path)


def cache_stats(cache_dir: Path | None) -> dict[str, Any]:
    cache = open_cache(cache_dir)
    try:
        return cache.stats()
    finally:
        cache.close()


def export_cache(cache_dir: Path | None, out: Path) -> int:
    """Write every entry as one JSON line (request, reply, token counts); returns the count."""
    cache = open_cache(cache_dir)
    count = 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8") as handle:
            for entry in cache.export():
                handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
    finally:
        cache.close()
    return count


def import_cache(cache_dir: Path | None, source: Path) -> int:
    """Add the entries of an export file (existing keys kept); returns the number added."""
    from ragdiag.data.loaders import read_json_records

    entries = read_json_records(source)
    cache = open_cache(cache_dir, must_exist=False)
    try:
        return cache.import_entries(entries, str(source))
    finally:
        cache.close()


def prune_cache(cache_dir: Path | None, model: str | None, prompt: str | None) -> int:
    cache = open_cache(cache_dir)
    try:
        return cache.prune(model, prompt)
    finally:
        cache.close()
