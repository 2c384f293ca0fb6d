"""The one reader of a user's table-shaped file: JSONL, JSON (a list of objects), CSV, TSV, Parquet
or plain text (one record a line), whatever it holds (corpus, questions, qrels, a run, answers, a
per-query table). :mod:`ragdiag.data.own_inputs` turns the records into each kind.

The format is the ``--…-format`` option's, else the suffix's (``.gz`` looked through for JSON),
else the content's (``[`` JSON, ``{`` JSONL, ``PAR1`` Parquet, a tab TSV, a comma CSV). CSV and TSV
are read by :mod:`csv` (every cell a string: ids keep their leading zeros), Parquet by pyarrow
(:mod:`ragdiag.io.parquet_input`), JSON by orjson (:mod:`ragdiag.io.jsonl`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError
from ragdiag.io.files import existing_file

SUFFIX_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
                  ".parquet": "parquet", ".pq": "parquet", ".txt": "txt", ".trec": "trec", ".run": "trec",
                  ".qrels": "trec"}
FORMAT_NAMES = {"jsonl": "JSON lines", "json": "a JSON list", "csv": "CSV", "tsv": "TSV", "parquet": "Parquet",
                "txt": "plain text", "trec": "TREC (whitespace columns)"}


@dataclass
class Records:
    """A file's records: ``rows[i]`` (a dict, unless the file is malformed) found at ``where[i]``
    (``line N`` of a CSV/TSV/text file, ``record N`` of JSON lines — N the line — JSON or Parquet);
    ``columns`` in first-seen order."""

    source: str
    format: str
    rows: list[Any]
    where: list[str]
    columns: list[str]

    def looks_like(self) -> str:
        """``CSV with columns doc_id, body`` — what the file is, for messages."""
        shown = ", ".join(self.columns[:8]) + (", …" if len(self.columns) > 8 else "")
        if self.format in ("txt", "trec"):
            return FORMAT_NAMES[self.format]
        return f"{FORMAT_NAMES[self.format]} with {'fields' if self.format in ('json', 'jsonl') else 'columns'} {shown or '(none)'}"


def sniff_format(path: Path) -> str:
    """The format of ``path`` from its suffix (``.jsonl.gz`` → jsonl), else from its first bytes."""
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[suffixes[-1]]
    with open(existing_file(path), "rb") as handle:
        head = handle.read(4096)
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        return "jsonl"
    first = text.split(b"\n", 1)[0]
    if b"\t" in first:
        return "tsv"
    if b"," in first:
        return "csv"
    return "txt"


def read_records(path: Path, fmt: str | None = None) -> Records:
    """Every record of ``path`` read as ``fmt`` (:func:`sniff_format` when None)."""
    path = existing_file(Path(path))
    fmt = fmt or sniff_format(path)
    source = str(path)
    if fmt in ("csv", "tsv"):
        from ragdiag.io.text_input import csv_rows

        pairs = [(f"line {n}", row) for n, row in csv_rows(path, delimiter="\t" if fmt == "tsv" else ",")]
        columns = _header(path, fmt)
    elif fmt == "parquet":
        from ragdiag.io.parquet_input import read_parquet

        table = read_parquet(path)
        columns = list(table.column_names)
        pairs = [(f"record {i}", row) for i, row in enumerate(table.to_pylist(), start=1)]
    elif fmt == "json":
        pairs = [(f"record {i}", row) for i, row in enumerate(_json_list(path), start=1)]
        columns = _columns(row for _, row in pairs)
    elif fmt == "jsonl":
        pairs = [(f"record {n}", row) for n, row in _jsonl(path)]  # n: the line, as DataError.at words it
        columns = _columns(row for _, row in pairs)
    else:  # txt, trec: one record a line, its whitespace columns under "0", "1", …
        from ragdiag.io.jsonl import read_lines

        pairs = [(f"line {n}", {"line": line}) for n, line in read_lines(path)]
        columns = ["line"]
    return Records(source, fmt, [row for _, row in pairs], [where for where, _ in pairs], columns)


def _header(path: Path, fmt: str) -> list[str]:
    import csv
    import io

    from ragdiag.io.text_input import decode_utf8

    text = decode_utf8(path, path.read_bytes())
    return next(csv.reader(io.StringIO(text, newline=""), delimiter="\t" if fmt == "tsv" else ","), [])


def _columns(rows: Any) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        if isinstance(row, dict):
            seen.update(dict.fromkeys(map(str, row)))
        if len(seen) > 200:
            break
    return list(seen)


def _json_list(path: Path) -> list[Any]:
    from ragdiag.io.jsonl import read_json_records

    records = read_json_records(path)
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a JSON list of objects, got a JSON {type(records).__name__}")
    return records


def _jsonl(path: Path) -> list[tuple[int, Any]]:
    import gzip

    from ragdiag.io.jsonl import json_line, no_cyclic_gc, parse_jsonl, read_lines

    if path.suffix.lower() != ".gz":
        lines = read_lines(path)
        first = next(lines, None)
        if first is not None and first[1].lstrip().startswith("["):  # a JSON list named .jsonl: read it as what it is
            return list(enumerate(_json_list(path), start=1))
        with no_cyclic_gc():  # lenient: NaN, integers beyond 64 bits, a too-deep line named as such
            return [(n, json_line(line, path, n, lenient=True)) for n, line in ([first] if first else []) + list(lines)]
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as err:
        raise DataError(f"{path}: cannot read: {err}") from None
    return parse_jsonl(data, path)
