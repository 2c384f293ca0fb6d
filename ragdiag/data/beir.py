"""BEIR-layout inputs: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``); qrels (BEIR TSV with or without header, or TREC) and runs (ragdiag
``run.jsonl`` or TREC) are read by :mod:`ragdiag.data.qrels_runs`.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.jsonl import read_jsonl_objects

__all__ = ["load_corpus", "load_queries", "load_texts"]


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) of a BEIR JSON-lines file (:func:`ragdiag.io.jsonl.read_jsonl_objects`)."""
    rows = read_jsonl_objects(path, lenient=True)
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


def corpus_file(path: Path) -> Path:
    """The corpus file of ``path``: a BEIR folder's ``corpus.jsonl``, or ``path`` itself."""
    path = Path(path)
    if not path.is_dir():
        return path
    file = path / "corpus.jsonl"
    if not file.is_file():
        raise RagdiagError(f"{path}: a corpus folder must hold corpus.jsonl (BEIR layout)")
    return file


def load_corpus(path: Path) -> tuple[list[str], list[str]]:
    """(ids, "title text") of a BEIR corpus.jsonl, or of the corpus.jsonl in a BEIR folder."""
    return load_texts(corpus_file(path), with_title=True)


def load_queries(path: Path) -> tuple[list[str], list[str]]:
    return load_texts(path, with_title=False)
