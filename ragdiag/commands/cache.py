"""``ragdiag cache stats|export|import|prune``: the LLM call cache and the embedding cache (SQLite).

The work is :mod:`ragdiag.remote.cache_admin`; here each action checks its paths first and returns
what the command prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragdiag.errors import RagdiagError


@dataclass
class CacheRequest:
    """``action`` with its options: ``out`` (export), ``source`` (import), ``model``/``prompt`` (prune)."""

    action: Literal["stats", "export", "import", "prune"]
    cache_dir: Path | None = None
    kind: str = "all"
    out: Path | None = None
    source: Path | None = None
    model: str | None = None
    prompt: str | None = None


@dataclass
class CacheResult:
    """``stats``: the per-cache statistics (``cache stats --json`` prints them as they are);
    ``export``/``prune``: the entry count; ``import``: new entries per cache and the skipped ones."""

    action: str
    stats: dict[str, Any] | None = None
    count: int = 0
    added: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def export(cache_dir: Path | None, out: Path, kind: str) -> int:
    """Write every entry of the chosen caches to ``out`` as one JSON line each (atomically, after
    :func:`ragdiag.remote.cache_admin.plan_export`'s checks); returns the count."""
    from ragdiag.io.writer import write_jsonl
    from ragdiag.remote import cache_admin

    plan = cache_admin.plan_export(cache_dir, out, kind)
    count = 0

    def counted() -> Iterator[dict[str, Any]]:
        nonlocal count
        for entry in cache_admin.cache_entries(cache_dir, plan.kinds):
            count += 1
            yield entry

    write_jsonl(out, counted(), inputs=plan.sources)
    return count


def run(request: CacheRequest) -> CacheResult:
    """Check the action's paths, run it on the caches, return what the command prints."""
    from ragdiag.remote import cache_admin

    r = request
    if r.action == "stats":
        return CacheResult("stats", stats=cache_admin.cache_stats(r.cache_dir, r.kind))
    if r.action == "export":
        if r.out is None:
            raise RagdiagError("cache export needs --out")
        from ragdiag.io.paths import check_paths

        check_paths(outputs={"--out": r.out}, folders={"--cache-dir": r.cache_dir})
        return CacheResult("export", count=export(r.cache_dir, r.out, r.kind))
    if r.action == "import":
        if r.source is None:
            raise RagdiagError("cache import needs the export file to read")
        added, skipped = cache_admin.import_cache(r.cache_dir, r.source, r.kind)
        return CacheResult("import", added=added, skipped=skipped)
    return CacheResult("prune", count=cache_admin.prune_cache(r.cache_dir, r.model, r.prompt, r.kind))
