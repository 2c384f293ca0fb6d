"""Dense, BM25 or hybrid (RRF) top-k for each query of a BEIR queries file: the ranking behind
``ragdiag retrieve`` (:mod:`ragdiag.commands.retrieve` checks, records and writes).

The command writes the run as ``run.jsonl`` (one line per query: ``query_id``, ``ids``, ``scores``) or as a
TREC run file (``qid Q0 docid rank score tag``), and ``<out>.meta.json`` (how it was made, with
the run record). BM25 lists hold only passages with a positive score, so they may be shorter
than k (``short_lists`` in the meta counts them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdiag.data.qrels_runs import RUN_FORMATS
from ragdiag.errors import RagdiagError
from ragdiag.io.fields import Reading
from ragdiag.retrieval.chunking import pool_max
from ragdiag.retrieval.fusion import reciprocal_rank_fusion
from ragdiag.retrieval.indexes import search
from ragdiag.retrieval.store import IndexDir, open_index_dir

MODES = ("dense", "bm25", "hybrid")


@dataclass
class RetrieveOptions:
    index: Path
    queries: Path
    out: Path
    k: int = 10
    mode: str = "dense"
    rrf_k: int = 60
    candidates: int = 100
    cache_dir: Path | None = None
    base_url: str | None = None
    fmt: str = "jsonl"
    tag: str = "ragdiag"
    device: str = "cpu"
    batch_size: int | None = None
    backend: str | None = None  # pgvector:… for folders built with --backend pgvector:…
    cache_mode: str | None = None  # rw|replay|off|refresh for the query embeddings
    reading: Reading | None = None  # fields and format of the questions file (None: the active one)


def _dense(store, texts, k, opts, progress):
    """Top-k documents per query; for a chunked index, passages are searched deeper until k distinct
    documents are found (each scoring its best passage)."""
    vectors = store.embed_queries(texts, opts.cache_dir, opts.base_url, progress, device=opts.device,
                                  batch_size=opts.batch_size, cache_mode=opts.cache_mode)
    owners = store.passage_docs()
    if owners is None:
        scores, rows = _search_dense(store, opts, vectors, k)
        return [[(store.doc_ids[r], float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows, scores)]
    depth = min(len(owners), 4 * k)
    while True:
        scores, rows = _search_dense(store, opts, vectors, depth)
        lists = [pool_max(rr, ss, owners, k) for rr, ss in zip(rows, scores)]
        if depth >= len(owners) or all(len(pairs) >= k for pairs in lists):
            return [[(store.doc_ids[d], s) for d, s in pairs] for pairs in lists]
        depth = min(len(owners), 4 * depth)


def _search_dense(store, opts, vectors, k):
    if store.manifest["meta"].get("backend", "faiss") != "faiss":
        from ragdiag.retrieval.pgvector_store import open_dense

        with open_dense(store.path, store.manifest, opts.backend) as index:
            return search(index, vectors, k)
    return search(store.dense(), vectors, k)


def _bm25(store, texts, k, progress=False):
    from ragdiag.io.progress import progress_reporter

    bm25 = store.bm25()
    lists = []
    with progress_reporter("BM25 search", len(texts), enabled=progress) as bar:
        for text in texts:
            rows, scores = bm25.top_k(text, k)
            lists.append([(store.doc_ids[r], float(s)) for r, s in zip(rows, scores)])
            bar.advance()
    return lists


def check_options(opts: RetrieveOptions) -> None:
    """Every option checked before any work."""
    if opts.mode not in MODES:
        raise RagdiagError(f"unknown mode '{opts.mode}': expected dense, bm25 or hybrid")
    if opts.fmt not in RUN_FORMATS:
        raise RagdiagError(f"unknown run format '{opts.fmt}': expected jsonl or trec")
    if opts.k <= 0:
        raise RagdiagError(f"k must be positive, got {opts.k}")
    if opts.rrf_k < 0:
        raise RagdiagError(f"RRF k must be ≥ 0, got {opts.rrf_k}")
    if opts.candidates <= 0:
        raise RagdiagError(f"candidates must be positive, got {opts.candidates}")
    if not opts.tag or any(ch.isspace() for ch in opts.tag):
        raise RagdiagError(f"run tag {opts.tag!r} must be non-empty without whitespace")
    if opts.backend:
        from ragdiag.retrieval.pgvector_server import parse_backend

        parse_backend(opts.backend)


def open_checked(opts: RetrieveOptions, progress: bool = False) -> IndexDir:
    """The index folder, every index file the mode needs read and checked before any embedding call (one
    line for a missing, corrupt or tampered index: no dense index, garbage in index.faiss, fewer ids than
    vectors); with ``progress``, a load longer than a second says so every 5 s."""
    store = open_index_dir(opts.index, progress)
    n_docs = len(store.doc_ids)
    if opts.k > n_docs:
        raise RagdiagError(f"k={opts.k} is larger than the {n_docs} passages in {opts.index}")
    if opts.mode != "bm25" and (not store.has_dense or store.manifest["meta"].get("backend", "faiss") == "faiss"):
        store.dense()
    if opts.mode != "dense":
        store.bm25()
    return store


def rank(store: IndexDir, opts: RetrieveOptions, texts: list[str], progress: bool = False) -> tuple[list, int]:
    """(ranked (document id, score) lists per query, depth searched per list) in ``opts.mode``: dense,
    BM25, or their reciprocal rank fusion over the top ``max(k, candidates)`` of each."""
    n_docs = len(store.doc_ids)
    depth = min(max(opts.k, opts.candidates), n_docs) if opts.mode == "hybrid" else opts.k
    if opts.mode == "hybrid":
        dense, sparse = _dense(store, texts, depth, opts, progress), _bm25(store, texts, depth, progress)
        ranked = [
            reciprocal_rank_fusion([[d for d, _ in a], [d for d, _ in b]], k=opts.rrf_k, top=opts.k)
            for a, b in zip(dense, sparse)
        ]
    else:  # MODES: dense or bm25
        ranked = _dense(store, texts, depth, opts, progress) if opts.mode == "dense" else _bm25(store, texts, depth, progress)
    return ranked, depth
