"""``ragdiag retrieve``: dense, BM25 or hybrid (RRF) top-k for each query of a BEIR queries file.

Writes ``run.jsonl`` (one line per query: ``query_id``, ``ids``, ``scores``) and
``run.jsonl.meta.json`` (how it was made).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.beir import file_sha256, load_queries
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


def _dense(store, texts, k, opts, progress):
    vectors = store.embed_queries(texts, opts.cache_dir, opts.base_url, progress)
    scores, rows = search(store.dense(), vectors, k)
    return [[(store.doc_ids[r], float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows, scores)]


def _bm25(store, texts, k):
    bm25 = store.bm25()
    lists = []
    for text in texts:
        rows, scores = bm25.top_k(text, k)
        lists.append([(store.doc_ids[r], float(s)) for r, s in zip(rows, scores)])
    return lists


def retrieve(opts: RetrieveOptions, progress: bool = False) -> dict:
    """Rank the corpus for every query; write the run and its meta; return the meta."""
    if opts.mode not in MODES:
        raise RagdiagError(f"unknown mode '{opts.mode}': expected dense, bm25 or hybrid")
    if opts.k <= 0:
        raise RagdiagError(f"k must be positive, got {opts.k}")
    store = open_index_dir(opts.index)
    n_docs = len(store.doc_ids)
    if opts.k > n_docs:
        raise RagdiagError(f"k={opts.k} is larger than the {n_docs} passages in {opts.index}")
    query_ids, texts = load_queries(opts.queries)
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
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        for query_id, pairs in zip(query_ids, ranked):
            row = {"query_id": query_id, "ids": [d for d, _ in pairs], "scores": [s for _, s in pairs]}
            handle.write(json.dumps(row) + "\n")
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
    }
    Path(f"{out}.meta.json").write_text(json.dumps({"meta": meta}, indent=2))
    return meta
