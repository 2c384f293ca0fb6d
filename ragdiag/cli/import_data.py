"""``ragdiag import ragas|deepeval FILE --out DIR``: bring an evaluation dataset you already have."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand

app = typer.Typer(cls=HelpGroup, help="Import Ragas / DeepEval datasets into ragdiag's texts, ranked, answers and graded files.",
                  no_args_is_help=True)


def _run(tool: str, path: Path, out: Path, system: str, subset: str, score_col: Optional[str],
         score_scale: Optional[str] = None, parquet: bool = False) -> None:
    from ragdiag.commands.import_data import ImportRequest, run

    result = run(ImportRequest(tool, path, out, system, subset, score_col, score_scale, parquet))
    meta, folder = result.meta, result.out
    typer.echo(f"imported {meta.records} records from {path} into {folder}/: {', '.join(result.written)}", err=True)
    if meta.score_scale:
        how = "given" if score_scale else "every score in [0, 1]" if meta.score_scale == "0-1" else "a score above 1"
        rule = "grade = 1 + 4·score" if meta.score_scale == "0-1" else "grades kept"
        typer.echo(f"score column '{meta.score_col}' read as {meta.score_scale} ({how}): {rule}", err=True)
    if result.graded_name is None:
        graded_name = "graded.parquet" if parquet else "graded.json"
        typer.echo("no score column: grade the answers with `ragdiag grade --answers "
                   f"{folder}/answers.jsonl --out {folder}/{graded_name}`, or give --score-col", err=True)


def _command(tool: str):
    def command(
        out: Annotated[Path, o.retold(o.OutDir, "Folder for texts.json, ranked.json, answers.jsonl (and graded.json); --out is the same.", also=("--out",))],
        path: Path = typer.Argument(..., help=f"A {tool} dataset: JSON list, JSONL, CSV or Parquet."),  # the help names the tool: a default, not an annotation
        system: Annotated[str, o.option(o.INPUT, "--system", metavar=o.TEXT, help="Name of the retrieval system (the E column).")] = "imported",
        subset: Annotated[str, o.option(o.INPUT, "--subset", metavar=o.TEXT, help="Subset code put before each id (U-q1): ragdiag groups by it.")] = "U",
        score_col: Annotated[Optional[str], o.option(o.INPUT, "--score-col", metavar=o.TEXT, help="Score column → grade (0–1 → 1+4·score; 1–5 kept). Default: 'score' if present.")] = None,
        score_scale: Annotated[Optional[str], o.option(o.INPUT, "--score-scale", metavar="[0-1|1-5]", help="Scale of the score column for the whole file; default: 0-1 when every score is in [0, 1], 1-5 when any is above 1. A score outside the scale is refused.")] = None,
        parquet: o.GradedParquet = False,
    ) -> None:
        _run(tool, path, out, system, subset, score_col, score_scale, parquet)

    command.__doc__ = (f"{tool.capitalize()} records (question, contexts, answer, reference answer, reference contexts, "
                       "optional score) → texts, ranked, answers and graded files.")
    return command


app.command("ragas", cls=PanelCommand)(_command("ragas"))
app.command("deepeval", cls=PanelCommand)(_command("deepeval"))
