"""``ragdiag import ragas|deepeval FILE --out DIR``: bring an evaluation dataset you already have."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="Import Ragas / DeepEval datasets into ragdiag's texts, ranked, answers and graded files.",
                  no_args_is_help=True)


def _run(tool: str, path: Path, out: Path, system: str, subset: str, score_col: Optional[str],
         score_scale: Optional[str] = None, parquet: bool = False) -> None:
    from ragdiag.data.graded_parquet import check_graded_output, write_graded_table
    from ragdiag.data.importers import SCORE_SCALES, convert, read_records
    from ragdiag.errors import RagdiagError
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import (
        check_output_dir,
        guard_outputs,
        sidecar_path,
        write_json,
        write_jsonl,
    )

    if score_scale is not None and score_scale not in SCORE_SCALES:
        raise RagdiagError(f"--score-scale must be one of {', '.join(SCORE_SCALES)}, got '{score_scale}'")
    out = check_output_dir(out, "--out-dir")
    graded_name = "graded.parquet" if parquet else "graded.json"
    files = {name: out / name for name in ("texts.json", "ranked.json", "answers.jsonl", graded_name)}
    guard_outputs(files.values(), [path])
    check_graded_output(files[graded_name])
    record = start_run(f"ragdiag import {tool}", inputs=[path])
    records = read_records(path)
    if score_col is None and records and isinstance(records[0], dict) and "score" in records[0]:
        score_col = "score"
    data = convert(records, tool, str(path), system=system, subset=subset, score_col=score_col,
                   scale=score_scale)
    meta = {"command": f"import {tool}", "source": str(path), "system": system, "subset": subset,
            "score_col": score_col, "score_scale": data["score_scale"], "records": len(data["texts"])}
    write_json(files["texts.json"], data["texts"], inputs=[path])
    write_json(files["ranked.json"], data["ranked"], inputs=[path])
    write_jsonl(files["answers.jsonl"], [{"kind": "meta", "meta": meta}, *data["answers"]], inputs=[path])
    written = ["texts.json", "ranked.json", "answers.jsonl"]
    if data["graded"]:
        write_graded_table(files[graded_name], data["graded"], inputs=[path])
        written.append(graded_name)
    write_json(sidecar_path(out / "import", "manifest"), stamp({"meta": meta, "written": written}, record))
    typer.echo(f"imported {len(data['texts'])} records from {path} into {out}/: {', '.join(written)}", err=True)
    if data["score_scale"]:
        how = "given" if score_scale else "every score in [0, 1]" if data["score_scale"] == "0-1" else "a score above 1"
        rule = "grade = 1 + 4·score" if data["score_scale"] == "0-1" else "grades kept"
        typer.echo(f"score column '{score_col}' read as {data['score_scale']} ({how}): {rule}", err=True)
    if not data["graded"]:
        typer.echo("no score column: grade the answers with `ragdiag grade --answers "
                   f"{out}/answers.jsonl --out {out}/{graded_name}`, or give --score-col", err=True)


def _command(tool: str):
    def command(
        path: Path = typer.Argument(..., help=f"A {tool} dataset: JSON list, JSONL, CSV or Parquet."),
        out: Path = typer.Option(..., "--out-dir", "--out", help="Folder for texts.json, ranked.json, answers.jsonl (and graded.json); --out is the same."),
        system: str = typer.Option("imported", "--system", help="Name of the retrieval system (the E column)."),
        subset: str = typer.Option("U", "--subset", help="Subset code put before each id (U-q1): ragdiag groups by it."),
        score_col: Optional[str] = typer.Option(None, "--score-col", help="Score column → grade (0–1 → 1+4·score; 1–5 kept). Default: 'score' if present."),
        score_scale: Optional[str] = typer.Option(None, "--score-scale", metavar="[0-1|1-5]", help="Scale of the score column for the whole file; default: 0-1 when every score is in [0, 1], 1-5 when any is above 1. A score outside the scale is refused."),
        parquet: bool = typer.Option(False, "--parquet", help="Write the graded table as graded.parquet (columnar, needs pyarrow) instead of graded.json."),
    ) -> None:
        _run(tool, path, out, system, subset, score_col, score_scale, parquet)

    command.__doc__ = (f"{tool.capitalize()} records (question, contexts, answer, reference answer, reference contexts, "
                       "optional score) → texts, ranked, answers and graded files.")
    return command


app.command("ragas")(_command("ragas"))
app.command("deepeval")(_command("deepeval"))
