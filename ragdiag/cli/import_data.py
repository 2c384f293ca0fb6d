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


@app.command("traces", cls=PanelCommand)
def traces(
    out: Annotated[Path, o.retold(o.OutDir, "Folder for queries.jsonl, corpus.jsonl, run.jsonl (and texts.json, ranked.json, answers.jsonl with --qrels); --out is the same.", also=("--out",))],
    path: Path = typer.Argument(..., help="Exported spans: OpenInference (Phoenix JSON/JSONL/Parquet, the OpenTelemetry SDK's span JSON) or OTLP JSON with OpenInference or GenAI (gen_ai.*) attributes."),
    qrels: o.Qrels = None,
    references: Annotated[Optional[Path], o.option(o.INPUT, "--references", metavar=o.PATH, help="Reference answers (JSON, JSONL, CSV or Parquet: an id, trace_id or question, and reference/answer): the ideal rows grade compares with; needs --qrels.")] = None,
    system: Annotated[str, o.option(o.INPUT, "--system", metavar=o.TEXT, help="Name of the retrieval system (the E column).")] = "production",
    subset: Annotated[str, o.option(o.INPUT, "--subset", metavar=o.TEXT, help="Subset code put before each trace id (U-<trace id>): ragdiag groups by it.")] = "U",
) -> None:
    """Production traces (retrieval + LLM spans joined by trace) → questions, corpus, run; with --qrels also texts, ranked and answers files."""
    from ragdiag.commands.import_traces import TracesImportRequest, run

    result = run(TracesImportRequest(path, out, system, subset, qrels, references))
    meta = result.meta
    typer.echo(f"read {meta.spans} spans in {meta.traces} traces from {path}: kept {meta.kept}, skipped "
               f"{meta.traces - meta.kept}", err=True)
    for reason, count in meta.skipped.items():
        typer.echo(f"  skipped {count}: {reason}", err=True)
    typer.echo(f"wrote {result.out}/: {', '.join(result.written)}", err=True)
    if meta.qrels is None:
        typer.echo(f"no --qrels: texts, ranked and answers need a relevant document per question; label the pool with "
                   f"`ragdiag label --corpus {result.out}/corpus.jsonl --queries {result.out}/queries.jsonl "
                   f"--pool run:{result.out}/run.jsonl …` and give its qrels here", err=True)
    else:
        typer.echo(f"{meta.labelled} traces with a relevant document (answers), {meta.unlabelled} without; "
                   f"{meta.with_reference} with a reference answer", err=True)
        if meta.labelled and meta.with_reference < meta.labelled:
            typer.echo("grade compares each answer with a reference answer: give --references for the "
                       f"{meta.labelled - meta.with_reference} traces without one (grade skips them)", err=True)
