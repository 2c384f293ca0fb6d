"""``ragdiag robustness``: Robustness-δ@K beside average recall and speed, for vector indexes
(against exact search) or for a retrieval run (against relevance labels).

Result: ``{"meta": {...}, "points": [...]}``; optional per-query JSONL rows
``{"point": i, "query": j, "recall": r, "ids": [...]}`` that reproduce every reported mean and
fraction, and PNG plots.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragdiag import __version__
from ragdiag.bench.recall import DEFAULT_DELTAS, summarise
from ragdiag.bench.sweep import SweepOptions
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.beir import file_sha256, load_corpus, load_qrels, load_queries, load_run
from ragdiag.retrieval.indexes import check_metric, prepare_vectors


@dataclass
class RobustnessOptions:
    k: int = 10
    metric: str = "ip"
    index: list[str] = field(default_factory=lambda: ["flat"])
    deltas: tuple[float, ...] = DEFAULT_DELTAS
    base: Path | None = None
    queries: Path | None = None
    corpus: Path | None = None
    query_texts: Path | None = None
    embedder: str = "local"
    run: Path | None = None
    qrels: Path | None = None
    tie_aware: bool = False
    latency_queries: int | None = 1000
    repeats: int = 3
    seed: int = 0
    threads: int | None = None
    cache_dir: Path | None = None
    base_url: str | None = None
    backend: str = "faiss"  # or pgvector:postgresql://… / pgvector:embedded[:DIR] (pg-* specs)


def _load_npy(path: Path, flag: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise RagdiagError(f"{flag} {path}: file not found") from None
    except (ValueError, OSError) as err:
        raise RagdiagError(f"{flag} {path}: not a readable .npy array ({err})") from None


def _vectors(opts: RobustnessOptions, progress: bool) -> tuple[np.ndarray, np.ndarray, dict]:
    """Base and query vectors, from .npy files or embedded texts, and their provenance."""
    if opts.base and opts.queries:
        base = prepare_vectors(_load_npy(opts.base, "--base"), opts.metric, f"--base {opts.base}")
        queries = prepare_vectors(_load_npy(opts.queries, "--queries"), opts.metric, f"--queries {opts.queries}")
        files = {"base": str(opts.base), "base_sha256": file_sha256(opts.base),
                 "queries": str(opts.queries), "queries_sha256": file_sha256(opts.queries)}
        return base, queries, files
    if opts.corpus and opts.query_texts:
        from ragdiag.retrieval.embedders import load_embedder

        embedder = load_embedder(opts.embedder, opts.cache_dir, base_url=opts.base_url)
        _, docs = load_corpus(opts.corpus)
        _, texts = load_queries(opts.query_texts)
        base = prepare_vectors(embedder.encode(docs, progress=progress), opts.metric, f"embeddings of {opts.corpus}")
        queries = prepare_vectors(embedder.encode(texts, progress=progress), opts.metric, "query embeddings")
        files = {"corpus": str(opts.corpus), "corpus_sha256": file_sha256(opts.corpus),
                 "query_texts": str(opts.query_texts), "query_texts_sha256": file_sha256(opts.query_texts),
                 "embedder": embedder.identity}
        return base, queries, files
    raise RagdiagError("give --base and --queries (.npy), or --corpus and --query-texts (with --embedder), "
                       "or --run and --qrels")


def _labelled(opts: RobustnessOptions) -> tuple[list[dict], list[dict], dict]:
    """One point for a run against qrels: R_i = n_i / Np_i over queries with a relevant passage."""
    run, qrels = load_run(opts.run), load_qrels(opts.qrels)
    judged = {q: {d for d, s in rels.items() if s > 0} for q, rels in qrels.items()}
    judged = {q: rel for q, rel in judged.items() if rel}
    if not judged:
        raise RagdiagError(f"{opts.qrels}: no query has a relevant passage (score > 0)")
    query_ids = sorted(judged)
    recalls, rows = [], []
    for j, query_id in enumerate(query_ids):
        ids = run.get(query_id, [])[: opts.k]
        recall = sum(d in judged[query_id] for d in ids) / len(judged[query_id])
        recalls.append(recall)
        rows.append({"point": 0, "query": j, "query_id": query_id, "recall": recall, "ids": ids})
    point = {"index": "run", "spec": str(opts.run), "params": {}, **summarise(np.asarray(recalls), opts.k, opts.deltas),
             "recall_kind": "labelled (n/Np)", "qps_batch": None, "latency_ms": None, "build_s": None,
             "index_bytes": None, "threads": None}
    files = {"run": str(opts.run), "run_sha256": file_sha256(opts.run), "qrels": str(opts.qrels),
             "qrels_sha256": file_sha256(opts.qrels),
             "queries_missing_from_run": sum(q not in run for q in query_ids)}
    return [point], rows, files


def run_robustness(opts: RobustnessOptions, progress: bool = False) -> tuple[dict, list[dict]]:
    """(result ``{"meta", "points"}``, per-query rows) for the inputs in ``opts``."""
    check_metric(opts.metric)
    if opts.k <= 0:
        raise RagdiagError(f"--k must be positive, got {opts.k}")
    if opts.run or opts.qrels:
        if not (opts.run and opts.qrels):
            raise RagdiagError("--run and --qrels go together")
        points, rows, files = _labelled(opts)
        mode, shape = "labelled", {}
    else:
        from ragdiag.retrieval.pgvector_server import parse_backend
        from ragdiag.retrieval.pgvector_sweep import check_specs, run_backend_sweep

        backend = parse_backend(opts.backend)
        check_specs(opts.index, backend)
        if opts.threads is not None:
            if opts.threads <= 0:
                raise RagdiagError(f"--threads must be positive, got {opts.threads}")
            import faiss

            faiss.omp_set_num_threads(opts.threads)
        base, queries, files = _vectors(opts, progress)
        sweep = SweepOptions(opts.k, opts.metric, opts.deltas, opts.tie_aware, opts.latency_queries, opts.repeats, opts.seed)
        points, recalls, ids, pg_meta = run_backend_sweep(base, queries, opts.index, backend, sweep, progress)
        rows = [{"point": i, "query": j, "recall": float(r), "ids": [int(x) for x in ids[i][j]]}
                for i in range(len(points)) for j, r in enumerate(recalls[i])]
        import faiss

        mode, shape = "ann", {"n_base": int(base.shape[0]), "n_queries": int(queries.shape[0]),
                              "dim": int(base.shape[1]), "faiss_version": faiss.__version__,
                              "backend": backend.describe(), **({"pgvector": pg_meta} if pg_meta else {})}
    meta = {
        "command": "ragdiag robustness",
        "ragdiag_version": __version__,
        "mode": mode,
        "ground_truth": "relevance labels (qrels)" if mode == "labelled" else "exact search (faiss flat)",
        "recall": "labelled n/Np" if mode == "labelled" else ("tie-aware (rtol 1e-6)" if opts.tie_aware else "plain"),
        "k": opts.k,
        "metric": opts.metric,
        "deltas": list(opts.deltas),
        "seed": opts.seed,
        "index_specs": opts.index if mode == "ann" else [],
        **shape,
        **files,
    }
    return {"meta": meta, "points": points}, rows


def write_outputs(result: dict, rows: list[dict], out: Path | None, per_query: Path | None) -> None:
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=2))
    if per_query:
        Path(per_query).parent.mkdir(parents=True, exist_ok=True)
        with open(per_query, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
