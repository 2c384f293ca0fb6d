"""``ragdiag retrieve``: dense, BM25 or hybrid (RRF) top-k for each query of a BEIR queries file.

Writes the run as ``run.jsonl`` (one line per query: ``query_id``, ``ids``, ``scores``) or as a
TREC run file (``qid Q0 docid rank score tag``), and ``<out>.meta.json`` (how it was made, with
the run record). BM25 lists hold only passages with a positive score, so they may be shorter
than k (``short_lists`` in the meta counts them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.io.files import file_sha256
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import check_output_path, guard_outputs, write_json
from ragdiag.retrieval.beir import load_queries
from ragdiag.retrieval.chunking import pool_max
from ragdiag.retrieval.formats import RUN_FORMATS, check_ids_fit, write_run
from ragdiag.retrieval.fusion import reciprocal_rank_fusion
from ragdiag.retrieval.indexes import search
from ragdiag.retrieval.store import open_index_dir

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


def _bm25(store, texts, k):
    bm25 = store.bm25()
    lists = []
    for text in texts:
        rows, scores = bm25.top_k(text, k)
        lists.append([(store.doc_ids[r], float(s)) for r, s in zip(rows, scores)])
    return lists


def _check(opts: RetrieveOptions) -> None:
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
    out = check_output_path(opts.out, "run file")
    meta_path = out.with_name(f"{out.name}.meta.json")
    index_files = [p for p in Path(opts.index).rglob("*") if p.is_file()] if Path(opts.index).is_dir() else []
    guard_outputs([out, meta_path], [opts.queries, *index_files])


def retrieve(opts: RetrieveOptions, progress: bool = False) -> dict:
    """Rank the corpus for every query; write the run and its meta; return the meta."""
    _check(opts)
    store = open_index_dir(opts.index)
    n_docs = len(store.doc_ids)
    if opts.k > n_docs:
        raise RagdiagError(f"k={opts.k} is larger than the {n_docs} passages in {opts.index}")
    # every index file read and checked before any embedding call (one line for a missing, corrupt
    # or tampered index: no dense index, garbage in index.faiss, fewer ids than vectors)
    if opts.mode != "bm25" and (not store.has_dense or store.manifest["meta"].get("backend", "faiss") == "faiss"):
        store.dense()
    if opts.mode != "dense":
        store.bm25()
    record = start_run("ragdiag retrieve", inputs=[opts.queries, opts.index / "manifest.json"],
                       models={"embedder": store.manifest["meta"].get("embedder")})
    query_ids, texts = load_queries(opts.queries)
    if opts.fmt == "trec":  # before any embedding call, not when the run is written
        check_ids_fit("trec", [(f"query id in {opts.queries}", query_ids),
                               (f"document id in {opts.index}", store.doc_ids)], "use the jsonl format")
    start = time.perf_counter()
    depth = min(max(opts.k, opts.candidates), n_docs) if opts.mode == "hybrid" else opts.k
    dense = _dense(store, texts, depth, opts, progress) if opts.mode != "bm25" else None
    sparse = _bm25(store, texts, depth) if opts.mode != "dense" else None
    if opts.mode == "hybrid":
        ranked = [
            reciprocal_rank_fusion([[d for d, _ in a], [d for d, _ in b]], k=opts.rrf_k, top=opts.k)
            for a, b in zip(dense, sparse)
        ]
    else:
        ranked = dense if dense is not None else sparse
    elapsed = time.perf_counter() - start
    out = Path(opts.out)
    write_run(out, dict(zip(query_ids, ranked)), fmt=opts.fmt, tag=opts.tag, inputs=[opts.queries])
    meta = {
        "command": "ragdiag retrieve",
        "ragdiag_version": __version__,
        "index": str(opts.index),
        "index_meta": store.manifest["meta"],
        "queries": str(opts.queries),
        "queries_sha256": file_sha256(opts.queries),
        "mode": opts.mode,
        "k": opts.k,
        "rrf_k": opts.rrf_k if opts.mode == "hybrid" else None,
        "candidates": depth if opts.mode == "hybrid" else None,
        "n_queries": len(query_ids),
        "seconds": elapsed,
        "format": opts.fmt,
        "short_lists": sum(len(pairs) < opts.k for pairs in ranked),
    }
    write_json(out.with_name(f"{out.name}.meta.json"), stamp({"meta": meta}, record), indent=2)
    return meta
