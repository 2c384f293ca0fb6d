"""``ragdiag cache stats`` as tables: one per cache, entries per model and prompt version (LLM calls)
or per embedder (vectors)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ragdiag.report.fit_table import fitted


def print_stats(info: dict[str, Any], console: Console) -> None:
    for name, cache in info["caches"].items():
        state = "" if cache["exists"] else " (no file yet)"
        table = Table(title=f"{name}: {cache['path']}{state}: {cache['entries']} entries, {cache['bytes']} bytes")
        columns: tuple[str, ...]
        keys: tuple[str, ...]
        if name == "llm":
            columns, keys = ("model", "prompt", "entries", "prompt tokens", "completion tokens"), \
                ("model", "prompt", "entries", "prompt_tokens", "completion_tokens")
        else:
            columns, keys = ("embedder", "model", "vectors", "dim"), ("embedder", "model", "entries", "dim")
        for column in columns:
            table.add_column(column)
        for group in cache["groups"]:
            table.add_row(*(str(group[key]) for key in keys))
        console.print(fitted(table))
