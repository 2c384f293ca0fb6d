"""``ragdiag cache stats|export|import|prune``: manage the LLM call cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli.llm_options import CacheDir

app = typer.Typer(help="Manage the LLM call cache (SQLite): stats, export, import, prune.", no_args_is_help=True)


@app.command("stats")
def stats(cache_dir: CacheDir = None,
          as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False) -> None:
    """Entries and tokens per model and prompt version."""
    from rich.console import Console
    from rich.table import Table

    from ragdiag.llm.cache_admin import cache_stats

    info = cache_stats(cache_dir)
    if as_json:
        typer.echo(json.dumps(info, indent=1))
        return
    table = Table(title=f"{info['path']}: {info['entries']} entries, {info['bytes']} bytes")
    for column in ("model", "prompt", "entries", "prompt tokens", "completion tokens"):
        table.add_column(column)
    for group in info["groups"]:
        table.add_row(group["model"], group["prompt"], str(group["entries"]), str(group["prompt_tokens"]),
                      str(group["completion_tokens"]))
    Console().print(table)


@app.command("export")
def export(out: Annotated[Path, typer.Option("--out", help="JSON lines file.")], cache_dir: CacheDir = None) -> None:
    """Write every entry (request, reply, tokens) as JSON lines."""
    from ragdiag.llm.cache_admin import export_cache

    typer.echo(f"exported {export_cache(cache_dir, out)} entries to {out}")


@app.command("import")
def import_(source: Annotated[Path, typer.Argument(help="A file written by cache export.")], cache_dir: CacheDir = None) -> None:
    """Add exported entries (keys are re-derived from the requests and checked)."""
    from ragdiag.llm.cache_admin import import_cache

    typer.echo(f"imported {import_cache(cache_dir, source)} new entries from {source}")


@app.command("prune")
def prune(
    model: Annotated[Optional[str], typer.Option("--model", help="Delete entries of this model.")] = None,
    prompt: Annotated[Optional[str], typer.Option("--prompt", help="Delete entries of this prompt version, e.g. grading@v1.")] = None,
    cache_dir: CacheDir = None,
) -> None:
    """Delete entries of a model and/or prompt version (nothing expires by itself)."""
    from ragdiag.llm.cache_admin import prune_cache

    typer.echo(f"deleted {prune_cache(cache_dir, model, prompt)} entries")
