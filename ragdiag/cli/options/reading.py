"""How a user's files are read: field mapping and input formats, one declaration each for every
command that takes a corpus, questions, qrels or a run (:class:`ragdiag.io.fields.Reading`)."""

from __future__ import annotations

from typing import Annotated, Optional

from ragdiag.cli.options.declare import INPUT, INTEGER, TEXT, checked_by, option
from ragdiag.io.fields import FORMATS, Reading, reading

_FORMATS = "|".join(FORMATS)


def _format(kind: str, flag: str) -> object:
    return option(INPUT, flag, help=f"Read the {kind} as {_FORMATS.replace('|', ', ')} (default: by suffix, then content).",
                  metavar=f"[{_FORMATS}]", callback=checked_by("ragdiag.io.fields", "parse_format"))


Fields = Annotated[Optional[str], option(
    INPUT, "--fields", metavar="MAPPING", callback=checked_by("ragdiag.io.fields", "parse_fields"),
    help="Which field is which in your files, e.g. id=doc_id,text=body (roles: id, text, title, query, score, "
         "query_id, doc_id, relevance, rank, answer). Unnamed roles are found by common names: id _id|id|doc_id|docid|pid, "
         "text text|contents|body|passage|chunk, query query|question|text.")]
IdField = Annotated[Optional[str], option(INPUT, "--id-field", help="The id field (the same as --fields id=NAME).", metavar=TEXT)]
TextField = Annotated[Optional[str], option(INPUT, "--text-field", help="The text field (--fields text=NAME).", metavar=TEXT)]
TitleField = Annotated[Optional[str], option(INPUT, "--title-field", help="The corpus title field, put before the text (--fields title=NAME).", metavar=TEXT)]
QueryField = Annotated[Optional[str], option(INPUT, "--query-field", help="The question text field (--fields query=NAME).", metavar=TEXT)]
ScoreField = Annotated[Optional[str], option(INPUT, "--score-field", help="The score field of a run table, higher first (--fields score=NAME).", metavar=TEXT)]
CorpusFormat = Annotated[Optional[str], _format("corpus", "--corpus-format")]
QueriesFormat = Annotated[Optional[str], _format("questions (txt: one a line, ids the line numbers)", "--queries-format")]
QrelsFormat = Annotated[Optional[str], _format("qrels (trec: TREC or BEIR columns; a table: query_id, doc_id, relevance)", "--qrels-format")]
RunFormat = Annotated[Optional[str], _format("run (trec: TREC columns; jsonl: run.jsonl or rows; a table: query_id, doc_id, score)", "--run-format")]
PerQueryFormat = Annotated[Optional[str], _format("per-query table (csv, tsv, jsonl, json or parquet)", "--table-format")]
InputFormat = Annotated[Optional[str], _format("file", "--input-format")]
ChunkSize = Annotated[int, option(INPUT, "--chunk-size", help="A folder of documents as --corpus (ignored for a corpus file): passages of this many tokens, whitespace-separated words (index build with an embedder: that embedder's tokenizer's tokens).", min=8, max=100_000, metavar=INTEGER)]
ChunkOverlap = Annotated[int, option(INPUT, "--chunk-overlap", help="A folder of documents as --corpus (ignored for a corpus file): tokens shared by neighbouring passages, in --chunk-size's unit (below --chunk-size).", min=0, max=99_999, metavar=INTEGER)]
ByDocument = Annotated[bool, option(INPUT, "--by-document", help="Runs of passages cut from a folder of documents ('guide/install.md#3') read as runs of their documents ('guide/install': the path without '#n' and its suffix), each at its best passage's rank, for qrels that judge documents.")]
DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP = 256, 32


def reading_of(fields: Optional[str] = None, id_field: Optional[str] = None, text_field: Optional[str] = None,
               title_field: Optional[str] = None, query_field: Optional[str] = None, score_field: Optional[str] = None,
               *, corpus: Optional[str] = None, queries: Optional[str] = None, qrels: Optional[str] = None,
               run: Optional[str] = None, table: Optional[str] = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
               chunk_overlap: int = DEFAULT_CHUNK_OVERLAP, by_document: bool = False) -> Reading:
    """The one typed call that turns the reading options into a ``Reading``."""
    return reading(fields, id_field=id_field, text_field=text_field, title_field=title_field, query_field=query_field,
                   score_field=score_field, formats={"corpus": corpus, "queries": queries, "qrels": qrels, "run": run, "table": table},
                   chunk_size=chunk_size, chunk_overlap=chunk_overlap, by_document=by_document)


__all__ = ["ByDocument", "ChunkOverlap", "ChunkSize", "CorpusFormat", "DEFAULT_CHUNK_OVERLAP", "DEFAULT_CHUNK_SIZE", "Fields",
           "IdField", "InputFormat", "PerQueryFormat", "QrelsFormat", "QueriesFormat", "QueryField", "RunFormat", "ScoreField", "TextField",
           "TitleField", "reading_of"]
