"""Per-sample retrieval measures of docs/methods.md#2-per-sample-measures (paper 003, eqs. 1–4), vectorised.

Arguments are numpy arrays of the small integers that describe a graded sample:
``n`` positives in the top K, ``k`` = K, ``np_`` = Np (total positives), ``s`` = positives in the
top round(x·K) of the same ranking (the estimate of Np used by E). ``a`` broadcasts: pass a
column ``a[:, None]`` to evaluate a whole α grid at once. The expressions are written exactly as
the paper's released analysis evaluates them in float64, so the values carry the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ragdiag.measures import dcg

FloatArray = npt.NDArray[np.float64]
Array = npt.NDArray[Any]  # small integers per row (any numeric dtype)

E_EPSILON = 1e-10


def precision(n: Array, k: Array) -> Array:
    """P = n / K."""
    out: FloatArray = n / k
    return out


def recall(n: Array, np_: Array) -> Array:
    """R = n / Np."""
    out: FloatArray = n / np_
    return out


def f_measure(n: Array, k: Array, np_: Array, a: float | Array) -> Array:
    """F(a) = n / (a·K + (1−a)·Np): Van Rijsbergen's F with a = 1/(1+β²); a = 0.5 is F1."""
    out: FloatArray = n / (a * k + (1 - a) * np_)
    return out


def e_measure(n: Array, k: Array, s: Array, a: float | Array) -> Array:
    """E(a) = n / (a·K + (1−a)·(S + 1e-10)): F with Np estimated by S, the positives in the top x·K."""
    out: FloatArray = n / (a * k + (1 - a) * (s + E_EPSILON))
    return out


def t_measure(n: Array, k: Array, a: float | Array) -> Array:
    """T(a) = (1−a)·n − a·nn/K with nn = K − n (paper 003, eq. 3; needs no Np)."""
    nn = k - n
    out: FloatArray = ((1 - a) * n) - ((a * nn) / k)
    return out


def t_prime_measure(n: Array, k: Array, a: float | Array) -> Array:
    """T′(a) = (1−a)·n − a·nn with nn = K − n (paper 003, eq. 4): T without the 1/K on the negatives."""
    nn = k - n
    out: FloatArray = ((1 - a) * n) - (a * nn)
    return out


def ndcg_column(ndcg_values: Array) -> Array:
    """nDCG@K per row: the row column ``ndcg`` (:func:`ndcg` of the row's inK, computed once per table)."""
    return ndcg_values


def ndcg(in_k: npt.ArrayLike, k: npt.ArrayLike, n: npt.ArrayLike) -> FloatArray:
    """nDCG per row of a zero-padded 0/1 inK matrix: DCG(inK) / DCG(n ones at the top), 0 when n = 0.

    The one DCG (:mod:`ragdiag.measures.dcg`), summed left to right (the order the paper's per-sample
    loop uses, so the floats carry the same bits). The ideal uses the n retrieved positives, not
    min(Np, K) (docs/methods.md#2-per-sample-measures). ``k`` = K per row, ``n`` = positives in the top K (Σ inK).
    """
    matrix = np.asarray(in_k)
    counts = np.asarray(n, dtype=np.int64)
    ks = np.asarray(k, dtype=np.int64)
    width = matrix.shape[1] if matrix.ndim == 2 else 0
    if not width:
        return np.zeros(len(ks))
    distinct = _distinct_patterns(matrix, ks, counts)
    if distinct is None:
        return dcg.ndcg(matrix, ks, dcg.ones_ideal(np.minimum(counts, width), width))
    rep, of_row = distinct  # rows with the same (inK, K, n) have the same nDCG: computed once
    out: FloatArray = dcg.ndcg(matrix[rep], ks[rep], dcg.ones_ideal(np.minimum(counts[rep], width), width))[of_row]
    return out


def _distinct_patterns(matrix: Array, k: Array, n: Array) -> tuple[Array, Array] | None:
    """(the first row of each distinct (inK row, K, n), the index of each row's among them) of a 0/1 inK
    matrix, through one integer key per row (the inK bits, then K and n); None when the matrix is not
    0/1 or the key would not fit in 63 bits."""
    width = matrix.shape[1]
    if not len(matrix) or matrix.dtype.kind not in "bui" or matrix.min() < 0 or matrix.max() > 1:
        return None
    k_span, n_span = int(k.max()) + 1, int(n.max()) + 1
    if k.min() < 0 or n.min() < 0 or width + (k_span * n_span).bit_length() > 62:
        return None
    key = np.zeros(len(matrix), dtype=np.int64)
    for column in matrix.T:
        key = (key << 1) | column
    _, first, of_row = np.unique((key * k_span + k) * n_span + n, return_index=True, return_inverse=True)
    return first, of_row.ravel()


def recall_indicator(n: Array, np_: Array, delta: float) -> Array:
    """1 where recall R = n/Np ≥ δ, else 0 (the per-query term of Robustness-δ@K)."""
    return (recall(n, np_) >= delta - 1e-12).astype(np.int64)


def robustness_at_k(per_query_recall: npt.ArrayLike, delta: float) -> float:
    """Robustness-δ@K = fraction of queries whose recall R_i ≥ δ (paper 000, §3).

    A recall within 1e-12 below δ counts as reaching it (recalls are ratios of small integers).
    """
    values = np.asarray(per_query_recall, dtype=np.float64)
    return float(np.mean(values >= delta - 1e-12)) if values.size else float("nan")
