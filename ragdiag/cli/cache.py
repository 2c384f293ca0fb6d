"""``ragdiag cache stats|export|import|prune``: manage the LLM call cache and the embedding cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand
from ragdiag.cli.options import PATH, TEXT, AdminCacheDir, CacheKind, choices_metavar

app = typer.Typer(cls=HelpGroup, help="Manage the LLM call cache and the embedding cache (SQLite): stats, export, import, prune.",
                  no_args_is_help=True)


def _kind_option(default: str, what: str):
    return o.option(o.INPUT, "--kind", help=f"Which cache: llm, embeddings or all (default {default}).{' ' + what if what else ''}",
                        metavar=choices_metavar(CacheKind))


@app.command("stats", cls=PanelCommand)
def stats(cache_dir: AdminCacheDir = None,
          kind: Annotated[CacheKind, _kind_option("all", "")] = CacheKind.all,
          fmt: Annotated[Optional[o.TableFormat], o.retold(o.TableFormatOpt, "What to print: a table (default) or JSON.")] = None,
          as_json: o.JsonAlias = False) -> None:
    """Entries per model and prompt version (LLM calls) and per embedder (vectors)."""
    from rich.console import Console

    from ragdiag.commands.cache import CacheRequest, run
    from ragdiag.report.cache_report import print_stats

    info = run(CacheRequest("stats", cache_dir, kind.value)).stats
    if as_json or fmt is o.TableFormat.json:
        typer.echo(json.dumps(info, indent=1))
        return
    print_stats(info or {}, Console())


@app.command("export", cls=PanelCommand)
def export(out: Annotated[Path, o.retold(o.OutRequired, "JSON lines file (outside the cache folder).")],
           cache_dir: AdminCacheDir = None,
           kind: Annotated[CacheKind, _kind_option("llm", "")] = CacheKind.llm) -> None:
    """Write every entry (LLM: request, reply, tokens; embeddings: identity, text hash, vector) as JSON lines."""
    from ragdiag.commands.cache import CacheRequest, run

    typer.echo(f"exported {run(CacheRequest('export', cache_dir, kind.value, out=out)).count} entries to {out}")


@app.command("import", cls=PanelCommand)
def import_(source: Annotated[Path, typer.Argument(help="A file written by cache export.", metavar=PATH)],
            cache_dir: AdminCacheDir = None,
            kind: Annotated[CacheKind, _kind_option("all", "Each entry goes to the cache its 'kind' names.")]
            = CacheKind.all) -> None:
    """Add exported entries; each is checked (keys re-derived), bad ones are skipped and counted."""
    import sys

    from ragdiag.commands.cache import CacheRequest, run

    result = run(CacheRequest("import", cache_dir, kind.value, source=source))
    added, skipped = result.added, result.skipped
    parts = [f"{count} new {name} entries" for name, count in added.items()] or ["no new entries"]
    typer.echo(f"imported {', '.join(parts)} from {source}" + (f"; skipped {len(skipped)} bad entries" if skipped else ""))
    for reason in skipped[:20]:
        print(f"ragdiag: skipped: {reason}", file=sys.stderr)
    if len(skipped) > 20:
        print(f"ragdiag: skipped: ... and {len(skipped) - 20} more", file=sys.stderr)


@app.command("prune", cls=PanelCommand)
def prune(
    model: Annotated[Optional[str], o.option(o.INPUT, "--model", help="Delete entries of this model (an embedder's model for --kind embeddings).", metavar=TEXT)] = None,
    prompt: Annotated[Optional[str], o.option(o.INPUT, "--prompt", help="Delete LLM entries of this prompt version, e.g. grading@v1.", metavar=TEXT)] = None,
    cache_dir: AdminCacheDir = None,
    kind: Annotated[CacheKind, _kind_option("llm", "")] = CacheKind.llm,
) -> None:
    """Delete entries of a model and/or prompt version (nothing expires by itself)."""
    from ragdiag.commands.cache import CacheRequest, run

    typer.echo(f"deleted {run(CacheRequest('prune', cache_dir, kind.value, model=model, prompt=prompt)).count} entries")
