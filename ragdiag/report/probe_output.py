"""Printing a probe result: JSON or tables on stdout (also when --out took the result; none under
--quiet), notes (call counters, written files) on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdiag.results.probes import NamesRealResult, ProbeRun


def print_probe_output(probe: ProbeRun, fmt: str | None, written: bool, quiet: bool = False) -> None:
    """``probe``'s JSON (``--format json``) or its rich tables (also when ``written`` to --out;
    nothing then under ``quiet``); then its notes (``wrote OUT`` among them). Tables take the
    terminal's width (``COLUMNS`` when stdout is not a terminal), wrapping rather than cutting."""
    import json

    import typer
    from rich.console import Console

    from ragdiag.report.probe_report import tables

    if not (written and quiet):
        if fmt == "json":
            typer.echo(json.dumps(probe.to_json(), ensure_ascii=False, indent=2, allow_nan=False))
        else:
            console = Console()
            for table in tables(probe):
                console.print(table)
    for note in probe.notes:
        typer.echo(note, err=True)


def print_names_real(result: NamesRealResult, fmt: str | None, quiet: bool = False) -> None:
    """Names on own queries: JSON or the tables (also when --out took the result; none then under
    ``quiet``), then ``wrote OUT`` on stderr."""
    import json

    import typer
    from rich.console import Console

    from ragdiag.report import names_real_report

    if result.written and quiet:
        pass
    elif fmt == "json":
        typer.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n", nl=False)
    else:
        names_real_report.render(result, Console())
    if result.written:
        typer.echo(f"wrote {result.written[0]}", err=True)
