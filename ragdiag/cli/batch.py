"""``ragdiag batch status|collect|cancel DIR``: the batches of a ``--batch-dir`` (glue only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli.params import PATH, CacheDir, MaxRetries, Prices, Timeout

app = typer.Typer(help="Batches sent with --batch: status, collect (into the call cache), cancel.",
                  no_args_is_help=True)
Folder = Annotated[Path, typer.Argument(help="The --batch-dir of the run (default CACHE_DIR/batches).", metavar="DIR")]
Format = Annotated[str, typer.Option("--format", help="table (default) or json.", metavar="[table|json]")]


def _run(action: str, folder: Path, fmt: str, **options) -> None:
    from rich.console import Console
    from rich.table import Table

    from ragdiag.commands.batch import BatchRequest, run
    from ragdiag.errors import RagdiagError
    from ragdiag.llm.runner import format_cost

    if fmt not in ("table", "json"):
        raise RagdiagError(f"--format must be table or json, got '{fmt}'")
    result = run(BatchRequest(action, folder, **options))
    if fmt == "json":
        typer.echo(json.dumps(result.to_json(), indent=1))
        return
    table = Table(title=f"batches in {result.folder}")
    for column in ("file", "mode", "requests", "batch id", "status", "done / failed"):
        table.add_column(column)
    for e in result.entries:
        counts = e.get("counts") or {}
        table.add_row(e["file"], e["mode"], str(e["requests"]), e["batch_id"] or "-", e["status"],
                      f"{counts.get('completed', '-')} / {counts.get('failed', '-')}" if counts else "-")
    Console(width=max(Console().width, 100)).print(table)
    c = result.collected
    if action == "collect":
        typer.echo(f"collected {c.answered} replies into the cache ({len(c.failures)} failed); cost at batch prices "
                   f"{format_cost(c.cost_batch)}, at synchronous prices {format_cost(c.cost_sync)}")
    if result.cancelled:
        typer.echo(f"cancelled: {', '.join(result.cancelled)}")
    typer.echo(f"{result.open} file(s) still open")


@app.command("status")
def status(folder: Folder, fmt: Format = "table", timeout: Timeout = 120.0, max_retries: MaxRetries = 5) -> None:
    """Each batch file of DIR: mode, requests, batch id and status (openai batches asked afresh)."""
    _run("status", folder, fmt, timeout=timeout, max_retries=max_retries)


@app.command("collect")
def collect(
    folder: Folder,
    source: Annotated[Path | None, typer.Option("--from", help="A vllm run-batch output file (Batch API output format) to read into the cache.", metavar=PATH)] = None,
    cache_dir: CacheDir = None,
    prices: Prices = None,
    fmt: Format = "table",
    timeout: Timeout = 120.0,
    max_retries: MaxRetries = 5,
) -> None:
    """Put finished batch results into the call cache (openai: download output and error files; vllm-file: --from)."""
    _run("collect", folder, fmt, source=source, cache_dir=cache_dir, prices=prices, timeout=timeout,
         max_retries=max_retries)


@app.command("cancel")
def cancel(folder: Folder, fmt: Format = "table", timeout: Timeout = 120.0, max_retries: MaxRetries = 5) -> None:
    """Cancel the open openai batches of DIR and drop its open vllm-file files (a rerun sends them again)."""
    _run("cancel", folder, fmt, timeout=timeout, max_retries=max_retries)
