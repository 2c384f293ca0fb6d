"""The one (n)DCG of ragdiag (Järvelin & Kekäläinen 2002), for every command that ranks passages.

DCG@K(g) = Σ_{i=0}^{K−1} g_i / log2(i + 2), summed left to right (numpy ``cumsum``), each term a
division — the order and operations of trec_eval's ``ndcg_cut`` (so graded gains carry trec_eval's
bits) and of paper 003's per-sample loop (for 0/1 gains ``1 / log2`` is the same float either way).
nDCG@K = DCG@K(gains) / DCG@K(ideal gains), 0 when the ideal is 0. Who passes which ideal:

- ``correlate`` (:func:`ragdiag.measures.sample.ndcg`): 0/1 gains, ideal = the n retrieved positives
  first (docs/methods.md#2-per-sample-measures);
- ``evaluate`` (:func:`ragdiag.measures.standard.ndcg_values`): gain = grade − 1, ideal = the judged
  gains sorted, as trec_eval / ir_measures ``nDCG@K``;
- ``robustness --match-recall`` (:mod:`ragdiag.bench.matched_recall`): 0/1 against the exact top-K,
  ideal = K ones.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
_ROWS = 1 << 18  # row blocks: the float64 temporaries stay small on 10M rows


def discounts(width: int) -> FloatArray:
    """1 / log2(i + 2) for i = 0 … width − 1."""
    out: FloatArray = 1.0 / np.log2(np.arange(width) + 2.0)
    return out


def dcg_columns(gains: npt.ArrayLike) -> FloatArray:
    """Row-wise DCG at every cut-off: column j holds DCG@(j+1) of the row."""
    matrix = np.asarray(gains, dtype=np.float64)
    if matrix.ndim != 2:
        matrix = matrix.reshape(1, -1)
    logs = np.log2(np.arange(matrix.shape[1]) + 2.0)
    out: FloatArray = np.cumsum(matrix / logs, axis=1)
    return out


def dcg(gains: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    """DCG@k_r of each row r of a (zero-padded) gain matrix; k_r = 0 gives 0."""
    matrix = np.asarray(gains)
    ks = np.asarray(k, dtype=np.int64)
    out: FloatArray = np.zeros(len(ks))
    if matrix.ndim != 2 or not matrix.shape[1]:
        return out
    for start in range(0, len(ks), _ROWS):
        block = slice(start, start + _ROWS)
        sums = dcg_columns(matrix[block])
        cut = ks[block]
        picked = sums[np.arange(sums.shape[0]), np.clip(cut - 1, 0, sums.shape[1] - 1)]
        out[block] = np.where(cut > 0, picked, 0.0)
    return out


def ndcg(gains: npt.ArrayLike, k: npt.ArrayLike, ideal: npt.ArrayLike) -> FloatArray:
    """nDCG@k_r = DCG@k_r(gains_r) / ideal_r per row, 0 where ideal_r = 0 (``ideal`` = DCG@k of the ideal order)."""
    best = np.asarray(ideal, dtype=np.float64)
    got = dcg(gains, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(best > 0, got / np.where(best > 0, best, 1.0), 0.0)
    return out


def ones_ideal(count: npt.ArrayLike, width: int) -> FloatArray:
    """DCG of ``count`` ones at the top (``count`` ≤ ``width``): the ideal of a 0/1 ranking with that many positives."""
    by_count = np.concatenate([[0.0], dcg_columns(np.ones((1, width)))[0]])
    out: FloatArray = by_count[np.asarray(count, dtype=np.int64)]
    return out
