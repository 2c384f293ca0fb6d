"""``ragdiag config show``: the settings users repeat, their effective values and where each came from."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand

app = typer.Typer(cls=HelpGroup, help="Settings read from ragdiag.toml (or --config, or [tool.ragdiag] in pyproject.toml) and "
                       "RAGDIAG_* environment variables. Precedence: flag > environment > file > default.",
                  no_args_is_help=True)


@app.command("show", cls=PanelCommand)
def show(ctx: typer.Context, fmt: Annotated[Optional[o.TableFormat], o.retold(o.TableFormatOpt, "What to print: a table (default) or JSON.")] = None) -> None:
    """Print each setting's effective value and its source (env, file or default); a flag given to a
    command still wins over both."""
    from rich.console import Console

    from ragdiag.commands.config import run
    from ragdiag.io.settings import load_file
    from ragdiag.report.config_report import config_table

    settings = ctx.find_root().meta.get("ragdiag.io.settings") or load_file()
    result = run(settings)
    if fmt == o.TableFormat.json:
        typer.echo(json.dumps(result.to_json(), indent=1, ensure_ascii=False))
        return
    Console().print(config_table(result))
