"""Robustness sweeps over pgvector indexes, side by side with faiss on the same vectors.

Each ``pg-*`` spec becomes one scratch table (COPY + CREATE INDEX, dropped afterwards); each
operating point is measured against the same exact ground truth (faiss flat) as the faiss
points, and carries the same keys (recall, Robustness-δ@K, ``qps_batch``, ``latency_ms``,
``build_s``, ``index_bytes``) plus ``backend`` and a ``pg`` block. Batch QPS pipelines all
queries over one connection; latency is one statement per query (:mod:`ragdiag.bench.timing`).
"""

from __future__ import annotations

import os
import time

import numpy as np

from ragdiag.bench.index_sweep import SweepOptions, check_inputs, measure_point, run_sweep
from ragdiag.bench.recall import ann_recall, exact_ground_truth, exact_scores, summarise
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.index_specs import parse_index_spec
from ragdiag.retrieval.pgvector_index import PgIndex, table_name
from ragdiag.retrieval.pgvector_server import (
    Backend,
    connect,
    preflight,
    server_info,
    server_url,
    tune_embedded,
)
from ragdiag.retrieval.pgvector_specs import PgSpec, is_pg_spec, parse_pg_spec


def check_specs(specs: list[str], backend: Backend) -> tuple[list, list[PgSpec]]:
    """(faiss specs, pgvector specs), parsed before any work; a pg- spec needs a pgvector backend."""
    pg = [parse_pg_spec(s) for s in specs if is_pg_spec(s)]
    if pg and not backend.is_pgvector:
        raise RagdiagError(f"index spec '{pg[0].text}' needs a pgvector backend: add --backend pgvector:embedded "
                           "or --backend pgvector:postgresql://…")
    if pg:
        preflight(backend)
    return [parse_index_spec(s) for s in specs if not is_pg_spec(s)], pg


def run_backend_sweep(base: np.ndarray, queries: np.ndarray, specs: list[str], backend: Backend,
                      opts: SweepOptions, progress: bool = False,
                      builds: int = 1) -> tuple[list[dict], list[np.ndarray], list[np.ndarray], dict]:
    """faiss and pgvector points in the order the specs were given: (points, recalls, ids, pgvector meta)."""
    faiss_specs, pg_specs = check_specs(specs, backend)
    out_f = run_sweep(base, queries, faiss_specs, opts, progress) if faiss_specs else ([], [], [])
    for point in out_f[0]:
        point["backend"] = "faiss"
    out_p, meta = (run_pg_sweep(base, queries, pg_specs, backend, opts, progress, builds) if pg_specs
                   else (([], [], []), {}))
    sizes = {"f": iter([len(s.operating_points()) for s in faiss_specs]), "p": iter([len(s.operating_points()) for s in pg_specs])}
    sources, cursor = {"f": out_f, "p": out_p}, {"f": 0, "p": 0}
    merged: tuple[list, list, list] = ([], [], [])
    for text in specs:  # back to the order the user gave
        side = "p" if is_pg_spec(text) else "f"
        n_points = next(sizes[side])
        for part, source in zip(merged, sources[side]):
            part.extend(source[cursor[side]: cursor[side] + n_points])
        cursor[side] += n_points
    return merged[0], merged[1], merged[2], meta


