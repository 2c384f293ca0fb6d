"""The click command behind the Typer app, read by mkdocs-click for the generated CLI reference
(docs/reference/cli.md); tests/docs/test_cli_reference.py checks it against ``--help``."""

from __future__ import annotations

import typer

from ragdiag.cli import app

command = typer.main.get_command(app)
