"""Printing a probe result: JSON or tables on stdout (nothing when --out took it), notes (call
counters, written files) on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdiag.probes.results import NamesRealResult, ProbeRun


def print_probe_output(probe: ProbeRun, fmt: str | None, written: bool) -> None:
    """``probe``'s JSON (``--format json``) or its rich tables, unless ``written`` to --out; then its
    notes. Tables take the terminal's width (``COLUMNS`` when stdout is not a terminal), wrapping
    rather than cutting."""
    import json

    import typer
    from rich.console import Console

    from ragdiag.report.probe_report import tables

    if not written:
        if fmt == "json":
            typer.echo(json.dumps(probe.to_json(), ensure_ascii=False, indent=2, allow_nan=False))
        else:
            console = Console()
            for table in tables(probe):
                console.print(table)
    for note in probe.notes:
        typer.echo(note, err=True)


def print_names_real(result: NamesRealResult, fmt: str | None) -> None:
    """Names on own queries: ``wrote OUT`` on stderr when --out took it, else JSON or the tables."""
    import json

    import typer
    from rich.console import Console

    from ragdiag.report import names_real_report

    if result.written:
        typer.echo(f"wrote {result.written[0]}", err=True)
    elif fmt == "json":
        typer.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n", nl=False)
    else:
        names_real_report.render(result, Console())