def run_pg_sweep(base: np.ndarray, queries: np.ndarray, specs: list[PgSpec], backend: Backend,
                 opts: SweepOptions, progress: bool = False, builds: int = 1) -> tuple[tuple[list, list, list], dict]:
    """((points, recalls, ids), pgvector meta) for prepared vectors, one scratch table per spec.

    pgvector draws IVFFlat's k-means sample and start and HNSW's levels from the server's own
    random state, which no SQL setting seeds (``setseed()`` seeds ``random()`` only), so two builds
    differ. With ``builds`` > 1 each pg-ivfflat / pg-hnsw index is rebuilt that many times: the
    point keeps the first build's numbers (timings, per-query rows) and adds a ``builds`` block with
    every build's recall, Robustness-δ and zero-recall count and their mean and SD."""
    from ragdiag.io.progress import progress_reporter

    check_inputs(base, queries, opts.k)
    truth = exact_ground_truth(base, queries, opts.k, opts.metric)
    points: list[dict] = []
    recalls: list[np.ndarray] = []
    all_ids: list[np.ndarray] = []
    with server_url(backend) as (url, shown):
        conn = connect(url, shown)
        try:
            tune_embedded(conn, backend)
            meta = {"backend": backend.describe(), "server": server_info(conn)}
            total = sum(len(s.operating_points()) for s in specs)
            with progress_reporter("pgvector sweep (operating points)", total, enabled=progress) as bar:
                for number, spec in enumerate(specs):
                    index = PgIndex(conn, shown, table_name(f"rb_{os.getpid()}_{number}_{spec.kind}"), opts.metric,
                                    spec, *base.shape)
                    first = len(points)
                    try:
                        index.create(base)
                        sizes = index.sizes()
                        for params in spec.operating_points():
                            point, recall, ids = _measure(index, base, queries, params, truth, opts)
                            point["index_bytes"] = sizes["index_bytes"] if spec.kind != "pg-exact" else sizes["table_bytes"]
                            point["pg"] = {**point["pg"], **sizes, **{k: round(v, 6) for k, v in index.timings.items()}}
                            points.append(point)
                            recalls.append(recall)
                            all_ids.append(ids)
                            bar.advance()
                    finally:
                        index.drop()
                    if builds > 1 and spec.kind != "pg-exact":  # pg-exact has no index: nothing random
                        again = [_rebuild(conn, shown, spec, number, b, base, queries, truth, opts)
                                 for b in range(1, builds)]
                        for i, point in enumerate(points[first:]):
                            point["builds"] = build_spread([_summary(point)] + [summaries[i] for summaries in again])
        finally:
            conn.close()
    return (points, recalls, all_ids), meta


def _summary(point: dict) -> dict:
    return {"recall_mean": point["recall_mean"], "zero_recall_queries": point["zero_recall_queries"],
            "robustness": point["robustness"]}


def _rebuild(conn, shown: str, spec: PgSpec, number: int, build: int, base: np.ndarray, queries: np.ndarray,
             truth, opts: SweepOptions) -> list[dict]:
    """One more build of ``spec``: recall, zero-recall count and Robustness-δ at every operating point."""
    index = PgIndex(conn, shown, table_name(f"rb_{os.getpid()}_{number}_{build}_{spec.kind}"), opts.metric, spec,
                    *base.shape)
    out = []
    try:
        index.create(base)
        for params in spec.operating_points():
            index.set_search_params(params)
            _, ids = index.search(queries, opts.k)
            returned = exact_scores(base, queries, ids, opts.metric) if opts.tie_aware else None
            recall = ann_recall(ids, truth[1], tie_aware=opts.tie_aware, returned_scores=returned,
                                true_scores=truth[0], metric=opts.metric)
            out.append(_summary(summarise(recall, opts.k, opts.deltas)))
    finally:
        index.drop()
    return out


def build_spread(summaries: list[dict]) -> dict:
    """Every build's recall, zero-recall count and Robustness-δ, with mean and SD (ddof 1) over builds."""
    def stats(values: list[float]) -> dict:
        array = np.asarray(values, dtype=float)
        return {"values": values, "mean": float(array.mean()), "sd": float(array.std(ddof=1)) if len(array) > 1 else 0.0}

    return {"n": len(summaries),
            "recall_mean": stats([s["recall_mean"] for s in summaries]),
            "zero_recall_queries": stats([s["zero_recall_queries"] for s in summaries]),
            "robustness": {d: stats([s["robustness"][d] for s in summaries]) for d in summaries[0]["robustness"]}}


def _measure(index: PgIndex, base, queries, params: dict, truth, opts: SweepOptions):
    index.set_search_params(params)
    first_pass: dict[str, float] = {}

    def timed_search():
        start = time.perf_counter()
        found = index.search(queries, opts.k)
        first_pass["s"] = time.perf_counter() - start
        return found

    point, recall, ids = measure_point(index, timed_search, base, queries, index.spec, params, truth, opts)
    point = {"backend": "pgvector", **point, "build_s": sum(index.timings.values()), "index_bytes": None, "threads": None,
             "pg": {"table": index.table, "settings": index.spec.settings(params), "connections": 1,
                    "short_results": int((ids < 0).any(axis=1).sum()), "first_pass_s": round(first_pass["s"], 6)}}
    return point, recall, ids
