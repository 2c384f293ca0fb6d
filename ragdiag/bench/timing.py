"""Search timing as careful ANN benchmarks do it (docs/methods.md#5-index-benchmark-methodology, note 002 with its fixes).

Warm-up queries are not timed; batch QPS (all queries in one call, median of repeats) is
measured separately from single-query latency (one query per call, p50/p95/p99);
QPS = n_queries / wall seconds of one batch call.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from ragdiag.retrieval.indexes import search


def batch_qps(index, queries: np.ndarray, k: int, repeats: int = 3, warmup: int = 32) -> dict:
    """Median and spread of n_queries / seconds for one batch search call."""
    search(index, queries[: max(1, min(warmup, len(queries)))], k)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        search(index, queries, k)
        rates.append(len(queries) / (time.perf_counter() - start))
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates), "repeats": repeats}


def single_query_latency(index, queries: np.ndarray, k: int, n: int | None = None, warmup: int = 32) -> dict:
    """p50/p95/p99 milliseconds of one-query searches over the first ``n`` queries, after warm-up."""
    sample = queries if n is None else queries[:n]
    for row in queries[: min(warmup, len(queries))]:
        search(index, row[None, :], k)
    times = np.empty(len(sample))
    for i in range(len(sample)):
        row = sample[i : i + 1]
        start = time.perf_counter()
        search(index, row, k)
        times[i] = time.perf_counter() - start
    p50, p95, p99 = np.percentile(times * 1000.0, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99), "n": int(len(sample))}
