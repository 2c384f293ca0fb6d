"""Printing a probe result: JSON or tables on stdout, notes (call counters, written files) on stderr."""

from __future__ import annotations

import sys
from typing import Any


def print_probe_output(output: Any) -> None:
    """``output`` carries ``json_text`` (or None), rich ``tables`` and text ``notes``; tables are
    140 columns wide when stdout is not a terminal, so logs and pipes read the same everywhere."""
    import typer
    from rich.console import Console

    if output.json_text is not None:
        typer.echo(output.json_text)
    console = Console() if sys.stdout.isatty() else Console(width=140)
    for table in output.tables:
        console.print(table)
    for note in output.notes:
        typer.echo(note, err=True)
