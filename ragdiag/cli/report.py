"""``ragdiag report RESULT... --out report.html``: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import typer


def report(
    inputs: list[Path] = typer.Argument(..., metavar="RESULT",
                                        help="Result JSON files (correlate, robustness, sweep, evaluate, probes, "
                                             "LLM manifests, graded, corpus_run.json) and/or run folders holding them."),
    out: Path = typer.Option(..., "--out", help="The HTML file to write (styles, scripts and images inlined)."),
    title: str = typer.Option("ragdiag report", "--title", help="Page title."),
) -> None:
    """Join result files into one self-contained HTML page: verdicts, tables (sortable), plots and run records."""
    from ragdiag.io.writer import guard_outputs, write_text
    from ragdiag.report.html.build import build_report

    guard_outputs([out], inputs)
    html, sections, notes = build_report(inputs, title)
    for note in notes:
        typer.echo(note, err=True)
    write_text(out, html, inputs=inputs)
    typer.echo(f"wrote {out}: {len(sections)} sections ({', '.join(dict.fromkeys(s.kind for s in sections))})", err=True)
