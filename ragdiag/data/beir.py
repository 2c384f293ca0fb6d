"""Corpus and queries inputs: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``) and
``queries.jsonl`` (``_id``, ``text``), and every other shape :mod:`ragdiag.data.own_inputs` reads
(JSONL, JSON list, CSV, TSV, Parquet with the common field names or a :class:`~ragdiag.io.fields.Reading`;
questions also as plain text, one a line). Qrels and runs are read by :mod:`ragdiag.data.qrels_runs`.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.data.own_inputs import load_corpus_records, load_question_records
from ragdiag.errors import RagdiagError
from ragdiag.io.fields import Reading

__all__ = ["corpus_file", "load_corpus", "load_queries"]


def corpus_file(path: Path) -> Path:
    """The corpus file of ``path``: a BEIR folder's ``corpus.jsonl``, or ``path`` itself. A folder of
    documents is a corpus for ``ragdiag index build`` only (it cuts the passages)."""
    path = Path(path)
    if not path.is_dir():
        return path
    file = path / "corpus.jsonl"
    if not file.is_file():
        raise RagdiagError(f"{path}: a folder of documents is read by 'ragdiag index build --corpus {path}' (it cuts "
                           "the passages); here give a corpus file, a BEIR folder with corpus.jsonl, or that index's "
                           "passages")
    return file


def load_corpus(path: Path, reading: Reading | None = None) -> tuple[list[str], list[str]]:
    """(ids, "title text") of a corpus file, or of the corpus.jsonl in a BEIR folder."""
    texts = load_corpus_records(corpus_file(path), reading)
    return texts.ids, texts.texts


def load_queries(path: Path, reading: Reading | None = None) -> tuple[list[str], list[str]]:
    """(ids, texts) of a questions file in any format (plain text: one a line, ids the line numbers)."""
    texts = load_question_records(path, reading)
    return texts.ids, texts.texts
