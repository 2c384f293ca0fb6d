"""A synthetic graded table of any size, written straight to Parquet (columnar, no per-row objects).

The score and grade model of :func:`tools.synthetic.synthetic_graded` (positives scored N(μ_E, 1),
negatives N(0, 1); grade a noisy function of the top K), vectorised over queries so that tens of
millions of rows are generated in blocks. Not data about any real system; for benchmarks only.
Answer columns hold empty strings (correlate never reads them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tools.synthetic import DEFAULT_CONFIGS

EMBEDDERS = ("AM", "EM", "ES", "QM")


def rows_per_query(configs=DEFAULT_CONFIGS, embedders=EMBEDDERS) -> int:
    return sum(len(list(ks)) for _, _, _, ks in configs) * len(embedders)


def _block(pa, subset: str, nc: int, np_: int, ks: list[int], emb: str, quality: float, queries: range,
           rng: np.random.Generator):
    """Rows of one (config, embedder) for ``queries``, K-major within each query."""
    n_q = len(queries)
    scores = rng.normal(0.0, 1.0, size=(n_q, nc))
    scores[:, :np_] += quality
    ranks = np.argsort(-scores, axis=1, kind="stable")
    flags = (ranks < np_).astype(np.int64)
    cum = np.cumsum(flags, axis=1)
    ks_arr = np.asarray(ks)
    q_idx = np.repeat(np.arange(n_q), len(ks))
    k = np.tile(ks_arr, n_q)
    n = cum[q_idx, k - 1]
    noise = rng.normal(0.0, 0.7, size=len(k))
    latent = 1.0 + 3.2 * n / np_ - 1.2 * (k - n) / k + 0.6 * flags[q_idx, 0] + noise
    grade = np.clip(np.rint(latent), 1, 5)
    offsets = np.concatenate([[0], np.cumsum(k)])
    within = np.arange(offsets[-1]) - np.repeat(offsets[:-1], k)
    rows_of_item = np.repeat(q_idx, k)
    rank_values = ranks[rows_of_item, within]
    ink_values = flags[rows_of_item, within]
    names = pa.array([f"{subset}-{q}" for q in queries])
    ids = names.take(pa.array(q_idx))
    length = len(k)
    empty = pa.array([""]).take(pa.array(np.zeros(length, dtype=np.int64)))
    return pa.table({
        "id": ids, "E": pa.array([emb]).take(pa.array(np.zeros(length, dtype=np.int64))),
        "Nc": pa.array(np.full(length, nc, dtype=np.int64)), "Np": pa.array(np.full(length, np_, dtype=np.int64)),
        "K": pa.array(k.astype(np.int64)),
        "rank": pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(rank_values.astype(np.int64))),
        "inK": pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(ink_values.astype(np.int64))),
        "answer_ideal": empty, "answer_topK": empty, "grade": pa.array(grade.astype(np.float64)),
        "P": pa.array(n / k), "R": pa.array(n / np_),
    })


def write_synthetic_parquet(path: Path, rows: int, seed: int = 0, block_queries: int = 20_000) -> int:
    """Write about ``rows`` graded rows (whole queries; returns the exact count) to ``path``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n_queries = max(1, round(rows / rows_per_query()))
    rng = np.random.default_rng(seed)
    quality = {e: 1.0 + 0.4 * i for i, e in enumerate(EMBEDDERS)}
    written = 0
    writer = None
    try:
        for subset, nc, np_, k_values in DEFAULT_CONFIGS:
            for emb in EMBEDDERS:
                for start in range(0, n_queries, block_queries):
                    table = _block(pa, subset, nc, np_, list(k_values), emb, quality[emb],
                                   range(start, min(n_queries, start + block_queries)), rng)
                    if writer is None:
                        writer = pq.ParquetWriter(path, table.schema)
                    writer.write_table(table)
                    written += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    return written
