"""Printing a probe result: JSON or tables on stdout, notes (call counters, written files) on stderr."""

from __future__ import annotations

from typing import Any


def print_probe_output(output: Any) -> None:
    """``output`` carries ``json_text`` (or None), rich ``tables`` and text ``notes``; tables take the
    terminal's width (``COLUMNS`` when stdout is not a terminal), wrapping rather than cutting."""
    import typer
    from rich.console import Console

    if output.json_text is not None:
        typer.echo(output.json_text)
    console = Console()
    for table in output.tables:
        console.print(table)
    for note in output.notes:
        typer.echo(note, err=True)
