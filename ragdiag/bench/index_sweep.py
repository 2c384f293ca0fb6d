"""Index sweeps: build each spec once, then measure every operating point against exact search.

Each point (one index, one combination of search-parameter values) carries recall and
Robustness-δ@K (:mod:`ragdiag.bench.recall`), batch QPS and single-query latency
(:mod:`ragdiag.bench.timing`), build seconds, serialized index bytes and threads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from ragdiag.bench.recall import ann_recall, exact_ground_truth, exact_scores, summarise
from ragdiag.bench.timing import batch_qps, single_query_latency
from ragdiag.errors import RagdiagError
from ragdiag.io.progress import progress_reporter
from ragdiag.retrieval.index_specs import IndexSpec, check_index_params, check_refine
from ragdiag.retrieval.indexes import (
    build_index,
    index_bytes,
    search,
    set_search_params,
)


@dataclass
class SweepOptions:
    k: int = 10
    metric: str = "ip"
    deltas: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
    tie_aware: bool = False
    latency_queries: int | None = 1000
    repeats: int = 3
    seed: int = 0


def check_inputs(base: np.ndarray, queries: np.ndarray, k: int) -> None:
    """Dimension and size checks shared by every sweep (one clear line each)."""
    if queries.shape[1] != base.shape[1]:
        raise RagdiagError(f"dimension mismatch: base vectors have dim {base.shape[1]}, queries have dim {queries.shape[1]}")
    if k <= 0:
        raise RagdiagError(f"k must be positive, got {k}")
    if k > base.shape[0]:
        raise RagdiagError(f"k={k} is larger than the base ({base.shape[0]} vectors)")


def measure_point(index, search_fn: Callable[[], tuple[np.ndarray, np.ndarray]], base: np.ndarray,
                  queries: np.ndarray, spec, params: dict, truth: tuple[np.ndarray, np.ndarray],
                  opts: SweepOptions) -> tuple[dict, np.ndarray, np.ndarray]:
    """One operating point of any backend: search once (``search_fn`` → (scores, ids)), then the keys
    every point carries — recall and Robustness-δ@K against the exact ``truth`` (scores, ids), batch
    QPS and single-query latency (``index`` answers the :mod:`ragdiag.bench.timing` calls)."""
    true_scores, true_ids = truth
    _, ids = search_fn()
    returned = exact_scores(base, queries, ids, opts.metric) if opts.tie_aware else None
    recall = ann_recall(ids, true_ids, tie_aware=opts.tie_aware, returned_scores=returned,
                        true_scores=true_scores, metric=opts.metric)
    point = {
        "index": spec.kind,
        "spec": spec.text,
        "params": {**spec.build, **params},
        **summarise(recall, opts.k, opts.deltas),
        "recall_kind": "tie-aware" if opts.tie_aware else "plain",
        "qps_batch": batch_qps(index, queries, opts.k, repeats=opts.repeats),
        "latency_ms": single_query_latency(index, queries, opts.k, n=opts.latency_queries),
    }
    return point, recall, ids


def run_sweep(
    base: np.ndarray, queries: np.ndarray, specs: list[IndexSpec], opts: SweepOptions, progress: bool = False
) -> tuple[list[dict], list[np.ndarray], list[np.ndarray]]:
    """(points, per-point recall arrays, per-point returned ids) for prepared vectors."""
    import faiss

    check_inputs(base, queries, opts.k)
    for spec in specs:
        check_refine(spec, opts.k)
        check_index_params(spec, *base.shape)
    truth = exact_ground_truth(base, queries, opts.k, opts.metric)
    points, recalls, all_ids = [], [], []
    total = sum(len(s.operating_points()) for s in specs)
    with progress_reporter("index sweep (operating points)", total, enabled=progress) as bar:
        for spec in specs:
            start = time.perf_counter()
            index = build_index(spec, base, opts.metric, seed=opts.seed)
            build_s = time.perf_counter() - start
            size = index_bytes(index)
            for params in spec.operating_points():
                set_search_params(index, params, k=opts.k)
                point, recall, ids = measure_point(
                    index, partial(search, index, queries, opts.k), base, queries, spec, params, truth, opts)
                point.update(build_s=build_s, index_bytes=size, threads=faiss.omp_get_max_threads())
                points.append(point)
                recalls.append(recall)
                all_ids.append(ids)
                bar.advance()
    return points, recalls, all_ids
