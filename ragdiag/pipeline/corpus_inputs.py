"""A user's own retrieval data: corpus, queries and qrels, checked against each other.

Layout: BEIR (``corpus.jsonl`` ``_id/title/text``, ``queries.jsonl`` ``_id/text``, qrels TSV) — a
folder given as ``--corpus DIR`` alone supplies ``DIR/queries.jsonl`` and ``DIR/qrels/test.tsv``
(or the folder's only qrels file); a folder without ``corpus.jsonl`` is a folder of documents
(passages ``path#n``, :func:`ragdiag.data.doc_folder.folder_passages`), with ``--queries`` and ``--qrels``; qrels may also be TREC (``qid 0 docid rel``), sniffed by
:func:`ragdiag.data.qrels_runs.read_qrels`. Used by ``pipeline --corpus`` and ``sweep``.

Checks (one line each, exit 2): a qrels document missing from the corpus (:func:`check_judged_documents`), a qrels query missing
from the queries file, no query of the queries file judged in the qrels.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import read_qrels
from ragdiag.errors import DataError, RagdiagError


@dataclass
class CorpusData:
    """Documents, judged queries (with at least one relevant document) and their relevant documents."""

    name: str
    doc_ids: list[str]
    doc_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    relevant: dict[str, list[str]]  # query id -> relevant doc ids, highest grade first, then file order
    grades: dict[str, dict[str, int]]
    files: dict[str, Path]
    unjudged_queries: int = 0
    no_relevant_queries: int = 0
    row_of: dict[str, int] = field(default_factory=dict)

    @property
    def graded(self) -> bool:
        """True when the qrels use more than one positive grade (e.g. 1–3), as `evaluate` needs."""
        return len({g for rels in self.grades.values() for g in rels.values() if g > 0}) > 1


def resolve_files(corpus: Path, queries: Path | None, qrels: Path | None) -> dict[str, Path]:
    """Paths of corpus, queries and qrels; a BEIR folder fills in the ones not given."""
    corpus = Path(corpus)
    if not corpus.exists():
        from ragdiag.config import DATA_DIR_ENV
        from ragdiag.io.paths import not_found

        raise RagdiagError(not_found("--corpus", corpus, DATA_DIR_ENV))
    if corpus.is_dir() and (corpus / "corpus.jsonl").is_file():
        folder, corpus = corpus, corpus / "corpus.jsonl"
        queries = queries or folder / "queries.jsonl"
        if qrels is None:
            found = sorted((folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
            test = folder / "qrels" / "test.tsv"
            if test.is_file():
                qrels = test
            elif len(found) == 1:
                qrels = found[0]
            else:
                names = ", ".join(p.name for p in found) or "none"
                raise RagdiagError(f"{folder}/qrels: cannot tell which qrels file to use (found: {names}); give --qrels")
    if queries is None or qrels is None:
        what = "a folder of documents" if corpus.is_dir() else "a corpus file"
        raise RagdiagError(f"{corpus}: {what} needs --queries and --qrels (or give a BEIR folder as --corpus)")
    for what, path in (("corpus", corpus), ("queries", queries), ("qrels", qrels)):
        if not Path(path).is_file() and not (what == "corpus" and Path(path).is_dir()):
            raise RagdiagError(f"{what} {path}: file not found")
    return {"corpus": corpus, "queries": Path(queries), "qrels": Path(qrels)}


def check_judged_documents(judgements: Mapping[str, Iterable[str]], documents: Container[str], qrels: Path | str,
                           corpus: Path | str) -> None:
    """Every document the qrels judge (any grade) is in the corpus, else one line naming the first and
    how many (``pipeline --corpus``, ``sweep``, ``probe names --queries`` and ``noise --qrels``)."""
    unknown = [(q, d) for q, rels in judgements.items() for d in rels if d not in documents]
    if unknown:
        q, d = unknown[0]
        raise DataError(f"qrels {qrels}: document '{d}' (judged for query '{q}') is not in {corpus} "
                        f"({len(unknown)} judgements name unknown documents)")


def load_corpus_data(corpus: Path, queries: Path | None = None, qrels: Path | None = None,
                     max_queries: int | None = None) -> CorpusData:
    """Load and cross-check the three files; keep judged queries with a relevant document (queries-file order)."""
    files = resolve_files(corpus, queries, qrels)
    doc_ids, doc_texts = load_corpus(files["corpus"])
    query_ids, query_texts = load_queries(files["queries"])
    judgements = read_qrels(files["qrels"])
    row_of = {d: i for i, d in enumerate(doc_ids)}
    known_queries = set(query_ids)
    if not known_queries & set(judgements):
        raise DataError(f"qrels {files['qrels']}: no query of {files['queries']} is judged "
                        f"(qrels query ids look like '{next(iter(judgements))}', queries like '{query_ids[0]}')")
    unknown_q = [q for q in judgements if q not in known_queries]
    if unknown_q:
        raise DataError(f"qrels {files['qrels']}: query '{unknown_q[0]}' is not in {files['queries']} "
                        f"({len(unknown_q)} of {len(judgements)} judged queries unknown)")
    check_judged_documents(judgements, row_of, files["qrels"], files["corpus"])
    relevant: dict[str, list[str]] = {}
    for q, rels in judgements.items():
        positives = [d for d, g in rels.items() if g > 0]
        if positives:
            relevant[q] = sorted(positives, key=lambda d: -rels[d])  # stable: file order within a grade
    kept = [(q, t) for q, t in zip(query_ids, query_texts) if q in relevant]
    if not kept:
        raise DataError(f"qrels {files['qrels']}: no judged query has a relevant document (score > 0)")
    if max_queries is not None:
        kept = kept[:max_queries]
    name = files["corpus"].parent.name if files["corpus"].name == "corpus.jsonl" else files["corpus"].stem
    return CorpusData(
        name=name, doc_ids=doc_ids, doc_texts=doc_texts,
        query_ids=[q for q, _ in kept], query_texts=[t for _, t in kept],
        relevant={q: relevant[q] for q, _ in kept}, grades={q: judgements[q] for q, _ in kept}, files=files,
        unjudged_queries=sum(q not in judgements for q in query_ids),
        no_relevant_queries=sum(q not in relevant for q in judgements), row_of=row_of,
    )
