"""``ragdiag data get NAME`` and ``ragdiag data list``: public BEIR-style sets in a data folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand
from ragdiag.cli.options import INTEGER, PATH

app = typer.Typer(cls=HelpGroup, help="Fetch public retrieval sets (SciFact, MS MARCO and others) in the BEIR layout, verify them, "
                       "list what is in the data folder.", no_args_is_help=True)

DataDir = Annotated[Path | None, o.option(
    o.INPUT, "--dir", help="Data folder (default: $RAGDIAG_DATA, else the user data dir, e.g. ~/.local/share/ragdiag/data).",
    metavar=PATH)]


@app.command("get", cls=PanelCommand)
def get(name: Annotated[str, typer.Argument(help="Dataset: scifact, nfcorpus, fiqa, msmarco or spf-qr-fr "
                                                 "(ragdiag data list describes each).", metavar="NAME")],
        data_dir: DataDir = None,
        source: Annotated[Path | None, o.option(
            o.INPUT, "--source", help="Read from a local mirror instead of the public origin: a folder laid out like the hub "
                             "(DIR/BeIR/scifact, DIR/BeIR/scifact-qrels; default $RAGDIAG_DATA_SOURCE, else the "
                             "hub / GitHub).", metavar=PATH)] = None,
        sample: Annotated[int | None, o.option(
            o.INPUT, "--sample", help="Keep the first N passages in the origin's order, and the queries whose relevant passages "
                             "are all among them; 0 = the whole corpus. Default: 100000 for msmarco (8.8M passages), "
                             "all for the others. Range [0, 100000000].", metavar=INTEGER, min=0, max=100_000_000)] = None,
        force: Annotated[bool, o.option(o.OUTPUT, "--force", help="Fetch again over an existing folder.")] = False,
        fmt: Annotated[Optional[o.TableFormat], o.retold(o.TableFormatOpt, "What to print: the manifest's summary lines (table, the default) or the manifest as JSON.")] = None,
        as_json: Annotated[bool, o.retold(o.JsonAlias, "The same as --format json.")] = False) -> None:
    """Fetch NAME into DIR/NAME (corpus.jsonl, queries.jsonl, qrels/test.tsv, manifest.json with sha256s)."""
    from ragdiag.commands.data import GetRequest, run
    from ragdiag.report.data_report import get_lines

    result = run(GetRequest(name, data_dir, source, sample, force))
    if as_json or fmt is o.TableFormat.json:
        typer.echo(json.dumps(result.to_json(), indent=1, ensure_ascii=False))
        return
    for line in get_lines(result):
        typer.echo(line)


@app.command("list", cls=PanelCommand)
def list_(data_dir: DataDir = None,
          fmt: Annotated[Optional[o.TableFormat], o.retold(o.TableFormatOpt, "What to print: a table (default) or JSON.")] = None,
          as_json: o.JsonAlias = False) -> None:
    """Every dataset ragdiag can fetch, whether it is in the data folder, and whether its files still match
    their manifest (sha256)."""
    from rich.console import Console

    from ragdiag.commands.data import ListRequest, run
    from ragdiag.report.data_report import print_list

    result = run(ListRequest(data_dir))
    if as_json or fmt is o.TableFormat.json:
        typer.echo(json.dumps(result.to_json(), indent=1, ensure_ascii=False))
        return
    print_list(result, Console())


@app.command("inspect", cls=PanelCommand)
def inspect(path: Annotated[Path, typer.Argument(help="A corpus, questions, qrels, run, graded file or per-query table "
                                                      "(JSONL, JSON, CSV, TSV, Parquet, text), or a folder of documents.",
                                                 metavar="PATH")],
            kind: Annotated[Optional[str], o.text_option(
                o.INPUT, "--kind", "Read PATH as corpus, questions, qrels, run, graded or table (default: guessed from "
                                   "its fields).")] = None,
            corpus: Annotated[Optional[Path], o.retold(
                o.Corpus, "With qrels or a run: the corpus whose passages they must name (unknown ones are reported).")] = None,
            fields: o.Fields = None,
            id_field: o.IdField = None,
            text_field: o.TextField = None,
            title_field: o.TitleField = None,
            query_field: o.QueryField = None,
            score_field: o.ScoreField = None,
            file_format: o.InputFormat = None,
            chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
            chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
            out: Annotated[Optional[Path], o.retold(o.Out, "Write the inspection here as JSON (with its run record).")] = None,
            as_json: Annotated[bool, o.retold(o.JsonAlias, "Print the inspection as JSON.")] = False) -> None:
    """What ragdiag sees in PATH: its kind, format, rows, the fields it uses and ignores, three sample records,
    problems (duplicate ids, empty texts, passages the corpus lacks) and the command to run next."""
    from ragdiag.commands.data_inspect import InspectRequest, run
    from ragdiag.report.data_report import inspect_lines

    reading = o.reading_of(fields, id_field, text_field, title_field, query_field, score_field, corpus=file_format,
                           queries=file_format, qrels=file_format, run=file_format,
                           chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    result = run(InspectRequest(path, kind, corpus, reading, out))
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=1, ensure_ascii=False))
    else:
        for line in inspect_lines(result):
            typer.echo(line)
    if out is not None:
        typer.echo(f"wrote {out}", err=True)
