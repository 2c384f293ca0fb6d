"""``ragdiag report RESULT... --out report.html``: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli import params as p


def report(
    inputs: Annotated[list[Path], typer.Argument(
        metavar="RESULT", help="Result JSON files (correlate, robustness, sweep, evaluate, probes, LLM manifests, graded, "
                               "corpus_run.json) and/or run folders holding them.")],
    out: p.retold(p.OutRequired, "The HTML file to write (styles, scripts and images inlined)."),
    title: str = typer.Option("ragdiag report", "--title", help="Page title."),
) -> None:
    """Join result files into one self-contained HTML page: verdicts, tables (sortable), plots and run records."""
    from ragdiag.commands.report import ReportRequest, run

    result = run(ReportRequest(inputs, out, title))
    for note in result.notes:
        typer.echo(note, err=True)
    typer.echo(f"wrote {out}: {len(result.sections)} sections ({', '.join(result.kinds)})", err=True)
