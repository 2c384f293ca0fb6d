"""Corpus and queries inputs: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``) and
``queries.jsonl`` (``_id``, ``text``), and every other shape :mod:`ragdiag.data.own_inputs` reads
(JSONL, JSON list, CSV, TSV, Parquet with the common field names or a :class:`~ragdiag.io.fields.Reading`;
questions also as plain text, one a line), and a folder of documents as a corpus. Qrels and runs are read by :mod:`ragdiag.data.qrels_runs`.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.data.doc_folder import folder_passages, is_document_folder
from ragdiag.data.own_inputs import load_corpus_records, load_question_records
from ragdiag.io.fields import Reading

__all__ = ["corpus_file", "load_corpus", "load_queries"]


def corpus_file(path: Path) -> Path:
    """The corpus of ``path``: a BEIR folder's ``corpus.jsonl``, else ``path`` itself (a corpus file, or
    a folder of documents, :func:`ragdiag.data.doc_folder.is_document_folder`)."""
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        return path / "corpus.jsonl"
    return path


def load_corpus(path: Path, reading: Reading | None = None) -> tuple[list[str], list[str]]:
    """(ids, "title text") of a corpus file, of the corpus.jsonl in a BEIR folder, or of the passages
    cut from a folder of documents (ids ``relative/path#n``: :func:`ragdiag.data.doc_folder.folder_passages`)."""
    file = corpus_file(path)
    if is_document_folder(file):
        passages = folder_passages(file, reading)
        return passages.ids, passages.texts
    texts = load_corpus_records(file, reading)
    return texts.ids, texts.texts


def load_queries(path: Path, reading: Reading | None = None) -> tuple[list[str], list[str]]:
    """(ids, texts) of a questions file in any format (plain text: one a line, ids the line numbers)."""
    texts = load_question_records(path, reading)
    return texts.ids, texts.texts
