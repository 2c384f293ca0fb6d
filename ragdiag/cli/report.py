"""``ragdiag report RESULT... --out report.html``: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli import options as o


def report(
    inputs: Annotated[list[Path], typer.Argument(
        metavar="RESULT", help="Result JSON files (correlate, robustness, sweep, evaluate, probes, LLM manifests, graded, "
                               "corpus_run.json) and/or run folders holding them.")],
    out: Annotated[Path, o.retold(o.OutRequired, "The HTML file to write (styles, scripts and images inlined).")],
    title: Annotated[str, o.option(o.OUTPUT, "--title", metavar=o.TEXT, help="Page title.")] = "ragdiag report",
) -> None:
    """Join result files into one self-contained HTML page: verdicts, tables (sortable), plots and run records."""
    from ragdiag.commands.report import ReportRequest, run

    result = run(ReportRequest(inputs, out, title))
    for note in result.notes:
        typer.echo(note, err=True)
    typer.echo(f"wrote {out}: {len(result.sections)} sections ({', '.join(result.kinds)})", err=True)
