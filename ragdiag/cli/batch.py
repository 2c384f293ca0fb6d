"""``ragdiag batch status|collect|cancel DIR``: the batches of a ``--batch-dir`` (glue only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand
from ragdiag.cli.options import PATH, AdminCacheDir, MaxRetries, Prices, Timeout

app = typer.Typer(cls=HelpGroup, help="Batches sent with --batch: status, collect (into the call cache), cancel.",
                  no_args_is_help=True)
Folder = Annotated[Path, typer.Argument(help="The --batch-dir of the run (default CACHE_DIR/batches).", metavar="DIR")]
Format = Annotated[str, o.option(o.OUTPUT, "--format", help="table (default) or json.", metavar="[table|json]")]


def _run(action: str, folder: Path, fmt: str, **options) -> None:
    from rich.console import Console

    from ragdiag.commands.batch import BatchRequest, run
    from ragdiag.errors import RagdiagError
    from ragdiag.report.batch_report import print_batches, summary_lines

    if fmt not in ("table", "json"):
        raise RagdiagError(f"--format must be table or json, got '{fmt}'")
    result = run(BatchRequest(action, folder, **options))
    if fmt == "json":
        typer.echo(json.dumps(result.to_json(), indent=1))
        return
    print_batches(result, Console(width=max(Console().width, 100)))
    for line in summary_lines(result):
        typer.echo(line)


@app.command("status", cls=PanelCommand)
def status(folder: Folder, fmt: Format = "table", timeout: Timeout = 120.0, max_retries: MaxRetries = 5) -> None:
    """Each batch file of DIR: mode, requests, batch id and status (openai batches asked afresh)."""
    _run("status", folder, fmt, timeout=timeout, max_retries=max_retries)


@app.command("collect", cls=PanelCommand)
def collect(
    folder: Folder,
    source: Annotated[Path | None, o.option(o.INPUT, "--from", help="A vllm run-batch output file (Batch API output format) to read into the cache; an output split in parts is collected part by part.", metavar=PATH)] = None,
    cache_dir: AdminCacheDir = None,
    prices: Prices = None,
    fmt: Format = "table",
    timeout: Timeout = 120.0,
    max_retries: MaxRetries = 5,
) -> None:
    """Put finished batch results into the call cache (openai: download output and error files; vllm-file: --from)."""
    _run("collect", folder, fmt, source=source, cache_dir=cache_dir, prices=prices, timeout=timeout,
         max_retries=max_retries)


@app.command("cancel", cls=PanelCommand)
def cancel(folder: Folder, fmt: Format = "table", timeout: Timeout = 120.0, max_retries: MaxRetries = 5) -> None:
    """Cancel the open openai batches of DIR and drop its open vllm-file files and unsubmitted openai files (a rerun sends them again)."""
    _run("cancel", folder, fmt, timeout=timeout, max_retries=max_retries)
