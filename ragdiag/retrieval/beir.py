"""BEIR-layout inputs: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``), qrels TSV with a header (``query-id``, ``corpus-id``, ``score``), and
run files written by ``ragdiag retrieve`` (``query_id``, ``ids``, ``scores``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ragdiag.data.loaders import file_sha256
from ragdiag.errors import DataError

__all__ = ["file_sha256", "load_corpus", "load_qrels", "load_queries", "load_run", "load_texts"]


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError.at(str(path), number, None, f"invalid JSON ({err.msg})") from None
            if not isinstance(record, dict):
                raise DataError.at(str(path), number, None, "expected a JSON object")
            rows.append((number, record))
    if not rows:
        raise DataError(f"{path}: empty (no records)")
    return rows


def _text_field(path: Path, number: int, record: dict, name: str, required: bool = True) -> str:
    value = record.get(name, None if required else "")
    if value is None and required:
        raise DataError.at(str(path), number, name, "missing")
    if not isinstance(value, str):
        raise DataError.at(str(path), number, name, f"expected a string, got {type(value).__name__}")
    return value


def load_texts(path: Path, with_title: bool) -> tuple[list[str], list[str]]:
    """(ids, texts) from a BEIR corpus or queries file; corpus text is ``title + " " + text``."""
    ids, texts, seen = [], [], set()
    for number, record in _read_jsonl(path):
        raw_id = record.get("_id")
        if raw_id is None or isinstance(raw_id, (dict, list)):
            raise DataError.at(str(path), number, "_id", "missing or not a scalar")
        doc_id = str(raw_id)
        if doc_id in seen:
            raise DataError.at(str(path), number, "_id", f"duplicate id '{doc_id}'")
        seen.add(doc_id)
        text = _text_field(path, number, record, "text")
        title = _text_field(path, number, record, "title", required=False) if with_title else ""
        ids.append(doc_id)
        texts.append(f"{title} {text}".strip() if title else text)
    return ids, texts


def load_corpus(path: Path) -> tuple[list[str], list[str]]:
    return load_texts(path, with_title=True)


def load_queries(path: Path) -> tuple[list[str], list[str]]:
    return load_texts(path, with_title=False)


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """query id → {doc id: relevance}; rows with relevance ≤ 0 are kept (and ignored as non-relevant)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if not header or len(header) < 3:
            raise DataError(f"{path}: expected a header 'query-id<TAB>corpus-id<TAB>score'")
        for number, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) < 3:
                raise DataError.at(str(path), number, None, f"expected 3 tab-separated columns, got {len(row)}")
            try:
                score = int(float(row[2]))
            except ValueError:
                raise DataError.at(str(path), number, "score", f"not a number: {row[2]!r}") from None
            qrels.setdefault(row[0], {})[row[1]] = score
    if not qrels:
        raise DataError(f"{path}: no judgements")
    return qrels


def load_run(path: Path) -> dict[str, list[str]]:
    """query id → ranked doc ids, from a run.jsonl written by ``ragdiag retrieve``."""
    run: dict[str, list[str]] = {}
    for number, record in _read_jsonl(path):
        query_id, ids = record.get("query_id"), record.get("ids")
        if query_id is None:
            raise DataError.at(str(path), number, "query_id", "missing")
        if not isinstance(ids, list):
            raise DataError.at(str(path), number, "ids", "missing or not a list")
        run[str(query_id)] = [str(i) for i in ids]
    return run
